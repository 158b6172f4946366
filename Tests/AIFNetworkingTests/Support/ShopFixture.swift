@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import AIFNetworkingTesting
import DemoServer
import Foundation
@_spi(CrossModule) import AIFTransport

/// The demo shop servers the manager tests run against: online (1,003 goods), offline (25
/// goods), started once per test process.
struct ShopServers: Sendable {
    let online: LocalServer
    let offline: LocalServer

    private static let started = Task {
        let online = try await DemoShopServer.start(environment: .online, faults: ShopFaults(slowArrivals: Arrivals.shared.arrived))
        let offline = try await DemoShopServer.start(environment: .offline)
        return ShopServers(online: online, offline: offline)
    }

    static func shared() async throws -> ShopServers {
        try await started.value
    }

    /// The shared servers, but with an online server of the test's own that fails as `faults`
    /// says (a shared one would let parallel tests take each other's faults). Stopped with
    /// `stopDedicated()`.
    static func withDedicatedOnline(faults: ShopFaults) async throws -> ShopServers {
        let shared = try await shared()
        return ShopServers(online: try await DemoShopServer.start(environment: .online, faults: faults), offline: shared.offline)
    }

    /// The repository's `Configs/` folder.
    static let configs = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Configs")

    /// A registry of its own holding `shop` from `Configs/shop.json`, pointed at these servers.
    func registry(onlineURL: URL? = nil) throws -> ServiceRegistry {
        let registry = ServiceRegistry(processEnvironment: [:])
        try registry.registerServices(inDirectory: Self.configs, environment: [
            "SHOP_ONLINE_URL": (onlineURL ?? online.baseURL()).absoluteString,
            "SHOP_OFFLINE_URL": offline.baseURL().absoluteString,
            "SHOP_PUBLIC_KEY": ShopRoutes.publicKey,
            "SHOP_PRIVATE_KEY": ShopRoutes.privateKey,
        ])
        return registry
    }
}

/// The real transport, counting what is sent through it.
final class CountingTransport: HTTPTransport {
    let base: any HTTPTransport
    private let count = Locked(0)

    init(_ base: any HTTPTransport = CurlTransport.shared) {
        self.base = base
    }

    /// How many requests were sent.
    var sent: Int { count.withLock { $0 } }
    /// The URL of each request handed to the transport under, in order: a test awaits the
    /// sending of a request (`sends.wait(count:)`) instead of sleeping until it is under way.
    let sends = Collected<URL>()

    var redirects: HTTPRequest.RedirectPolicy { base.redirects }

    func send(
        _ request: AIFNetworking.HTTPRequest,
        progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<AIFNetworking.HTTPResponse, TransportError>) -> Void
    ) -> any CancellableTransfer {
        count.withLock { $0 += 1 }
        defer { sends.append(request.url) }
        return base.send(request, progress: progress, completion: completion)
    }

    func send(_ request: AIFNetworking.HTTPRequest, progress: (@Sendable (TransferProgress) -> Void)?) async throws(TransportError) -> AIFNetworking.HTTPResponse {
        count.withLock { $0 += 1 }
        sends.append(request.url)
        return try await base.send(request, progress: progress)
    }
}

/// Everything one manager test needs, of its own: registry, counting transport, proxy, cache.
struct ShopStack: Sendable {
    let servers: ShopServers
    let registry: ServiceRegistry
    let transport: CountingTransport
    let proxy: APIProxy
    let cache: ResponseCache

    /// - Parameters:
    ///   - onlineURL: Points the online environment elsewhere (a closed port).
    ///   - faults: Gives the test an online server of its own, failing as these say.
    ///   - transport: The transport under the counter; the shared one by default.
    static func make(
        onlineURL: URL? = nil, faults: ShopFaults? = nil, transport base: (any HTTPTransport)? = nil,
        cache: ResponseCache = ResponseCache(), proxy: ((CountingTransport) -> APIProxy)? = nil
    ) async throws -> ShopStack {
        let servers = if let faults { try await ShopServers.withDedicatedOnline(faults: faults) } else { try await ShopServers.shared() }
        let transport = CountingTransport(base ?? CurlTransport.shared)
        return ShopStack(
            servers: servers, registry: try servers.registry(onlineURL: onlineURL), transport: transport,
            proxy: proxy?(transport) ?? APIProxy(transport: transport), cache: cache)
    }

