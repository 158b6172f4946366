@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import AIFNetworkingDiskCache
import AIFNetworkingMetrics
import AIFNetworkingTesting
import AIFNetworkingTracing
import DemoServer
import Foundation
import InMemoryTracing
import MetricsTestKit
import Testing
import Tracing
@_spi(CrossModule) import AIFTransport

@Suite("Observers: every load heard once, metrics and traces of what happened", .timeLimit(.minutes(2)))
struct ObservabilityTests {
    private static let quickRetries = RetryPolicy(baseDelay: .milliseconds(10))

    // MARK: Observers in general

    /// Every load ends exactly once for its observer, whatever the face, the outcome or the
    /// moment it is cancelled, and always last.
    @Test func everyLoadEndsOnceAndLast() async throws {
        let recorder = RecordingObserver()
        let stack = try await ShopStack.make(proxy: { APIProxy(transport: $0, observers: [recorder]) })
        let loads = 120
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<loads {
                group.addTask {
                    let manager = stack.manager("goods/{id}", Goods.self)
                    let id: JSONValue = index % 3 == 0 ? 5000 : .integer(index % 20 + 1)
                    switch index % 4 {
                    case 0:
                        _ = try? await manager.load(["id": id])
                    case 1:
                        let task = Task { try await manager.load(["id": id]) }
                        // Cancelled at a varying point of its way: after a random number of turns.
                        for _ in 0..<Int.random(in: 0..<200) { await Task.yield() }
                        task.cancel()
                        _ = await task.result
                    case 2:
                        let id = manager.loadData(with: ["id": id])
                        if index % 8 == 2 { manager.cancelLoad(id) }
                        // The load has left its manager's count before its observer hears its end.
                        await recorder.changes.wait { !manager.isLoading }
                    default:
                        // Let go of mid-flight: the load ends as cancelled for its observer too.
                        _ = stack.manager("goods/{id}", Goods.self).loadData(with: ["id": 3])
                    }
                }
            }
            try await group.waitForAll()
        }
        await recorder.changes.wait { recorder.ended == recorder.started }
        let events = recorder.events
        #expect(recorder.started == loads)
        for (id, list) in events {
            #expect(list.first == "start", "\(id): \(list)")
            #expect(list.last?.hasPrefix("end") == true, "\(id): \(list)")
            #expect(list.count { $0.hasPrefix("end") } == 1, "\(id): \(list)")
        }
    }

    /// What an observer hears of a load that is retried, and of one the cache answers.
    @Test func attemptsRetriesAndCacheAnswersAreHeardInOrder() async throws {
        let recorder = RecordingObserver()
        let stack = try await ShopStack.make(proxy: { APIProxy(transport: $0, observers: [recorder]) })
        let flaky = stack.manager("flaky/\(UUID().uuidString)", FlakyReport.self) { var s = $0; s.retryPolicy = Self.quickRetries; return s }
        let response = try await flaky.load(["failures": 1])
        #expect(recorder.events[response.loadID] == ["start", "sign 1", "attempt 1: 503", "retry 2", "sign 2", "attempt 2: 200", "end success 2"])

        let cached = stack.manager("goods/{id}", Goods.self) { var s = $0; s.cache = true; return s }
        _ = try await cached.load(["id": 7])
        let fromCache = try await cached.load(["id": 7])
        #expect(recorder.events[fromCache.loadID] == ["start", "cache memory", "end success 0"])

        let unknown = stack.manager("goods/{id}", Goods.self) { var s = $0; s.service = "nowhere"; return s }
        let error = await #expect(throws: APIError.self) { try await unknown.load(["id": 1]) }
        #expect(recorder.events[try #require(error?.loadID)] == ["start", "end configuration 0"])
        #expect(recorder.environments[try #require(error?.loadID)] == .some(nil))
        #expect(recorder.environments[response.loadID] == "online")
    }

    // MARK: Metrics

    @Test func metricsCountLoadsAttemptsBytesAndOutcomes() async throws {
        let metrics = TestMetrics()
        let stack = try await ShopStack.make(proxy: { APIProxy(transport: $0, observers: [MetricsObserver(factory: metrics)]) })
        let goods = stack.manager("goods/{id}", Goods.self)
        for id in 1...3 { _ = try await goods.load(["id": .integer(id)]) }
        _ = try? await goods.load(["id": 5000])
        let flakyName = "flaky/\(UUID().uuidString)"
        _ = try await stack.manager(flakyName, FlakyReport.self) { var s = $0; s.retryPolicy = Self.quickRetries; return s }.load(["failures": 2])

        let endpoint = [("service", "shop"), ("environment", "online"), ("method", "goods/{id}")]
        #expect(try metrics.expectCounter("aif_loads_started_total", endpoint).totalValue == 4)
        #expect(try metrics.expectCounter("aif_loads_ended_total", endpoint + [("outcome", "success")]).totalValue == 3)
        #expect(try metrics.expectCounter("aif_loads_ended_total", endpoint + [("outcome", "http_status")]).totalValue == 1)
        #expect(try metrics.expectTimer("aif_load_duration", endpoint + [("outcome", "success")]).values.count == 3)
        #expect(try metrics.expectCounter("aif_attempts_total", endpoint + [("status", "2xx")]).totalValue == 3)
        #expect(try metrics.expectCounter("aif_attempts_total", endpoint + [("status", "4xx")]).totalValue == 1)
        #expect(try metrics.expectTimer("aif_attempt_duration", endpoint).values.count == 4)
        #expect(try metrics.expectCounter("aif_bytes_sent_total", endpoint).totalValue > 400)
        #expect(try metrics.expectCounter("aif_bytes_received_total", endpoint).totalValue > 400)
        let opened = try metrics.expectCounter("aif_connections_total", endpoint + [("state", "opened")]).totalValue
        let reused = try metrics.expectCounter("aif_connections_total", endpoint + [("state", "reused")]).totalValue
        #expect(opened + reused == 4)
        #expect(try metrics.expectTimer("aif_attempt_phase_duration", endpoint + [("phase", "first_byte")]).values.count == 4)
        #expect(try metrics.expectMeter("aif_loads_in_flight", endpoint).lastValue == 0)

        let flaky = [("service", "shop"), ("environment", "online"), ("method", flakyName)]
        #expect(try metrics.expectCounter("aif_retries_total", flaky).totalValue == 2)
        #expect(try metrics.expectCounter("aif_attempts_total", flaky + [("status", "5xx")]).totalValue == 2)
        #expect(try metrics.expectCounter("aif_loads_ended_total", flaky + [("outcome", "success")]).totalValue == 1)
    }

    /// A new connection's phases are timed; a request on a kept connection has none of its own.
    @Test func theConnectionPhasesOfANewTLSConnection() async throws {
        let servers = try await TestServers.shared()
        let metrics = TestMetrics()
        let transport = makeTransport { $0.tls.certificateAuthorities = .file(path: servers.certificates.caPath) }
        defer { transport.shutdown() }
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(PlainService(baseURL: servers.tls.baseURL(secure: true)))
        let proxy = APIProxy(transport: transport, observers: [MetricsObserver(factory: metrics)])
        let manager = APIManager(Endpoint<NoContent>(service: "plain", path: "bytes/10"), proxy: proxy, registry: registry)
        _ = try await manager.load()
        _ = try await manager.load()
        let endpoint = [("service", "plain"), ("environment", "online"), ("method", "bytes/10")]
        #expect(try metrics.expectTimer("aif_attempt_phase_duration", endpoint + [("phase", "tls")]).values.count == 1)
        #expect(try metrics.expectTimer("aif_attempt_phase_duration", endpoint + [("phase", "connect")]).values.count == 1)
        #expect(try metrics.expectCounter("aif_connections_total", endpoint + [("state", "opened")]).totalValue == 1)
        #expect(try metrics.expectCounter("aif_connections_total", endpoint + [("state", "reused")]).totalValue == 1)
    }

    @Test func cacheHitsAreCountedByTier() async throws {
        let folder = try makeTestFolder("observed-cache")
        defer { try? FileManager.default.removeItem(at: folder) }
        let writer = try await ShopStack.make(cache: ResponseCache(persistentStore: try DiskCache(directory: folder)))
        _ = try await writer.manager("goods/{id}", Goods.self) { var s = $0; s.cache = true; return s }.load(["id": 21])
        (writer.cache.persistentStore as? DiskCache)?.flush()

        let metrics = TestMetrics()
        let reader = try await ShopStack.make(
            cache: ResponseCache(persistentStore: try DiskCache(directory: folder)),
            proxy: { APIProxy(transport: $0, observers: [MetricsObserver(factory: metrics)]) })
        let manager = reader.manager("goods/{id}", Goods.self) { var s = $0; s.cache = true; return s }
        _ = try await manager.load(["id": 21])  // from disk, then kept in memory
        _ = try await manager.load(["id": 21])  // from memory
        let endpoint = [("service", "shop"), ("environment", "online"), ("method", "goods/{id}")]
        #expect(try metrics.expectCounter("aif_cache_hits_total", endpoint + [("tier", "disk")]).totalValue == 1)
        #expect(try metrics.expectCounter("aif_cache_hits_total", endpoint + [("tier", "memory")]).totalValue == 1)
        #expect(try metrics.expectCounter("aif_loads_ended_total", endpoint + [("outcome", "success")]).totalValue == 2)
        #expect(metrics.timers(label: "aif_attempt_duration").allSatisfy { $0.values.isEmpty })
        #expect(reader.transport.sent == 0)
    }

    @Test func credentialRefreshesAreCounted() async throws {
        let metrics = TestMetrics()
        let shop = try await TokenShop.make(observers: [MetricsObserver(factory: metrics)])
        _ = try await shop.signIn()
        shop.tokens.expireAll()
        let response = try await shop.account().load()
        #expect(response.attempts == 2)
        let account = [("service", "shop"), ("environment", "online"), ("method", "account")]
        #expect(try metrics.expectCounter("aif_credential_refreshes_total", account).totalValue == 1)
        #expect(try metrics.expectCounter("aif_attempts_total", account + [("status", "4xx")]).totalValue == 1)
        await shop.stop()
    }

    @Test func aTransportFailureIsAnAttemptWithoutAStatus() async throws {
        let metrics = TestMetrics()
        let stack = try await ShopStack.make(
            onlineURL: URL(string: "http://127.0.0.1:\(try RawServer.closedPort())/v1")!,
            proxy: { APIProxy(transport: $0, observers: [MetricsObserver(factory: metrics)]) })
        _ = try? await stack.manager("goods/{id}", Goods.self) { var s = $0; s.retryPolicy = RetryPolicy(maxRetries: 0); return s }.load(["id": 1])
        let endpoint = [("service", "shop"), ("environment", "online"), ("method", "goods/{id}")]
        #expect(try metrics.expectCounter("aif_attempts_total", endpoint + [("status", "error")]).totalValue == 1)
        #expect(try metrics.expectCounter("aif_loads_ended_total", endpoint + [("outcome", "no_network")]).totalValue == 1)
        #expect(metrics.counters(label: "aif_connections_total").allSatisfy { $0.totalValue == 0 })
    }

    // MARK: Tracing

    /// The load's span, under the caller's, and a client span per attempt under it, with the
    /// HTTP attributes; the query (which carries the signature and key) is left out.
    @Test func aRetriedLoadIsASpanWithAClientSpanPerAttempt() async throws {
        let tracer = InMemoryTracer()
        let stack = try await ShopStack.make(proxy: { APIProxy(transport: $0, observers: [TracingObserver(tracer: tracer)]) })
        let name = "flaky/\(UUID().uuidString)"
        let manager = stack.manager(name, FlakyReport.self) { var s = $0; s.retryPolicy = Self.quickRetries; return s }
        let parent = tracer.startSpan("checkout")
        let response = try await ServiceContext.withValue(parent.context) { try await manager.load(["failures": 1]) }
        parent.end()

        let spans = tracer.finishedSpans
        let load = try #require(spans.first { $0.kind == .internal && $0.operationName == "GET \(name)" })
        let attempts = spans.filter { $0.kind == .client }.sorted { $0.attributes["http.request.resend_count"] == nil && $1.attributes["http.request.resend_count"] != nil }
        #expect(attempts.count == 2)
        #expect(load.parentSpanID == parent.spanID)
        #expect(load.traceID == parent.traceID)
        #expect(attempts.allSatisfy { $0.parentSpanID == load.spanID && $0.operationName == "GET \(name)" })
        #expect(load.attributes["aif.service"]?.toSpanAttribute() == "shop")
        #expect(load.attributes["aif.environment"]?.toSpanAttribute() == "online")
        #expect(load.attributes["aif.request_id"]?.toSpanAttribute() == .int64(Int64(response.loadID.rawValue)))
        #expect(load.attributes["aif.attempts"]?.toSpanAttribute() == 2)
        #expect(load.attributes["aif.outcome"]?.toSpanAttribute() == "success")
        #expect(load.events.map(\.name) == ["retry"])
        #expect(load.status == nil)

        let (first, second) = (attempts[0], attempts[1])
        #expect(first.attributes["http.response.status_code"]?.toSpanAttribute() == 503)
        #expect(first.attributes["error.type"]?.toSpanAttribute() == "503")
        #expect(first.status?.code == .error)
        #expect(second.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        #expect(second.attributes["http.request.resend_count"]?.toSpanAttribute() == 1)
        #expect(second.attributes["http.request.method"]?.toSpanAttribute() == nil)
        let url = stack.servers.online.baseURL()
        let sentWithoutQuery = String(response.request.url.absoluteString.prefix { $0 != "?" })
        #expect(sentWithoutQuery.hasSuffix("/v1/\(name)"))
        #expect(second.attributes["url.full"]?.toSpanAttribute() == .string(sentWithoutQuery))
        #expect(second.attributes["server.address"]?.toSpanAttribute() == "127.0.0.1")
        #expect(second.attributes["server.port"]?.toSpanAttribute() == .int64(Int64(url.port ?? 0)))
        #expect(second.attributes["url.scheme"]?.toSpanAttribute() == "http")
        // The request went with a signature and key in its query; neither is in any span.
        #expect(response.request.url.query?.contains("sign=") == true)
        for span in spans {
            span.attributes.forEach { _, value in #expect(!"\(value)".contains("sign="), "\(span.operationName)") }
        }
    }

    /// The trace context goes into each attempt's headers before signing: a signature that
    /// covers `traceparent` is accepted by the verifying server, and each attempt sends its own
    /// span as the parent.
    @Test func theTraceContextIsSignedWithTheRequest() async throws {
        let server = try await SignatureServers.shared().plain
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(TraceSignedService(baseURL: server.baseURL()))
        let tracer = W3CTestTracer()
        let transport = makeTransport()
        defer { transport.shutdown() }
        let tracing = TracingObserver()
        let proxy = APIProxy(transport: transport, observers: [tracing], plugins: [tracing])
        let manager = APIManager(Endpoint<NoContent>(service: "traced", path: "rfc9421/orders"), proxy: proxy, registry: registry)
        let response = try await withTracer(tracer) { try await manager.load(["n": 1]) }
        #expect(response.headers["X-Verified"] == "yes", "\(response.headers["X-Reason"] ?? "")")
        let sent = try #require(response.request.headers["traceparent"])
        let attempt = try #require(tracer.inner.finishedSpans.first { $0.kind == .client })
        #expect(sent == W3CTestTracer.traceparent(attempt.spanContext))
        #expect(response.request.headers["tracestate"] == "aif=test")
        #expect(response.request.headers["Signature-Input"]?.contains("\"traceparent\"") == true)
    }

    /// An observer reads, a plugin changes a request: among the observers only, the tracing
    /// observer makes its spans but adds no header; among the plugins too, each attempt carries
    /// its span's context. Between loads it forgets the ones that ended.
    @Test func theTraceContextGoesOutOnlyWhenTheObserverIsAPluginToo() async throws {
        let tracer = W3CTestTracer()
        let observing = TracingObserver(tracer: tracer)
        let readOnly = try await ShopStack.make(proxy: { APIProxy(transport: $0, observers: [observing]) })
        let quiet = try await readOnly.manager("goods/{id}", Goods.self).load(["id": 2])
        #expect(quiet.request.headers["traceparent"] == nil)
        #expect(tracer.inner.finishedSpans.contains { $0.kind == .client })

        let tracing = TracingObserver(tracer: tracer)
        let propagating = try await ShopStack.make(proxy: { APIProxy(transport: $0, observers: [tracing], plugins: [tracing]) })
        let traced = try await propagating.manager("goods/{id}", Goods.self).load(["id": 2])
        let attempt = try #require(tracer.inner.finishedSpans.last { $0.kind == .client })
        #expect(traced.request.headers["traceparent"] == W3CTestTracer.traceparent(attempt.spanContext))
    }

    /// Without a tracer in effect the observer stays out of the way: no span, no header.
    @Test func withoutATracerNothingIsAdded() async throws {
        let tracing = TracingObserver()
        let stack = try await ShopStack.make(proxy: { APIProxy(transport: $0, observers: [tracing], plugins: [tracing]) })
        let response = try await stack.manager("goods/{id}", Goods.self).load(["id": 2])
        #expect(response.request.headers["traceparent"] == nil)
        #expect(!response.request.headers.contains { $0.name.lowercased().hasPrefix("in-memory") })
    }

    @Test func aFailureIsRecordedOnBothSpans() async throws {
        let tracer = InMemoryTracer()
        let stack = try await ShopStack.make(
            onlineURL: URL(string: "http://127.0.0.1:\(try RawServer.closedPort())/v1")!,
            proxy: { APIProxy(transport: $0, observers: [TracingObserver(tracer: tracer), MetricsObserver(factory: TestMetrics())]) })
        _ = try? await stack.manager("goods/{id}", Goods.self) { var s = $0; s.retryPolicy = RetryPolicy(maxRetries: 0); return s }.load(["id": 1])
        let attempt = try #require(tracer.finishedSpans.first { $0.kind == .client })
        let load = try #require(tracer.finishedSpans.first { $0.kind == .internal })
        #expect(attempt.attributes["error.type"]?.toSpanAttribute() == "connection_refused")
        #expect(attempt.errors.count == 1)
        #expect(attempt.status?.code == .error)
        #expect(load.attributes["error.type"]?.toSpanAttribute() == "no_network")
        #expect(load.errors.count == 1)
        #expect(load.status?.code == .error)
    }
}

