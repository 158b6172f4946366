@testable import AIFNetworking
@testable import AIFServices
@testable import TestSupport
import Foundation
import Logging
import Testing
@_spi(CrossModule) import AIFTransport

/// Loads against a server that processes a request on a reused connection and then closes it
/// without answering (a charge made, its answer lost): a load that is not safe to repeat reaches
/// the server once and fails saying its response was lost; one that is safe to repeat is sent
/// again, and every send is counted — in the load's attempts, its observers and its log.
@Suite("Lost responses: a load not safe to repeat is sent once, and every send counted")
struct LostResponseTests {
    struct Answer: Decodable, Sendable, Equatable {
        var ok: Int
    }

    /// A server that loses the answer to each connection's second request, a service of it
    /// (unsigned; idempotency keys in `Idempotency-Key`; retries as `retry` says), and a proxy
    /// whose transport keeps one connection to it, opened by a first load the server answers.
    struct Stack {
        let server: RawServer
        let transport: CurlTransport
        let proxy: APIProxy
        let registry: ServiceRegistry
        let observed: AttemptRecorder
        let log: Locked<[(Logger.Level, String)]>

        static func make(retry: String = #"{"idempotencyKeyHeader": "Idempotency-Key", "baseDelaySeconds": 0.01}"#) async throws -> Stack {
            let server = try RawServer(.loseAnswer(afterAnswering: 1))
            let registry = ServiceRegistry(processEnvironment: [:])
            let json = """
                {"name": "payments", "signing": {"scheme": "none"}, "retry": \(retry),
                 "environments": {"online": {"baseURL": "http://127.0.0.1:\(server.port)"}}}
                """
            registry.register(try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "/tmp/aif-tests/payments.json", environment: [:]))
            let transport = makeTransport { $0.connectionPool.maxConnectionsPerHost = 1 }
            let observed = AttemptRecorder()
            let log = Locked<[(Logger.Level, String)]>([])
            var logger = Logger(label: "lost-responses") { _ in CapturingLogHandler(messages: log) }
            logger.logLevel = .info
            let proxy = APIProxy(transport: transport, logger: logger, recorder: nil, observers: [observed])
            let stack = Stack(server: server, transport: transport, proxy: proxy, registry: registry, observed: observed, log: log)
            let warm = try await stack.manager("warm").load()
            #expect(warm.content == Answer(ok: 1))
            return stack
        }

        func manager(_ path: String, method: HTTPMethod = .get) -> APIManager<Answer> {
            APIManager(Endpoint<Answer>(service: "payments", path: path, method: method), proxy: proxy, registry: registry, cache: ResponseCache())
        }

        /// The requests the server read whole to `path`, as `METHOD PATH BODY`.
        func processed(_ path: String) -> [String] {
            server.processedRequests.filter { $0.split(separator: " ").dropFirst().first == Substring("/\(path)") }
        }