    /// A manager for one shop method.
    func manager<Content: Decodable & Sendable>(
        _ path: String, _ content: Content.Type, method: HTTPMethod = .get, configure: (ShopManager<Content>.Settings) -> ShopManager<Content>.Settings = { $0 }
    ) -> ShopManager<Content> {
        ShopManager(path, method: method, settings: configure(ShopManager<Content>.Settings()), stack: self)
    }
}

/// A shop manager configured by values (tests need many variants), recording what its own
/// plugin hears.
final class ShopManager<Content: Decodable & Sendable>: APIManager<Content>, @unchecked Sendable {
    // Restated as Swift requires of subclasses; its stored properties are `let`s of Sendable
    // types and a lock-protected event list.
    struct Settings: Sendable {
        var cache = false
        var lifetime: Duration = .seconds(300)
        /// The whole policy, when a test needs more than a lifetime.
        var cachePolicy: ResponseCache.Policy?
        var coalesce = false
        var timeouts: HTTPRequest.Timeouts?
        var retryPolicy: RetryPolicy?
        var headers = HTTPHeaders()
        var service: ServiceName = "shop"
        var rejectParameters: String?
        var rejectResponse: String?
        var vetoCall = false
        var suppressDelegate = false
        var reform: @Sendable (Parameters) -> Parameters = { $0 }
    }

    let settings: Settings
    let method: HTTPMethod
    let events = Locked<[String]>([])

    init(_ path: String, method: HTTPMethod, settings: Settings, stack: ShopStack) {
        self.settings = settings
        self.method = method
        super.init(
            Endpoint(
                service: settings.service, path: path, method: method, headers: settings.headers, timeouts: settings.timeouts,
                cachePolicy: settings.cache ? settings.cachePolicy ?? .lifetime(settings.lifetime) : nil, coalescesIdenticalRequests: settings.coalesce,
                retryPolicy: settings.retryPolicy),
            proxy: stack.proxy, registry: stack.registry, cache: stack.cache)
        plugins = [OwnPlugin(settings: settings, events: events)]
    }

    private func record(_ event: String) { events.withLock { $0.append(event) } }

    override func reformParameters(_ parameters: Parameters) -> Parameters {
        record("manager.reformParameters")
        return settings.reform(parameters)
    }

    /// The manager's own plugin, first in its list: records each moment as `manager.…` and
    /// refuses, rejects or holds back as the settings say.
    struct OwnPlugin: LoadPlugin {
        let settings: Settings
        let events: Locked<[String]>

        private func record(_ event: String) { events.withLock { $0.append(event) } }

        func loadWillStart(_ load: ObservedLoad, parameters: Parameters) throws {
            record("manager.loadWillStart")
            if settings.vetoCall { throw TestFailure("vetoed") }
            if let reason = settings.rejectParameters { throw TestFailure(reason) }
        }
        func attemptWillBeSigned(_ attempt: Int, headers: inout HTTPHeaders, of load: ObservedLoad) {
            record("manager.attemptWillBeSigned(\(attempt))")
        }
        func loadDidReceive<Received>(_ response: APIResponse<Received>, of load: ObservedLoad) throws {
            record("manager.loadDidReceive")
            if let reason = settings.rejectResponse { throw TestFailure(reason) }
        }
        func loadWillDeliver<Received>(_ outcome: Result<APIResponse<Received>, APIError>, of load: ObservedLoad) -> Bool {
            record("manager.loadWillDeliver")
            return !settings.suppressDelegate
        }
        func loadDidEnd(_ outcome: ObservedLoad.Outcome, of load: ObservedLoad) {
            record("manager.loadDidEnd(\(outcome.ending))")
        }
    }
}

