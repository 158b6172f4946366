import AIFNetworking
import Foundation
import Synchronization

// MARK: - The full manager stack

/// The benchmark's small JSON, decoded.
struct BenchCatalogue: Decodable, Sendable {
    struct Item: Decodable, Sendable {
        var id: Int
        var title: String
        var priceCents: Int
        var inStock: Bool
    }

    var page: Int
    var pageSize: Int
    var total: Int
    var items: [Item]
}

/// The benchmark server as a service: AIF-HMAC signed (the server ignores the signature; the
/// cost of making it is what is measured), snake_case keys.
struct BenchService: Service {
    let baseURL: URL
    var name: ServiceName { "bench" }
    var environments: [EnvironmentName: ServiceEnvironment] {
        [.online: ServiceEnvironment(baseURL: baseURL, credentials: SigningCredentials(publicKey: "bench-public", privateKey: Secret("bench-private-key")))]
    }
    var decoder: JSONDecoder? { benchDecoder }
}

private let benchDecoder: JSONDecoder = {
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    return decoder
}()

/// One endpoint: a signed GET of the small JSON.
final class BenchCatalogueManager: APIManager<BenchCatalogue>, @unchecked Sendable {
    override var serviceName: ServiceName { "bench" }
    override var methodName: String { "small.json" }
}

/// The pieces every manager client shares: a registry holding the service, a proxy over a
/// CurlTransport configured like the transport clients'.
private struct ManagerStack {
    let registry = ServiceRegistry(processEnvironment: [:])
    let transport: CurlTransport
    let proxy: APIProxy

    init(_ settings: ClientSettings) {
        let url = URL(string: settings.url)!
        registry.register(BenchService(baseURL: url.deletingLastPathComponent()))
        transport = makeTransport(settings)
        proxy = APIProxy(transport: transport)
    }

    func makeManager() -> BenchCatalogueManager {
        BenchCatalogueManager(proxy: proxy, registry: registry, cache: ResponseCache(capacity: 1))
    }
}

/// The delegate face: `concurrency` chains, each delegate callback (delivered immediately, on
/// the thread that ended the load) starting the next load.
final class ManagerDelegateClient: BenchClient {
    private let stack: ManagerStack
    private let manager: BenchCatalogueManager
    private let concurrency: Int
    private let delegate = Mutex<ChainDelegate?>(nil)

    init(_ settings: ClientSettings) {
        stack = ManagerStack(settings)
        manager = stack.makeManager()
        manager.callbackExecutor = .immediate
        concurrency = settings.concurrency
    }

    func run(seconds: Double) async throws -> (completed: Int, failures: Int) {
        await CallbackRun.drive(seconds: seconds, concurrency: concurrency) { [manager, delegate] run in
            // The manager holds its delegate weakly: the client keeps one per run.
            let chain = delegate.withLock { current in
                if let existing = current, existing.run === run { return existing }
                let fresh = ChainDelegate(run: run)
                current = fresh
                return fresh
            }
            manager.delegate = chain
            manager.loadData()
        }
    }

    func close() async throws {
        stack.transport.shutdown()
    }
}

/// Hears each load's end and starts the next while the run lasts.
private final class ChainDelegate: APIManagerDelegate {
    let run: CallbackRun

    init(run: CallbackRun) {
        self.run = run
    }

    func managerCallAPIDidSucceed<Content>(_ manager: APIManager<Content>, response: APIResponse<Content>) {
        let ok = (response.content as? BenchCatalogue)?.items.count == 6
        if run.record(success: ok, failure: "unexpected content") { manager.loadData() }
    }

    func managerCallAPIDidFail<Content>(_ manager: APIManager<Content>, error: APIError) {
        if run.record(success: false, failure: "\(error)") { manager.loadData() }
    }
}

/// The async face: `concurrency` tasks awaiting `manager.load()` one after another.
final class ManagerAsyncClient: BenchClient {
    private let stack: ManagerStack
    private let manager: BenchCatalogueManager
    private let concurrency: Int

    init(_ settings: ClientSettings) {
        stack = ManagerStack(settings)
        manager = stack.makeManager()
        concurrency = settings.concurrency
    }

    func run(seconds: Double) async throws -> (completed: Int, failures: Int) {
        await driveTasks(seconds: seconds, concurrency: concurrency) { [manager] in
            (try? await manager.load())?.content.items.count == 6
        }
    }

    func close() async throws {
        stack.transport.shutdown()
    }
}