// MARK: - Helpers

/// Records what each load's observation hears, as short strings, by load ID.
private final class RecordingObserver: APIProxy.LoadObserver {
    private let state = Locked<(events: [LoadID: [String]], environments: [LoadID: ServiceEnvironment.Name?])>(([:], [:]))

    var events: [LoadID: [String]] { state.withLock { $0.events } }
    var environments: [LoadID: ServiceEnvironment.Name?] { state.withLock { $0.environments } }
    var started: Int { state.withLock { $0.events.count } }
    var ended: Int { state.withLock { $0.events.values.count { $0.last?.hasPrefix("end") == true } } }
    /// Told after each event noted.
    let changes = ChangeSignal()

    func observation(of load: ObservedLoad) -> (any APIProxy.LoadObservation)? {
        state.withLock { state in
            state.events[load.loadID, default: []].append("start")
            state.environments[load.loadID] = load.environment
        }
        return Observation(id: load.loadID, observer: self)
    }

    fileprivate func note(_ id: LoadID, _ event: String) {
        state.withLock { $0.events[id, default: []].append(event) }
        changes.changed()
    }

    private final class Observation: APIProxy.LoadObservation {
        let id: LoadID
        let observer: RecordingObserver

        init(id: LoadID, observer: RecordingObserver) {
            self.id = id
            self.observer = observer
        }

