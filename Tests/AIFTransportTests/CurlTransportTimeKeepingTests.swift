@_spi(CrossModule) @testable import AIFTransport
@testable import TestSupport
import AIFNetworkingTesting
import Foundation
import Hummingbird
import Testing

/// Timeouts fire when they are due, under load as when alone, and only the requests that ran out
/// of time end in one. Each transport keeps the default limit of eight connections per host, so
/// that most transfers wait for a connection: the case libcurl's own timers lose track of (see
/// `TransferDeadlines` and `HostSlots`). Every bound below is derived from a deadline the test
/// sets, never from how fast the machine is.
///
/// `make test` runs this suite on its own, after the others (the Makefile's `ALONE`): its bounds
/// are a tenth of a second, and a neighbouring suite holding both cores is not what they measure.
@Suite("CurlTransport: time kept exactly", .serialized)
struct CurlTransportTimeKeepingTests {
    /// How late after its deadline a timeout may be told, plain and under the thread sanitizer.
    static let lateness = Duration.milliseconds(100)

    private static let server = Task<LocalServer, any Error> {
        let router = Router()
        router.get("fast") { _, _ -> String in "fast" }
        // Answers late on purpose (real timeouts are what this suite tests); with `?tag=…`, tells
        // ``Arrivals`` as the request arrives.
        router.get("slow/:milliseconds") { request, context -> String in
            if let tag = request.uri.queryParameters.get("tag") { Arrivals.shared.arrived(String(tag)) }
            try await Task.sleep(for: .milliseconds(context.parameters.get("milliseconds", as: Int.self) ?? 0))
            return "slow"
        }
        router.get("fail") { _, _ -> Response in Response(status: .internalServerError) }
        return try await LocalServer.start(router: router, backlog: 1024)
    }

    private enum Kind: String {
        case fast, slow, fail, reset
    }

    /// One request's end: what it was, how long it took from the call, and how it ended.
    private struct Ending {
        let kind: Kind
        let elapsed: Duration
        let result: Result<AIFTransport.HTTPResponse, TransportError>
    }

    /// 1,200 requests, 64 at a time, on one transport: most answered at once, one in twelve
    /// answered after a second but given 300 ms in all, one in twelve answered `500`, and one in
    /// twelve reset by a server of its own. Every slow one ends in a total timeout within its
    /// deadline and the allowed lateness (counted from the call, as a caller sees it); every
    /// other one ends as its server answered, never in a timeout.
    @Test func timeoutsFireOnTimeAmongSteadyTrafficAndNoOtherRequestTimesOut() async throws {
        let server = try await Self.server.value
        let resets = try RawServer(.dropMidBody(promised: 1_000, sent: 10), backlog: 256)
        defer { resets.stop() }
        let transport = CurlTransport(configuration: .init(proxy: .none))
        defer { transport.shutdown() }
        let total = Duration.milliseconds(300)
        let requests = 1_200
        let concurrency = 64

        let endings = Locked<[Ending]>([])
        let next = Locked(0)
        let finished = AsyncStream<Void>.makeStream()
        @Sendable func sendNext() {
            let index = next.withLock { value in
                defer { value += 1 }
                return value
            }
            guard index < requests else { return }
            let kind: Kind
            let request: AIFTransport.HTTPRequest
            switch index % 12 {
            case 0:
                kind = .slow
                request = AIFTransport.HTTPRequest(url: server.url("slow/1000"), timeouts: AIFTransport.HTTPRequest.Timeouts(connect: .seconds(5), total: total))
            case 4:
                kind = .fail
                request = AIFTransport.HTTPRequest(url: server.url("fail"), timeouts: AIFTransport.HTTPRequest.Timeouts(connect: .seconds(5), total: .seconds(20)))
            case 8:
                kind = .reset
                request = AIFTransport.HTTPRequest(url: URL(string: "http://127.0.0.1:\(resets.port)/reset")!, timeouts: AIFTransport.HTTPRequest.Timeouts(connect: .seconds(5), total: .seconds(20)))
            default:
                kind = .fast
                request = AIFTransport.HTTPRequest(url: server.url("fast"))
            }
            let start = ContinuousClock.now
            transport.send(request, progress: nil) { result in
                let ending = Ending(kind: kind, elapsed: ContinuousClock.now - start, result: result)
                let count = endings.withLock { all in
                    all.append(ending)
                    return all.count
                }
                if count == requests { finished.continuation.finish() } else { sendNext() }
            }
        }
        for _ in 0..<concurrency { sendNext() }
        for await _ in finished.stream {}

        let all = endings.withLock { $0 }
        #expect(all.count == requests)
        var lateness: [Duration] = []
        for ending in all {
            switch (ending.kind, ending.result) {
            case (.slow, .failure(let error)) where error.code == .totalTimeout:
                #expect(ending.elapsed >= total, "timed out early: \(ending.elapsed) \(error)")
                lateness.append(ending.elapsed - total)
            case (.fast, .success(let response)):
                #expect(response.statusCode == 200)
            case (.fail, .success(let response)):
                #expect(response.statusCode == 500)
            case (.reset, .failure(let error)):
                #expect(error.code == .connectionDropped, "\(error)")
            default:
                Issue.record("a \(ending.kind) request ended wrongly after \(ending.elapsed): \(ending.result)")
            }
        }
        lateness.sort()
        #expect(lateness.count == requests / 12)
        let latest = try #require(lateness.last)
        #expect(latest <= Self.lateness, "timeouts told late: median \(lateness[lateness.count / 2]), latest \(latest)")
    }