        func stop() {
            transport.shutdown()
            server.stop()
        }
    }

    /// Hears every attempt's resends and every load's count of sends.
    final class AttemptRecorder: APIProxy.LoadObserver, APIProxy.LoadObservation {
        let resends = Locked<[Int]>([])
        let attempts = Locked<[Int]>([])
        func observation(of load: ObservedLoad) -> (any APIProxy.LoadObservation)? { self }
        func attemptDidEnd(_ attempt: ObservedLoad.Attempt) { resends.withLock { $0.append(attempt.resends) } }
        func loadDidEnd(_ outcome: ObservedLoad.Outcome) { attempts.withLock { $0.append(outcome.attempts) } }
    }

    @Test func aPostWhoseAnswerIsLostFailsOnceAndReachesTheServerOnce() async throws {
        let stack = try await Stack.make()
        defer { stack.stop() }
        let error = await #expect(throws: APIError.self) {
            try await stack.manager("charges", method: .post).load(["amount": 100])
        }
        #expect(error?.kind == .responseLost)
        #expect(error?.kind.identifier == "response_lost")
        #expect(error?.attempts == 1)
        #expect(error?.message.contains("may have processed it") == true, "\(String(describing: error))")
        #expect((error?.underlyingError as? TransportError)?.code == .responseLost)
        #expect(stack.processed("charges").count == 1, "\(stack.server.processedRequests)")
        #expect(stack.log.withLock { $0 }.contains { $0.1.contains("no retry") && $0.1.contains("POST is not retried") })
        #expect(stack.observed.attempts.withLock { $0 } == [1, 1])
    }

    @Test func theDelegateFaceHearsOfTheLostAnswerOnce() async throws {
        let stack = try await Stack.make()
        defer { stack.stop() }
        let (deliveries, delivered) = AsyncStream<Void>.makeStream()
        let recorder = Recorder(onDelivery: { delivered.yield() })
        let manager = stack.manager("charges", method: .post)
        manager.delegate = recorder
        manager.callbackExecutor = .immediate
        let id = manager.loadData(with: ["amount": 100])
        var waiting = deliveries.makeAsyncIterator()
        await waiting.next()
        guard case .failure(let error)? = recorder.outcome(id).first else {
            Issue.record("expected a failure for \(id), got \(recorder.outcome(id))")
            return
        }
        #expect(error.kind == .responseLost)
        #expect(error.attempts == 1)
        // A later load over a fresh connection is answered; the lost one was told once.
        #expect(try await stack.manager("after").load().content == Answer(ok: 1))
        #expect(recorder.deliveries == 1)
        #expect(stack.processed("charges").count == 1)
    }

    @Test func aGetIsSentAgainOnAFreshConnectionAndCountedEverywhere() async throws {
        let stack = try await Stack.make()
        defer { stack.stop() }
        let response = try await stack.manager("balance").load()
        #expect(response.content == Answer(ok: 1))
        #expect(response.attempts == 2, "the server may have seen it twice")
        #expect(response.metrics.resends == 1)
        #expect(stack.processed("balance").count == 2)
        #expect(stack.observed.resends.withLock { $0 } == [0, 1])
        #expect(stack.observed.attempts.withLock { $0 } == [1, 2])
        #expect(stack.log.withLock { $0 }.contains { $0.1.contains("sent 2 times") })
    }

    @Test func aPostWithItsIdempotencyKeyIsSafeToRepeat() async throws {
        let stack = try await Stack.make()
        defer { stack.stop() }
        let response = try await stack.manager("charges", method: .post).load(["amount": 100], headers: ["Idempotency-Key": "charge-1"])
        #expect(response.content == Answer(ok: 1))
        #expect(response.attempts == 2)
        #expect(response.request.isIdempotent)
        #expect(stack.processed("charges").count == 2, "sent again, the key telling the server it is the same charge")
    }

    /// The Slack trial: a policy that retries a status for POST but no error. A lost answer is
    /// a failure, which this policy does not retry: the POST reaches the server once, and the
    /// load fails `responseLost` after one attempt (it was processed twice, and told a success).
    @Test func aPolicyRetryingStatusesButNoErrorsSendsALostPostOnce() async throws {
        let stack = try await Stack.make(retry: #"{"statusCodes": [429], "errors": [], "methods": ["POST"]}"#)
        defer { stack.stop() }
        let error = await #expect(throws: APIError.self) {
            try await stack.manager("chat.postMessage", method: .post).load(["text": "hello"])
        }
        #expect(error?.kind == .responseLost)
        #expect(error?.attempts == 1)
        #expect(error?.message.contains("may have processed it") == true, "\(String(describing: error))")
        #expect(stack.processed("chat.postMessage").count == 1, "\(stack.server.processedRequests)")
        #expect(stack.observed.attempts.withLock { $0 } == [1, 1])
        #expect(stack.observed.resends.withLock { $0 } == [0, 0])
    }

    /// The same POST with a key the policy makes for the load: sent again on a fresh connection
    /// with the same key, which the server answers as a replay of the first; both sends counted.
    @Test func aPostWithAGeneratedKeyIsSentAgainWithTheSameKeyAndReplayed() async throws {
        let stack = try await Stack.make(retry: #"{"generateIdempotencyKeys": true, "baseDelaySeconds": 0.01}"#)
        defer { stack.stop() }
        let response = try await stack.manager("chat.postMessage", method: .post).load(["text": "hello"])
        #expect(response.attempts == 2)
        #expect(response.metrics.resends == 1)
        #expect(response.headers["Idempotent-Replayed"] == "true")
        #expect(stack.processed("chat.postMessage").count == 2)
        let keys = stack.server.processedKeys.compactMap { $0 }
        #expect(keys.count == 2 && keys[0] == keys[1], "\(keys)")
        #expect(stack.observed.attempts.withLock { $0 } == [1, 2])
        #expect(stack.observed.resends.withLock { $0 } == [0, 1])
    }

    @Test func aPolicyThatDoesNotRetryPutsHasThemSentOnce() async throws {
        let stack = try await Stack.make(retry: #"{"methods": ["GET"]}"#)
        defer { stack.stop() }
        let error = await #expect(throws: APIError.self) {
            try await stack.manager("orders/7", method: .put).load(["state": "paid"])
        }
        #expect(error?.kind == .responseLost)
        #expect(stack.processed("orders/7").count == 1)
    }

    @Test func aLostAnswerOfAKeyedPostIsRetriedByThePolicy() async throws {
        // Every connection loses its second answer: the transport sends the keyed POST again on
        // a fresh connection (its first request there, answered) — the policy is not needed. With
        // the server losing the answer on the fresh connection too, the policy retries.
        let server = try RawServer(.loseAnswer(afterAnswering: 0))
        defer { server.stop() }
        let registry = ServiceRegistry(processEnvironment: [:])
        let json = """
            {"name": "payments", "signing": {"scheme": "none"},
             "retry": {"idempotencyKeyHeader": "Idempotency-Key", "maxRetries": 2, "baseDelaySeconds": 0.01},
             "environments": {"online": {"baseURL": "http://127.0.0.1:\(server.port)"}}}
            """
        registry.register(try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "/tmp/aif-tests/payments.json", environment: [:]))
        let transport = makeTransport()
        defer { transport.shutdown() }
        let manager = APIManager(
            Endpoint<Answer>(service: "payments", path: "charges", method: .post), proxy: APIProxy(transport: transport, recorder: nil), registry: registry,
            cache: ResponseCache())
        let keyed = await #expect(throws: APIError.self) { try await manager.load(["amount": 1], headers: ["Idempotency-Key": "k"]) }
        #expect(keyed?.kind == .responseLost)
        #expect(keyed?.attempts == 3, "retried twice by the policy")
        let unkeyed = await #expect(throws: APIError.self) { try await manager.load(["amount": 2]) }
        #expect(unkeyed?.attempts == 1)
        #expect(server.processedRequests.count == 4)
    }
}