        func attemptWillStart(_ attempt: Int) { observer.note(id, "sign \(attempt)") }
        func attemptDidEnd(_ attempt: ObservedLoad.Attempt) {
            let status = (try? attempt.result.get()).map { "\($0.statusCode)" } ?? "failed"
            observer.note(id, "attempt \(attempt.number): \(status)")
        }
        func loadWillRetry(_ retry: RetryPolicy.Attempt) { observer.note(id, "retry \(retry.number)") }
        func loadWillRenewCredential() { observer.note(id, "renew") }
        func cacheDidAnswer(from tier: ResponseCache.Tier) { observer.note(id, "cache \(tier)") }
        func loadDidEnd(_ outcome: ObservedLoad.Outcome) { observer.note(id, "end \(outcome.outcomeClass) \(outcome.attempts)") }
    }
}

/// The verifying server's RFC 9421 routes, with `traceparent` among the covered components.
private struct TraceSignedService: Service {
    var name: ServiceName = "traced"
    var environments: [ServiceEnvironment.Name: ServiceEnvironment]
    var signer: (any RequestSigner)? = HTTPMessageSignatureSigner(components: [.method, .authority, .path, .query, .header("traceparent")])

    init(baseURL: URL) {
        environments = [.online: ServiceEnvironment(baseURL: baseURL, apiVersion: "verify", credentials: SignatureRoutes.messageCredentials)]
    }
}

/// An in-memory tracer that propagates as W3C Trace Context does: `traceparent` (its IDs
/// padded to the format's widths) and a fixed `tracestate`.
private struct W3CTestTracer: Tracer {
    let inner = InMemoryTracer()

    static func traceparent(_ context: InMemorySpanContext) -> String {
        func padded(_ id: String, to width: Int) -> String { String(repeating: "0", count: max(0, width - id.count)) + id }
        return "00-\(padded(context.traceID, to: 32))-\(padded(context.spanID, to: 16))-01"
    }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind, at instant: @autoclosure () -> Instant,
        function: String, file fileID: String, line: UInt
    ) -> InMemorySpan {
        inner.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject) where Inject.Carrier == Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject(Self.traceparent(span), forKey: "traceparent", into: &carrier)
        injector.inject("aif=test", forKey: "tracestate", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract.Carrier == Carrier {}
}
