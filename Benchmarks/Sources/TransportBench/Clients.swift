@_spi(Performance) import AIFNetworking
import AIFNetworkingMetrics
import AIFNetworkingTracing
import AsyncHTTPClient
import BenchSupport
import CurlLoop
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What every client under measurement is told.
struct ClientSettings: Sendable {
    var url: String
    var caFile: String?
    var concurrency: Int
    var http2: Bool
    /// Every this many request chains (0: none), the chain's requests carry a total timeout of
    /// ``shortTimeoutMilliseconds`` (the `libcurl-c`, `transport` and `ahc` clients): against a
    /// server that answers later, each ends timed out, how late is noted (``TimeoutLateness``),
    /// and ``measure(_:_:warmup:seconds:)`` does not count it as a failure.
    var timeoutEvery = 0
    var shortTimeoutMilliseconds = 500
    /// Whether every request is a POST of ``BenchPayload/orderJSON`` (the manager clients: of
    /// ``BenchPayload/order`` as parameters) instead of a GET.
    var post = false

    /// The request the transport clients send.
    var request: HTTPRequest {
        guard post else { return HTTPRequest(url: URL(string: url)!) }
        return HTTPRequest(
            method: .post, url: URL(string: url)!, headers: ["Content-Type": "application/json"], body: .bytes(Data(BenchPayload.orderJSON.utf8)))
    }

    /// Whether chain `index` carries the short timeout.
    func timesOut(chain index: Int) -> Bool {
        timeoutEvery > 0 && index % timeoutEvery == 0
    }
}

/// One HTTP client under measurement: keeps `concurrency` requests for the same small JSON in
/// flight for `seconds`, and counts the ones that came back 200.
protocol BenchClient: Sendable {
    func run(seconds: Double) async throws -> (completed: Int, failures: Int)
    func close() async throws
}

/// The clients, by the names the comparison prints.
enum ClientKind: String, CaseIterable, Sendable {
    case libcurlC = "libcurl-c"
    case transport
    case transportAsync = "transport-async"
    case transportAsyncOnLoop = "transport-async-loop"
    case urlSession = "urlsession"
    case ahc
    case manager
    case managerAsync = "manager-async"
    /// The async face through a typed interface (`@API`): the same endpoint as `manager-async`.
    case interfaceAsync = "interface-async"
    case managerHandOff = "manager-handoff"
    /// `manager` with the metrics and tracing observers and neither system bootstrapped: what
    /// observing costs an application that has not chosen a backend.
    case managerObserved = "manager-observed"
    /// A client generated from `OpenAPI/bench.yaml` (swift-openapi-generator), loading and
    /// decoding the same document, on this library's transport, AsyncHTTPClient's and URLSession's.
    case openAPICurl = "openapi-curl"
    case openAPIAHC = "openapi-ahc"
    case openAPIURLSession = "openapi-urlsession"
    case openAPIStub = "openapi-stub"

    /// Whether the client runs in a scenario: the OpenAPI clients at c=16 over HTTP/1.1 only
    /// (the comparison their RATIO line makes), and neither they nor the typed interface (GETs
    /// declared once) in the POST scenario.
    func runs(in scenario: Comparison.Scenario) -> Bool {
        switch self {
        case .openAPICurl, .openAPIAHC, .openAPIURLSession, .openAPIStub: scenario.concurrency == 16 && !scenario.secure && !scenario.post
        case .interfaceAsync: !scenario.post
        default: true
        }
    }

    /// The manager's delegate client with metrics and tracing, the tracing observer a plugin too
    /// (it injects the trace context).
    private static func observed(_ settings: ClientSettings, tracing: TracingObserver) -> any BenchClient {
        ManagerDelegateClient(settings, loadExecutor: .automatic, observers: [MetricsObserver(), tracing], plugins: [tracing])
    }

