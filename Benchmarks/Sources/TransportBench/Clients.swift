import AIFNetworking
import AIFNetworkingMetrics
import AIFNetworkingTracing
import AsyncHTTPClient
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
    case managerHandOff = "manager-handoff"
    /// `manager` with the metrics and tracing observers and neither system bootstrapped: what
    /// observing costs an application that has not chosen a backend.
    case managerObserved = "manager-observed"

    func make(_ settings: ClientSettings) throws -> any BenchClient {
        switch self {
        case .libcurlC: try CurlLoopClient(settings)
        case .transport: TransportCompletionClient(settings)
        case .transportAsync: TransportAsyncClient(settings, onTransportThread: false)
        case .transportAsyncOnLoop: TransportAsyncClient(settings, onTransportThread: true)
        case .urlSession: URLSessionClient(settings)
        case .ahc: AsyncHTTPClientClient(settings)
        case .manager: ManagerDelegateClient(settings, loadPlacement: .automatic)
        case .managerHandOff: ManagerDelegateClient(settings, loadPlacement: .loadExecutor)
        case .managerObserved: ManagerDelegateClient(settings, loadPlacement: .automatic, observers: [MetricsObserver(), TracingObserver()])
        case .managerAsync: ManagerAsyncClient(settings)
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
        guard let loop = aif_bench_curl_loop_create(settings.url, settings.caFile, Int32(settings.concurrency), settings.http2 ? 1 : 0) else {
            throw BenchSetupError(description: "could not create the C libcurl loop")
        }
        self.loop = loop
    }

    func run(seconds: Double) async throws -> (completed: Int, failures: Int) {
        var failures = 0
        let completed = aif_bench_curl_loop_run(loop, seconds, &failures)
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
    /// `send`) and returns the counts once every chain has stopped at the deadline.
    static func drive(seconds: Double, concurrency: Int, send: (CallbackRun) -> Void) async -> (completed: Int, failures: Int) {
        let run = CallbackRun(seconds: seconds, concurrency: concurrency)
        await withCheckedContinuation { continuation in
            run.finished.withLock { $0 = continuation }
            for _ in 0..<concurrency { send(run) }
        }
        if let failure = run.firstFailure.withLock({ $0 }) {
            FileHandle.standardError.write(Data("first failure: \(failure)\n".utf8))
        }
        return (run.completed.load(ordering: .relaxed), run.failures.load(ordering: .relaxed))
    }

    /// Records one result; returns whether to send another.
    func record(success: Bool, failure: @autoclosure () -> String = "") -> Bool {
        if !success {
            firstFailure.withLock { if $0 == nil { $0 = failure() } }
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
    private let concurrency: Int

    init(_ settings: ClientSettings) {
        transport = makeTransport(settings)
        request = HTTPRequest(url: URL(string: settings.url)!)
        concurrency = settings.concurrency
    }

    func run(seconds: Double) async throws -> (completed: Int, failures: Int) {
        await CallbackRun.drive(seconds: seconds, concurrency: concurrency) { run in send(run) }
    }

    private func send(_ run: CallbackRun) {
        transport.send(request) { [self] result in
            let ok = (try? result.get().statusCode) == 200
            if run.record(success: ok, failure: "\(result)") { send(run) }
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
        request = HTTPRequest(url: URL(string: settings.url)!)
        concurrency = settings.concurrency
        self.onTransportThread = onTransportThread
    }

    func run(seconds: Double) async throws -> (completed: Int, failures: Int) {
        await driveTasks(seconds: seconds, concurrency: concurrency, executor: onTransportThread ? transport.taskExecutor : nil) { [transport, request] in
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
        request = URLRequest(url: URL(string: settings.url)!)
        concurrency = settings.concurrency
    }

    func run(seconds: Double) async throws -> (completed: Int, failures: Int) {
        await CallbackRun.drive(seconds: seconds, concurrency: concurrency) { run in send(run) }
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
    private let concurrency: Int

    init(_ settings: ClientSettings) {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: settings.concurrency)
        configuration.httpVersion = settings.http2 ? .automatic : .http1Only
        if let caFile = settings.caFile {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(caFile)
            configuration.tlsConfiguration = tls
        }
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        url = settings.url
        concurrency = settings.concurrency
    }

    func run(seconds: Double) async throws -> (completed: Int, failures: Int) {
        let request = HTTPClientRequest(url: url)
        return await driveTasks(seconds: seconds, concurrency: concurrency) { [client] in
            do {
                let response = try await client.execute(request, timeout: .seconds(30))
                _ = try await response.body.collect(upTo: 1 << 20)
                return response.status.code == 200
            } catch {
                return false
            }
        }
    }

    func close() async throws {
        try await client.shutdown()
    }
}

/// Runs `concurrency` tasks, each calling `request` back to back until `seconds` have passed,
/// and counts the calls that returned `true` (completed) and `false` (failures).
func driveTasks(
    seconds: Double,
    concurrency: Int,
    executor: (any TaskExecutor)? = nil,
    request: @escaping @Sendable () async -> Bool
) async -> (completed: Int, failures: Int) {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    return await withTaskGroup(of: (Int, Int).self) { group in
        for _ in 0..<concurrency {
            group.addTask(executorPreference: executor) {
                var completed = 0
                var failures = 0
                while ContinuousClock.now < deadline {
                    if await request() { completed += 1 } else { failures += 1 }
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
