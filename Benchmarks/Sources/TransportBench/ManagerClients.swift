@_spi(Performance) import AIFNetworking
import AIFNetworkingInterfaces
import BenchSupport
import Foundation
import Synchronization

// MARK: - The full manager stack

/// The pieces every manager client shares: a registry holding the service, a proxy over a
/// CurlTransport configured like the transport clients'.
private struct ManagerStack {
    let registry = ServiceRegistry(processEnvironment: [:])
    let transport: CurlTransport
    let proxy: APIProxy
    /// Whether the managers POST an order rather than GET the catalogue.
    let posts: Bool

    init(_ settings: ClientSettings, loadExecutor: LoadExecutorChoice = .automatic, observers: [any APIProxy.LoadObserver] = [], plugins: [any LoadPlugin] = []) {
        let url = URL(string: settings.url)!
        registry.register(BenchService(baseURL: url.deletingLastPathComponent()))
        transport = makeTransport(settings)
        proxy = APIProxy(transport: transport, loadExecutor: loadExecutor, observers: observers, plugins: plugins)
        posts = settings.post
    }

    func makeManager() -> APIManager<BenchCatalogue> {
        posts
            ? BenchOrderManager(proxy: proxy, registry: registry, cache: ResponseCache(capacity: 1))
            : BenchCatalogueManager(proxy: proxy, registry: registry, cache: ResponseCache(capacity: 1))
    }

    /// The parameters of each load: the order when the managers POST, none otherwise.
    var parameters: Parameters { posts ? BenchPayload.order : [:] }
}

/// The delegate face: `concurrency` chains, each delegate callback (delivered immediately, on
/// the thread that ended the load) starting the next load. `manager` leaves the proxy's load
/// placement automatic (under the comparison's pinning, one CPU: the transport's thread);
/// `manager-handoff` forces the load executor (`APIProxy(loadExecutor: .loadExecutor)`).
final class ManagerDelegateClient: BenchClient {
    private let stack: ManagerStack
    private let manager: APIManager<BenchCatalogue>
    private let concurrency: Int
    private let delegate = Mutex<ChainDelegate?>(nil)

    init(_ settings: ClientSettings, loadExecutor: LoadExecutorChoice, observers: [any APIProxy.LoadObserver] = [], plugins: [any LoadPlugin] = []) {
        stack = ManagerStack(settings, loadExecutor: loadExecutor, observers: observers, plugins: plugins)
        manager = stack.makeManager()
        manager.callbackExecutor = .immediate
        concurrency = settings.concurrency
    }

    func run(seconds: Double) async throws -> (completed: Int, failures: Int) {
        await CallbackRun.drive(seconds: seconds, concurrency: concurrency) { [self] run, _ in
            // The manager holds its delegate weakly: the client keeps one per run.
            let chain = delegate.withLock { current in
                if let existing = current, existing.run === run { return existing }
                let fresh = ChainDelegate(run: run, parameters: stack.parameters)
                current = fresh
                return fresh
            }
            manager.delegate = chain
            manager.loadData(with: stack.parameters)
        }
    }

    func close() async throws {
        stack.transport.shutdown()
    }
}

/// Hears each load's end and starts the next while the run lasts.
private final class ChainDelegate: APIManagerDelegate {
    let run: CallbackRun

    let parameters: Parameters

    init(run: CallbackRun, parameters: Parameters) {
        self.run = run
        self.parameters = parameters
    }

    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) {
        let ok = (response.content as? BenchCatalogue)?.items.count == 6
        if run.record(success: ok, failure: "unexpected content") { manager.loadData(with: parameters) }
    }

    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) {
        if run.record(success: false, failure: "\(error)") { manager.loadData(with: parameters) }
    }
}

/// The async face: `concurrency` tasks awaiting `manager.load()` one after another.
final class ManagerAsyncClient: BenchClient {
    private let stack: ManagerStack
    private let manager: APIManager<BenchCatalogue>
    private let concurrency: Int

    init(_ settings: ClientSettings) {
        stack = ManagerStack(settings)
        manager = stack.makeManager()
        concurrency = settings.concurrency
    }

    func run(seconds: Double) async throws -> (completed: Int, failures: Int) {
        await driveTasks(seconds: seconds, concurrency: concurrency) { [manager, parameters = stack.parameters] _ in
            (try? await manager.load(parameters))?.content.items.count == 6
        }
    }

    func close() async throws {
        stack.transport.shutdown()
    }
}

/// The benchmark's endpoint declared as a typed interface: `manager-async`'s endpoint, the
/// same service and path.
@API(service: "bench")
protocol BenchAPI: Sendable {
    @GET("small.json")
    func catalogue() async throws(APIError) -> BenchCatalogue
}

/// The async face through the interface's generated client: `concurrency` tasks awaiting
/// `catalogue()` one after another, as `manager-async` awaits `manager.load()`.
final class InterfaceAsyncClient: BenchClient {
    private let stack: ManagerStack
    private let api: BenchAPIClient
    private let concurrency: Int