    func make(_ settings: ClientSettings) throws -> any BenchClient {
        switch self {
        case .libcurlC: try CurlLoopClient(settings)
        case .transport: TransportCompletionClient(settings)
        case .transportAsync: TransportAsyncClient(settings, onTransportThread: false)
        case .transportAsyncOnLoop: TransportAsyncClient(settings, onTransportThread: true)
        case .urlSession: URLSessionClient(settings)
        case .ahc: AsyncHTTPClientClient(settings)
        case .manager: ManagerDelegateClient(settings, loadExecutor: .automatic)
        case .managerHandOff: ManagerDelegateClient(settings, loadExecutor: .loadExecutor)
        case .managerObserved: Self.observed(settings, tracing: TracingObserver())
        case .managerAsync: ManagerAsyncClient(settings)
        case .interfaceAsync: InterfaceAsyncClient(settings)
        case .openAPICurl: OpenAPIBenchClient(settings, on: .curl)
        case .openAPIAHC: OpenAPIBenchClient(settings, on: .ahc)
        case .openAPIURLSession: OpenAPIBenchClient(settings, on: .urlSession)
        case .openAPIStub: OpenAPIBenchClient(settings, on: .stub)
        }
    }
}

// MARK: - The C libcurl loop

struct BenchSetupError: Error, CustomStringConvertible {
    let description: String
}

/// - Note: `@unchecked Sendable`: the C loop is used from one task at a time (run, then close).
final class CurlLoopClient: BenchClient, @unchecked Sendable {
    private let loop: OpaquePointer

    init(_ settings: ClientSettings) throws {
        guard let loop = aif_bench_curl_loop_create(
            settings.url, settings.caFile, Int32(settings.concurrency), settings.http2 ? 1 : 0,
            Int32(settings.timeoutEvery), settings.shortTimeoutMilliseconds, settings.post ? BenchPayload.orderJSON : nil)
        else {
            throw BenchSetupError(description: "could not create the C libcurl loop")
        }
        self.loop = loop
    }

    func run(seconds: Double) async throws -> (completed: Int, failures: Int) {
        var failures = 0
        let completed = aif_bench_curl_loop_run(loop, seconds, &failures)
        var values: UnsafePointer<Double>?
        let count = aif_bench_curl_loop_lateness(loop, &values)
        if let values, count > 0 { TimeoutLateness.note(Array(UnsafeBufferPointer(start: values, count: count))) }
        return (completed, failures)
    }

    func close() async throws {
        aif_bench_curl_loop_destroy(loop)
    }
}

// MARK: - CurlTransport

func makeTransport(_ settings: ClientSettings) -> CurlTransport {
    var configuration = CurlTransport.Configuration(proxy: .none)
    configuration.httpVersion = settings.http2 ? .automatic : .http1Only
    // As many connections as requests in flight, like the C loop and AsyncHTTPClient here.
    configuration.connectionPool.maxConnectionsPerHost = settings.concurrency
    if ProcessInfo.processInfo.environment["AIF_BENCH_ONE_MULTI"] != nil { configuration.connectionPool.connectionCacheSize = max(16, settings.concurrency) }
    if let caFile = settings.caFile {
        configuration.tls.certificateAuthorities = .file(path: caFile)
    }
    return CurlTransport(configuration: configuration)
}

/// Counts and the end of a run driven by completion handlers.
final class CallbackRun: Sendable {
    let deadline: ContinuousClock.Instant
    let completed = Atomic(0)
    let failures = Atomic(0)
    let active: Atomic<Int>
    let finished: Mutex<CheckedContinuation<Void, Never>?> = Mutex(nil)
    /// What went wrong the first time, reported on standard error at the end.
    let firstFailure: Mutex<String?> = Mutex(nil)

    init(seconds: Double, concurrency: Int) {
        deadline = .now + .milliseconds(Int(seconds * 1000))
        active = Atomic(concurrency)
    }