    /// A request waiting for one of its host's connections (all held by answers still to come)
    /// times out at its own deadline, saying what it was waiting for — not when a connection
    /// comes free, and not as a connect timeout.
    @Test func aRequestWaitingForAConnectionTimesOutAtItsDeadline() async throws {
        let server = try await Self.server.value
        var configuration = CurlTransport.Configuration(proxy: .none)
        configuration.connectionPool.maxConnectionsPerHost = 1
        let transport = CurlTransport(configuration: configuration)
        defer { transport.shutdown() }
        let tag = Arrivals.tag()
        let holder = Task { try await transport.send(AIFTransport.HTTPRequest(url: server.url("slow/3000?tag=\(tag)"))) }
        // The holder has the host's one connection once the server has its request.
        #expect(await Arrivals.shared.wait(for: tag))
        let total = Duration.milliseconds(300)
        let start = ContinuousClock.now
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(AIFTransport.HTTPRequest(url: server.url("fast"), timeouts: AIFTransport.HTTPRequest.Timeouts(connect: .seconds(5), total: total)))
        }
        let elapsed = ContinuousClock.now - start
        #expect(error?.code == .totalTimeout)
        #expect(error?.detail.contains("maxConnectionsPerHost") == true, "\(String(describing: error))")
        #expect(elapsed >= total && elapsed <= total + Self.lateness, "\(elapsed)")
        // The slot holder is unaffected, and the next request gets the slot it frees.
        #expect(try await holder.value.statusCode == 200)
        #expect(try await transport.send(AIFTransport.HTTPRequest(url: server.url("fast"))).statusCode == 200)
    }

    /// Requests over the host limit start in the order they were made, each as soon as a
    /// connection comes free, and a cancelled one gives up its place. The server holds every
    /// request until the test lets it go, so the order is the transport's alone: it once was
    /// checked by the order of answers each delayed 100 ms, which a server answer late by more
    /// than that under the thread sanitizer reordered (7 answered before 6).
    @Test(.timeLimit(.minutes(1)))
    func waitingRequestsStartInOrderAndACancelledOneGivesUpItsPlace() async throws {
        let gate = HeldRequests()
        let router = Router()
        router.get("held/:index") { _, context -> String in
            let index = try context.parameters.require("index", as: Int.self)
            await gate.hold(index)
            return "\(index)"
        }
        let server = try await LocalServer.start(router: router)
        var configuration = CurlTransport.Configuration(proxy: .none)
        configuration.connectionPool.maxConnectionsPerHost = 2
        let transport = CurlTransport(configuration: configuration)
        defer { transport.shutdown() }
        let answered = Locked<[Int]>([])
        let cancelled = Locked<[Int]>([])
        let done = AsyncStream<Void>.makeStream()
        let count = 8
        var transfers: [any CancellableTransfer] = []
        for index in 0..<count {
            transfers.append(transport.send(AIFTransport.HTTPRequest(url: server.url("held/\(index)")), progress: nil) { result in
                switch result {
                case .success(let response):
                    #expect(String(decoding: response.body, as: UTF8.self) == "\(index)")
                    answered.withLock { $0.append(index) }
                case .failure(let error):
                    #expect(error.code == .cancelled, "\(error)")
                    cancelled.withLock { $0.append(index) }
                }
                if answered.withLock({ $0.count }) + cancelled.withLock({ $0.count }) == count { done.continuation.finish() }
            })
        }
        transfers[5].cancel()

        var arrivals = gate.arrivals.makeAsyncIterator()
        // The first two take the two connections; nothing else reaches the server meanwhile.
        let first = [await arrivals.next(), await arrivals.next()]
        #expect(Set(first) == [0, 1])
        // Each answer frees a connection, and the next request in line, passing over the
        // cancelled one, takes it.
        for (released, next) in [(1, 2), (0, 3), (2, 4), (3, 6), (6, 7)] {
            // Two held, and no more arrived: no third connection was opened.
            #expect(gate.arrivedCount == gate.releasedCount + 2, "before \(released) was answered")
            gate.release(released)
            #expect(await arrivals.next() == next, "after \(released) was answered")
        }
        gate.release(4)
        gate.release(7)
        for await _ in done.stream {}
        #expect(cancelled.withLock { $0 } == [5])
        #expect(Set(answered.withLock { $0 }) == [0, 1, 2, 3, 4, 6, 7])
        #expect(gate.arrivedCount == count - 1)
        gate.stop()
        await server.stop()
    }
}

/// A server's hold on the requests it receives: it tells the order they arrive in and answers
/// each only once the test releases it.
private final class HeldRequests: Sendable {
    private struct State {
        var arrived = 0
        var released: Set<Int> = []
        var holding: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Locked(State())
    private let arrived = AsyncStream<Int>.makeStream()

    /// The index of each request, as it arrives.
    var arrivals: AsyncStream<Int> { arrived.stream }

    /// How many requests have arrived.
    var arrivedCount: Int { state.withLock { $0.arrived } }
    /// How many requests the test has released.
    var releasedCount: Int { state.withLock { $0.released.count } }

    /// Notes the arrival of request `index`, then waits until it is released.
    func hold(_ index: Int) async {
        state.withLock { $0.arrived += 1 }
        arrived.continuation.yield(index)
        await withCheckedContinuation { continuation in
            let goes = state.withLock { state -> Bool in
                if state.released.contains(index) { return true }
                state.holding[index] = continuation
                return false
            }
            if goes { continuation.resume() }
        }
    }

    /// Lets request `index` be answered, now or when it arrives.
    func release(_ index: Int) {
        let held = state.withLock { state in
            state.released.insert(index)
            return state.holding.removeValue(forKey: index)
        }
        held?.resume()
    }

    /// Ends the arrivals.
    func stop() {
        arrived.continuation.finish()
    }
}