    init(_ settings: ClientSettings) {
        stack = ManagerStack(settings)
        api = BenchAPIClient(registry: stack.registry, proxy: stack.proxy, cache: ResponseCache(capacity: 1))
        concurrency = settings.concurrency
    }

    func run(seconds: Double) async throws -> (completed: Int, failures: Int) {
        await driveTasks(seconds: seconds, concurrency: concurrency) { [api] _ in
            (try? await api.catalogue())?.items.count == 6
        }
    }

    func close() async throws {
        stack.transport.shutdown()
    }
}

// MARK: - Memory over many loads

/// Runs `loads` delegate-face loads, `concurrency` at a time, and returns the resident memory
/// after each fifth of them: it should stay flat once the pools are warm.
func soakManager(url: String, loads: Int, concurrency: Int) async -> [(loads: Int, residentKiB: Int)] {
    let settings = ClientSettings(url: url, caFile: nil, concurrency: concurrency, http2: false)
    let stack = ManagerStack(settings)
    defer { stack.transport.shutdown() }
    let manager = stack.makeManager()
    var samples = [(loads: 0, residentKiB: residentKiB())]
    let step = max(1, loads / 5)
    var done = 0
    while done < loads {
        let batch = min(step, loads - done)
        _ = await driveTasks(count: batch, concurrency: concurrency) { [manager] in
            (try? await manager.load())?.content.items.count == 6
        }
        done += batch
        samples.append((done, residentKiB()))
    }
    return samples
}

/// ``soakManager(url:loads:concurrency:)`` through the delegate face: `concurrency` chains, each
/// delegate callback (delivered immediately) starting the next load, as `manager` runs.
func soakManagerDelegate(url: String, loads: Int, concurrency: Int) async -> [(loads: Int, residentKiB: Int)] {
    let settings = ClientSettings(url: url, caFile: nil, concurrency: concurrency, http2: false)
    let stack = ManagerStack(settings)
    defer { stack.transport.shutdown() }
    let manager = stack.makeManager()
    manager.callbackExecutor = .immediate
    var samples = [(loads: 0, residentKiB: residentKiB())]
    let step = max(1, loads / 5)
    var done = 0
    while done < loads {
        let batch = min(step, loads - done)
        // The manager holds its delegate weakly: the chain is kept here while the batch runs.
        let chain = SoakChain(total: batch, parameters: stack.parameters)
        manager.delegate = chain
        await withCheckedContinuation { continuation in
            let starting = chain.begin(concurrency: concurrency, then: continuation)
            for _ in 0..<starting { manager.loadData(with: chain.parameters) }
        }
        done += batch
        samples.append((done, residentKiB()))
    }
    return samples
}

/// Hears each load of a soak batch and starts the next until the batch is done.
private final class SoakChain: APIManagerDelegate {
    private struct Counts {
        var started = 0
        var finished = 0
        var done: CheckedContinuation<Void, Never>?
    }

    let parameters: Parameters
    private let total: Int
    private let counts = Mutex(Counts())

    init(total: Int, parameters: Parameters) {
        self.total = total
        self.parameters = parameters
    }

    /// Records the first loads as started (before any can end) and where to say the batch is
    /// done; returns how many to start.
    func begin(concurrency: Int, then done: CheckedContinuation<Void, Never>) -> Int {
        counts.withLock { counts in
            counts.done = done
            counts.started = min(concurrency, total)
            return counts.started
        }
    }

    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) { next(manager) }
    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) { next(manager) }

    private func next<Content>(_ manager: APIManager<Content>) {
        let (more, done) = counts.withLock { counts -> (Bool, CheckedContinuation<Void, Never>?) in
            counts.finished += 1
            if counts.started < total {
                counts.started += 1
                return (true, nil)
            }
            guard counts.finished == total else { return (false, nil) }
            defer { counts.done = nil }
            return (false, counts.done)
        }
        if more { manager.loadData(with: parameters) }
        done?.resume()
    }
}

/// Runs `count` calls of `request`, `concurrency` at a time.
private func driveTasks(count: Int, concurrency: Int, request: @escaping @Sendable () async -> Bool) async -> Int {
    final class Tickets: Sendable {
        let taken = Mutex(0)
    }
    let tickets = Tickets()
    return await withTaskGroup(of: Int.self) { group in
        for _ in 0..<concurrency {
            group.addTask {
                var succeeded = 0
                while tickets.taken.withLock({ taken in
                    guard taken < count else { return false }
                    taken += 1
                    return true
                }) {
                    if await request() { succeeded += 1 }
                }
                return succeeded
            }
        }
        return await group.reduce(0, +)
    }
}

/// The process's resident memory now, from `/proc/self/statm`.
func residentKiB() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
}