    /// Starts `concurrency` chains of requests (each completion sending the next through
    /// `send`, given the chain's index) and returns the counts once every chain has stopped at
    /// the deadline.
    static func drive(seconds: Double, concurrency: Int, send: (CallbackRun, _ chain: Int) -> Void) async -> (completed: Int, failures: Int) {
        let run = CallbackRun(seconds: seconds, concurrency: concurrency)
        await withCheckedContinuation { continuation in
            run.finished.withLock { $0 = continuation }
            for chain in 0..<concurrency { send(run, chain) }
        }
        if let failure = run.firstFailure.withLock({ $0 }) {
            FileHandle.standardError.write(Data("first failure: \(failure)\n".utf8))
        }
        return (run.completed.load(ordering: .relaxed), run.failures.load(ordering: .relaxed))
    }

    /// Records one result (a failure described by `failure`, or `nil` for a timeout the run
    /// asked for); returns whether to send another.
    func record(success: Bool, failure: @autoclosure () -> String? = "") -> Bool {
        if !success, let failure = failure() {
            firstFailure.withLock { if $0 == nil { $0 = failure } }
        }
        if success {
            completed.add(1, ordering: .relaxed)
        } else {
            failures.add(1, ordering: .relaxed)
        }
        if ContinuousClock.now < deadline { return true }
        if active.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            finished.withLock { $0?.resume() }
        }
        return false
    }
}

/// CurlTransport's completion-handler face: each completion sends the next request from the
/// transport's own thread.
final class TransportCompletionClient: BenchClient {
    private let transport: CurlTransport
    private let request: HTTPRequest
    private let shortTimeoutRequest: HTTPRequest
    private let settings: ClientSettings

    init(_ settings: ClientSettings) {
        transport = makeTransport(settings)
        request = settings.request
        var short = request
        short.timeouts = HTTPRequest.Timeouts(total: .milliseconds(settings.shortTimeoutMilliseconds), idle: nil)
        shortTimeoutRequest = short
        self.settings = settings
    }

    func run(seconds: Double) async throws -> (completed: Int, failures: Int) {
        await CallbackRun.drive(seconds: seconds, concurrency: settings.concurrency) { run, chain in
            send(run, timingOut: settings.timesOut(chain: chain))
        }
    }

    private func send(_ run: CallbackRun, timingOut: Bool) {
        let started = ContinuousClock.now
        transport.send(timingOut ? shortTimeoutRequest : request) { [self] result in
            let ok = (try? result.get().statusCode) == 200
            var expected = false
            if timingOut, case .failure(let error) = result, error.code == .totalTimeout {
                TimeoutLateness.note(since: started, timeoutMilliseconds: settings.shortTimeoutMilliseconds)
                expected = true
            }
            if run.record(success: ok, failure: expected ? nil : "\(result)") { send(run, timingOut: timingOut) }
        }
    }

    func close() async throws {
        transport.shutdown()
    }
}

/// CurlTransport's async/await face: `concurrency` tasks, each awaiting one request at a time —
/// on the default executor, or (`transport-async-loop`) preferring the transport's own thread.
final class TransportAsyncClient: BenchClient {
    private let transport: CurlTransport
    private let request: HTTPRequest
    private let concurrency: Int
    private let onTransportThread: Bool

    init(_ settings: ClientSettings, onTransportThread: Bool) {
        transport = makeTransport(settings)
        request = settings.request
        concurrency = settings.concurrency
        self.onTransportThread = onTransportThread
    }

    func run(seconds: Double) async throws -> (completed: Int, failures: Int) {
        await driveTasks(seconds: seconds, concurrency: concurrency, executor: onTransportThread ? transport.taskExecutor : nil) { [transport, request] _ in
            (try? await transport.send(request))?.statusCode == 200
        }
    }

    func close() async throws {
        transport.shutdown()
    }
}

// MARK: - URLSession (FoundationNetworking, itself on libcurl)

final class URLSessionClient: BenchClient {
    private let session: URLSession
    private let request: URLRequest
    private let concurrency: Int