extension ObservedLoad.Outcome {
    /// `success`, or the error's kind and status: `HTTP status 404`, `cancelled`.
    var ending: String {
        guard let error else { return "success" }
        return "\(error.kind)\(error.statusCode.map { " \($0)" } ?? "")"
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A delegate, param source and plugin that records every call, in order, into a shared event
/// list, and every outcome by load ID.
final class Recorder: APIManagerDelegate, APIManagerParamSource, LoadPlugin {
    let events: Locked<[String]>
    let outcomes = Locked<[LoadID: [Result<String, APIError>]]>([:])
    let parameters: Parameters
    let onDelivery: @Sendable () -> Void

    init(events: Locked<[String]> = Locked([]), parameters: Parameters = [:], onDelivery: @escaping @Sendable () -> Void = {}) {
        self.events = events
        self.parameters = parameters
        self.onDelivery = onDelivery
    }

    /// Tests waiting for events: each is told once `remaining` more recorded events start with
    /// `prefix`. Its lock is taken before the events' whenever both are.
    private let waiting = Locked<[(prefix: String, remaining: Int, tell: @Sendable (()) -> Void)]>([])

    private func record(_ event: String) {
        let ready = waiting.withLock { waiting -> [@Sendable (()) -> Void] in
            events.withLock { $0.append(event) }
            guard !waiting.isEmpty else { return [] }
            for index in waiting.indices where event.hasPrefix(waiting[index].prefix) { waiting[index].remaining -= 1 }
            defer { waiting.removeAll { $0.remaining <= 0 } }
            return waiting.filter { $0.remaining <= 0 }.map(\.tell)
        }
        for tell in ready { tell(()) }
    }

    /// Returns once `count` events starting with `prefix` are recorded — as each load's plugins
    /// hear its end (`plugin.loadDidEnd`) after its delegate heard it — or when the waiting test
    /// is cancelled (past its time limit). No polling, no time of its own.
    func wait(for prefix: String, count: Int = 1) async {
        await event { (tell: @escaping @Sendable (()) -> Void) in
            let now = waiting.withLock { waiting -> Bool in
                let remaining = count - events.withLock { $0.count { $0.hasPrefix(prefix) } }
                if remaining > 0 { waiting.append((prefix, remaining, tell)) }
                return remaining <= 0
            }
            if now { tell(()) }
        }
    }

    /// How many loads have been told to the delegate.
    var deliveries: Int { outcomes.withLock { $0.values.reduce(0) { $0 + $1.count } } }

    func outcome(_ id: LoadID) -> [Result<String, APIError>] { outcomes.withLock { $0[id] ?? [] } }

    func parameters<Content>(for manager: APIManager<Content>) -> Parameters {
        record("source.parameters")
        return parameters
    }
    func loadWillStart(_ load: ObservedLoad, parameters: Parameters) throws { record("plugin.loadWillStart") }
    func attemptWillBeSigned(_ attempt: Int, headers: inout HTTPHeaders, of load: ObservedLoad) { record("plugin.attemptWillBeSigned(\(attempt))") }
    func loadDidReceive<Content>(_ response: APIResponse<Content>, of load: ObservedLoad) throws { record("plugin.loadDidReceive") }
    func loadWillDeliver<Content>(_ outcome: Result<APIResponse<Content>, APIError>, of load: ObservedLoad) -> Bool {
        record("plugin.loadWillDeliver")
        return true
    }
    func loadDidEnd(_ outcome: ObservedLoad.Outcome, of load: ObservedLoad) { record("plugin.loadDidEnd(\(outcome.ending))") }

    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) {
        // The outcome first: a test that awaits the event reads it next.
        outcomes.withLock { $0[response.loadID, default: []].append(.success("\(response.content)")) }
        record("delegate.success")
        onDelivery()
    }
    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) {
        outcomes.withLock { $0[error.loadID, default: []].append(.failure(error)) }
        record("delegate.fail(\(error.kind)\(error.statusCode.map { " \($0)" } ?? ""))")
        onDelivery()
    }
}

/// A clock a test moves by hand, for cache lifetimes.
final class ManualClock: Sendable {
    private let offset = Locked<Duration>(.zero)
    private let start = ContinuousClock.now
    private let startDate = Date()

    func advance(by duration: Duration) { offset.withLock { $0 += duration } }
    var now: ContinuousClock.Instant { start + offset.withLock { $0 } }
    /// The same moment on the wall clock (what cache lifetimes are measured on).
    var date: Date { startDate.addingTimeInterval(offset.withLock { $0 }.timeInterval) }
}

extension GoodsPage: Paging.PageContent {
    public var pageItemCount: Int { items.count }
    public var pageTotalCount: Int? { total }
    public var pageHasMore: Bool? { hasMore }
}

/// Tells a ``ChangeSignal`` as each load of the manager it is a plugin of ends (after the load
/// has left its manager's count: `isLoading` reads false by then).
struct SignalsEnd: LoadPlugin {
    let changes: ChangeSignal

    func loadDidEnd(_ outcome: ObservedLoad.Outcome, of load: ObservedLoad) {
        changes.changed()
    }
}