    init(_ settings: ClientSettings) {
        let configuration = URLSessionConfiguration.default
        configuration.httpMaximumConnectionsPerHost = settings.concurrency
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
        var request = URLRequest(url: URL(string: settings.url)!)
        if settings.post {
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(BenchPayload.orderJSON.utf8)
        }
        self.request = request
        concurrency = settings.concurrency
    }

    func run(seconds: Double) async throws -> (completed: Int, failures: Int) {
        await CallbackRun.drive(seconds: seconds, concurrency: concurrency) { run, _ in send(run) }
    }

    private func send(_ run: CallbackRun) {
        session.dataTask(with: request) { [self] data, response, error in
            let ok = error == nil && (response as? HTTPURLResponse)?.statusCode == 200 && data != nil
            if run.record(success: ok, failure: "\(error.map { "\($0)" } ?? "status \((response as? HTTPURLResponse)?.statusCode ?? 0)")") { send(run) }
        }.resume()
    }

    func close() async throws {
        session.invalidateAndCancel()
    }
}

// MARK: - AsyncHTTPClient

final class AsyncHTTPClientClient: BenchClient {
    private let client: HTTPClient
    private let url: String
    private let settings: ClientSettings

    init(_ settings: ClientSettings) {
        client = makeHTTPClient(settings)
        url = settings.url
        self.settings = settings
    }

    func run(seconds: Double) async throws -> (completed: Int, failures: Int) {
        var built = HTTPClientRequest(url: url)
        if settings.post {
            built.method = .POST
            built.headers.add(name: "Content-Type", value: "application/json")
            built.body = .bytes(ByteBuffer(string: BenchPayload.orderJSON))
        }
        let request = built
        return await driveTasks(seconds: seconds, concurrency: settings.concurrency) { [client, settings] chain in
            let timingOut = settings.timesOut(chain: chain)
            let started = ContinuousClock.now
            do {
                let timeout: TimeAmount = timingOut ? .milliseconds(Int64(settings.shortTimeoutMilliseconds)) : .seconds(30)
                let response = try await client.execute(request, timeout: timeout)
                _ = try await response.body.collect(upTo: 1 << 20)
                return response.status.code == 200
            } catch {
                if timingOut, let error = error as? HTTPClientError, error == .deadlineExceeded {
                    TimeoutLateness.note(since: started, timeoutMilliseconds: settings.shortTimeoutMilliseconds)
                }
                return false
            }
        }
    }

    func close() async throws {
        try await client.shutdown()
    }
}

/// An AsyncHTTPClient set as the benchmark's clients are: a connection soft limit of the
/// concurrency, HTTP/1.1 unless HTTP/2 is asked for, the benchmark's CA trusted.
func makeHTTPClient(_ settings: ClientSettings) -> HTTPClient {
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: settings.concurrency)
    configuration.httpVersion = settings.http2 ? .automatic : .http1Only
    if let caFile = settings.caFile {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(caFile)
        configuration.tlsConfiguration = tls
    }
    return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
}

/// Runs `concurrency` tasks, each calling `request` (with its index) back to back until
/// `seconds` have passed, and counts the calls that returned `true` (completed) and `false`
/// (failures).
func driveTasks(
    seconds: Double,
    concurrency: Int,
    executor: (any TaskExecutor)? = nil,
    request: @escaping @Sendable (_ chain: Int) async -> Bool
) async -> (completed: Int, failures: Int) {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    return await withTaskGroup(of: (Int, Int).self) { group in
        for chain in 0..<concurrency {
            group.addTask(executorPreference: executor) {
                var completed = 0
                var failures = 0
                while ContinuousClock.now < deadline {
                    if await request(chain) { completed += 1 } else { failures += 1 }
                }
                return (completed, failures)
            }
        }
        var total = (completed: 0, failures: 0)
        for await (completed, failures) in group {
            total.completed += completed
            total.failures += failures
        }
        return total
    }
}
