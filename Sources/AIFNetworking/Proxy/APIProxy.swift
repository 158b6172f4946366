import Foundation
public import Logging
import Synchronization
@_spi(CrossModule) import AIFTransport

/// Dispatches every load: hands out load IDs, keeps the table of loads in flight, cancels
/// them by ID, by list or by group, signs and sends their requests, and logs each request and
/// response.
///
/// Managers use ``shared`` unless given another. A load is entered in the table when it starts
/// and leaves it exactly once, when it ends; a cancellation marks the entry and stops the work
/// attached to it, and whatever the work produces afterwards is discarded — the load ends as
/// cancelled.
///
/// Logging goes to the ``logger`` given at creation: one `info` line per request sent and per
/// response (method, URL with the password and signature redacted, status, duration, bytes,
/// whether it came from the cache), headers at `debug`. The default logger is disabled, and
/// the library never bootstraps logging.
public final class APIProxy: Sendable {
    /// The proxy managers use unless given another: ``/AIFTransport/CurlTransport/shared``, no logging — or
    /// the proxy given to ``setShared(_:)`` before first use.
    public static var shared: APIProxy { sharedInstance.value }

    private static let sharedInstance = SharedInstance("APIProxy.shared") { APIProxy() }

    /// Makes `proxy` the one managers use unless given another. Call it once at start-up,
    /// before any manager uses ``shared``.
    ///
    /// ```swift
    /// try APIProxy.setShared(APIProxy(logger: Logger(label: "shop.network")))
    /// ```
    ///
    /// - Parameter proxy: The proxy to share.
    /// - Throws: ``/AIFTransport/CurlTransport/SharedInstanceError`` when ``shared`` is in use already.
    public static func setShared(_ proxy: APIProxy) throws(CurlTransport.SharedInstanceError) {
        try sharedInstance.configure { proxy }
    }

    /// Where requests are sent. Its ``/AIFTransport/HTTPTransport/redirects`` says how many redirects a
    /// load follows (each hop of a signed request signed afresh).
    public let transport: any HTTPTransport
    /// How each hop goes through ``transport``, found once.
    let transportRoute: ExchangeRoute
    /// Where request and response lines go.
    public let logger: Logger
    /// Caps the retries of the loads sent through this proxy.
    public let retryBudget: RetryPolicy.Budget
    /// Writes every response of a real environment as a fixture, when set (record → replay).
    public let recorder: FixtureTransport.Recorder?
    /// What hears each load from start to end (metrics, tracing); none by default.
    public var observers: [any APIProxy.LoadObserver] { loadObservers.all }
    /// What takes part in every load of this proxy, before each manager's own
    /// ``APIManager/plugins``: one list of plugins a load, the proxy's first (a trace context's
    /// headers, an audit's refusal). None by default.
    public let plugins: [any LoadPlugin]
    /// Where the delegate face's loads (`loadData`) run their steps — signing, decoding,
    /// validation, `.immediate` delivery — between the transport's I/O, as the proxy's
    /// ``LoadExecutorChoice`` decided: the transport's own thread, or the library's load executor (a
    /// concurrent Dispatch queue). The work must not block.
    let loadExecutor: any StepExecutor
    /// Whether the delegate face's loads (`loadData`) run on the transport's own thread
    /// (``LoadExecutorChoice/transportThread``, or what ``LoadExecutorChoice/automatic`` chose) rather than
    /// on the library's load executor.
    package let runsDelegateLoadsOnTransportThread: Bool

    /// Where the loads' engine reads the time and waits.
    let clock: any LoadClock

    /// Follows the outcomes of the requests sent through this proxy (see ``connectivity``).
    let connectivityMonitor: ConnectivityMonitor

    let table = Locked(Table())
    /// Whether ``shutdown(deadline:)`` has begun: new loads are refused from then on.
    let refusesLoads = Atomic<Bool>(false)
    private let loadObservers: LoadObservers
    let coalescer = Coalescer()
    let generator = RequestGenerator()
    /// The fixture transports of the mock environments loads have gone to, one per behavior
    /// and root, so that each keeps its own seeded draws.
    let mockTransports = Locked<[MockTransportKey: FixtureTransport]>([:])

    struct MockTransportKey: Hashable {
        let behavior: ServiceEnvironment.MockBehavior
        let baseURL: URL
        let apiVersion: String
    }

    /// Creates a proxy.
    ///
    /// - Parameters:
    ///   - transport: Where requests go; the shared ``/AIFTransport/CurlTransport`` by default.
    ///   - logger: Where request and response lines go; disabled by default.
    ///   - retryBudget: Caps retries to a share of the loads; 20% over 10 seconds, and 10
    ///     retries per window whatever the traffic, by default.
    ///   - offlineAfterFailures: How many requests in a row must fail to connect, with no
    ///     response between, for ``connectivity`` to become ``APIProxy/Connectivity/offline``; 2 by default.
    ///   - recorder: Writes every response as a fixture (see ``/AIFServices/FixtureTransport/Recorder``); by default
    ///     one for the directory `AIF_RECORD` names, if it is set, else none.
    ///   - observers: What hears each load from start to end (see ``APIProxy/LoadObserver``); none by
    ///     default.
    ///   - plugins: What takes part in every load, before each manager's plugins (see
    ///     ``LoadPlugin``); none by default.
    public convenience init(
        transport: any HTTPTransport = CurlTransport.shared,
        logger: Logger = Logger(label: "AIFNetworking.APIProxy", factory: { _ in SwiftLogNoOpLogHandler() }),
        retryBudget: RetryPolicy.Budget = RetryPolicy.Budget(),
        offlineAfterFailures: Int = 2,
        recorder: FixtureTransport.Recorder? = .fromEnvironment(),
        observers: [any APIProxy.LoadObserver] = [],
        plugins: [any LoadPlugin] = []
    ) {
        self.init(
            transport: transport, logger: logger, retryBudget: retryBudget, offlineAfterFailures: offlineAfterFailures,
            loadExecutor: .automatic, recorder: recorder, observers: observers, plugins: plugins, clock: SystemLoadClock())
    }

    /// Creates a proxy whose loads do their work where `loadExecutor` says (the benchmarks
    /// compare the placements): by default, ``LoadExecutorChoice/automatic`` — the transport's
    /// thread for delegate-face loads when the process can use only one processor, the
    /// library's load executor otherwise.
    @_spi(Performance)
    public convenience init(
        transport: any HTTPTransport = CurlTransport.shared,
        logger: Logger = Logger(label: "AIFNetworking.APIProxy", factory: { _ in SwiftLogNoOpLogHandler() }),
        retryBudget: RetryPolicy.Budget = RetryPolicy.Budget(),
        offlineAfterFailures: Int = 2,
        loadExecutor: LoadExecutorChoice,
        recorder: FixtureTransport.Recorder? = .fromEnvironment(),
        observers: [any APIProxy.LoadObserver] = [],
        plugins: [any LoadPlugin] = []
    ) {
        self.init(
            transport: transport, logger: logger, retryBudget: retryBudget, offlineAfterFailures: offlineAfterFailures,
            loadExecutor: loadExecutor, recorder: recorder, observers: observers, plugins: plugins, clock: SystemLoadClock())
    }

    /// Creates a proxy whose loads read the time and wait on `clock` (a test's), and whose
    /// delegate-face loads run their steps on `executor` when it is given (a test's, which runs
    /// each step when the test says) rather than where `loadExecutor` puts them.
    init(
        transport: any HTTPTransport, logger: Logger, retryBudget: RetryPolicy.Budget, offlineAfterFailures: Int,
        loadExecutor: LoadExecutorChoice, recorder: FixtureTransport.Recorder?, observers: [any APIProxy.LoadObserver], plugins: [any LoadPlugin] = [],
        clock: any LoadClock, executor: (any StepExecutor)? = nil
    ) {
        self.plugins = plugins
        self.clock = clock
        self.transport = transport
        transportRoute = ExchangeRoute(transport)
        loadObservers = LoadObservers(all: observers)
        self.recorder = recorder
        self.logger = logger
        self.retryBudget = retryBudget
        connectivityMonitor = ConnectivityMonitor(failuresToGoOffline: offlineAfterFailures)
        let ownThread = loadExecutor.onTransportThread(processors: ProcessorBudget.current) ? transport.threadForLoads : nil
        self.loadExecutor = executor ?? ownThread ?? LoadExecutor.shared
        runsDelegateLoadsOnTransportThread = executor == nil && ownThread != nil
    }

    // MARK: The table

    struct Table {
        /// The loads in flight, by ID.
        var entries: [LoadID: any InFlightLoad] = [:]
        /// Told `true` once no load is in flight (a shutdown waiting for its loads), or `false`
        /// when the shutdown is cut short; then forgotten.
        var whenEmpty: [@Sendable (Bool) -> Void] = []
        /// The shutdown under way or done, which later calls wait for.
        var shutdown: Task<Void, Never>?
        /// Whether the shutdown's caller was cancelled: it waits for no load any more.
        var isShutdownCutShort = false
    }

    /// Hands out a new load's ID.
    func newID() -> LoadID {
        LoadID(rawValue: loadIDCounter.add(1, ordering: .relaxed).newValue)
    }

    /// Starts a manager's load: makes its ``Load`` and enters it in the table.
    func begin(group: LoadGroup?, owner: LoadOwner) -> Load {
        let load = Load(id: newID(), proxy: self, group: group, owner: owner)
        enter(load)
        return load
    }

    /// Enters a load in the table: cancelling it (by ID, group, manager or all) cancels it.
    func enter(_ load: any InFlightLoad) {
        load.owner?.loadEntered()
        table.withLock { $0.entries[load.id] = load }
    }

    /// Whether the proxy has observers.
    var hasObservers: Bool { !loadObservers.all.isEmpty }

    /// Asks the observers, if the proxy has any, what hears `load` (on the caller's thread).
    ///
    /// - Returns: What hears the load, or `nil`.
    func observation(of load: ObservedLoad) -> (any APIProxy.LoadObservation)? {
        hasObservers ? loadObservers.observation(of: load) : nil
    }

    /// Takes a load that has ended out of the table.
    func end(_ load: any InFlightLoad) {
        load.owner?.loadLeft()
        let emptied = table.withLock { table -> [@Sendable (Bool) -> Void] in
            table.entries.removeValue(forKey: load.id)
            guard !table.whenEmpty.isEmpty, table.entries.isEmpty else { return [] }
            defer { table.whenEmpty = [] }
            return table.whenEmpty
        }
        for tell in emptied { tell(true) }
    }

    /// Ends a load whose manager was deallocated before it ended (and so cancelled it): takes
    /// it out of the table, and tells its observers, the log and the plugins the manager had as
    /// it started.
    @inline(never)
    func endAbandoned(_ load: Load, plan: LoadPlan) {
        let id = load.id
        logger.notice(
            "cancelled \(id) \(plan.serviceName) \(plan.shownPath): its manager was released before the load ended, so no delegate hears of it (keep a reference to the manager while its loads run)")
        let error = plan.error(.cancelled, id: id, "the manager was deallocated")
        guard load.delivered() else { return }
        let outcome = ObservedLoad.Outcome(error: error)
        plan.observation?.loadDidEnd(outcome)
        plan.plugins?.didEnd(outcome)
    }

    /// Cancels one load. Nothing happens if it has ended.
    ///
    /// - Parameter id: The load's ID.
    public func cancel(_ id: LoadID) {
        table.withLock { $0.entries[id] }?.cancel(.asked)
    }

    /// Cancels several loads.
    ///
    /// - Parameter ids: Their IDs; those that have ended are skipped.
    public func cancel(_ ids: some Sequence<LoadID>) {
        let set = Set(ids)
        cancel(where: { set.contains($0) })
    }

    /// Cancels every load in a group.
    ///
    /// - Parameter group: The group the loads were started in.
    public func cancel(group: LoadGroup) {
        cancel(where: { _, load in load.group == group })
    }

    /// Cancels every load in flight.
    public func cancelAll() {
        cancel(where: { _, _ in true })
    }

    /// Cancels every load of one manager in flight.
    func cancel(ownedBy owner: LoadOwner) {
        cancel(where: { _, load in load.owner === owner })
    }

    /// The IDs of one manager's loads in flight, oldest first.
    func loadsInFlight(ownedBy owner: LoadOwner) -> [LoadID] {
        table.withLock { $0.entries.compactMap { $0.value.owner === owner ? $0.key : nil } }.sorted()
    }

    /// The IDs of the loads in flight, oldest first.
    public var loadsInFlight: [LoadID] {
        table.withLock { $0.entries.keys.sorted() }
    }

    /// Whether a load is still in flight.
    ///
    /// - Parameter id: The load's ID.
    public func isInFlight(_ id: LoadID) -> Bool {
        table.withLock { $0.entries[id] != nil }
    }

    private func cancel(where matches: (LoadID) -> Bool) {
        cancel(where: { id, _ in matches(id) })
    }

    private func cancel(where matches: (LoadID, any InFlightLoad) -> Bool) {
        // Each load hears its cancellation as an event of its own, outside the lock, and ends
        // itself (and leaves the table) once; a second cancellation changes nothing.
        let cancelled = table.withLock { table in table.entries.compactMap { matches($0.key, $0.value) ? $0.value : nil } }
        for load in cancelled { load.cancel(.asked) }
    }

    // MARK: Connectivity

    /// Whether this proxy's requests reach their servers, judged by their outcomes: online at
    /// any response, offline once `offlineAfterFailures` requests in a row fail to connect
    /// (see ``APIProxy/Connectivity``). Answers from the cache do not count.
    public var connectivity: Connectivity {
        connectivityMonitor.connectivity
    }

    /// The ``connectivity`` now, then each change, in order — to pause work while offline and
    /// resume it when back. The stream ends when the task iterating it is cancelled.
    ///
    /// ```swift
    /// Task {
    ///     for await state in APIProxy.shared.connectivityChanges() {
    ///         banner.isHidden = state != .offline
    ///     }
    /// }
    /// ```
    public func connectivityChanges() -> AsyncStream<Connectivity> {
        connectivityMonitor.changes()
    }

    // MARK: Logging

    @inline(never)
    func logSending(_ request: HTTPRequest, id: LoadID) {
        logger.info("request \(id) \(request.method) \(Self.loggable(request.url))")
        if logger.logLevel <= .debug {
            logger.debug("request \(id) headers: \(request.headers.redactingSecrets())")
        }
    }

    @inline(never)
    func logReceiving(_ response: HTTPResponse, for request: HTTPRequest, id: LoadID, started: Duration) {
        logger.info(
            "response \(id) \(response.statusCode) \(request.method) \(Self.loggable(request.url)) in \(milliseconds(since: started)) ms, \(response.body.count) bytes\(Self.resent(response.metrics.resends))")
        if logger.logLevel <= .debug {
            logger.debug("response \(id) headers: \(response.headers.redactingSecrets())")
        }
    }

    /// Logs a retry about to be made: at notice level when the server named the wait (a
    /// `Retry-After`, a rate limit's reset), which can be long.
    @inline(never)
    func logRetry(_ id: LoadID, _ attempt: RetryPolicy.Attempt) {
        if let header = attempt.waitHeader {
            logger.notice("retry \(id) waiting \(RetryPolicy.Reason.seconds(attempt.delay)) s (\(header)): \(attempt)")
        } else {
            logger.info("retry \(id) \(attempt)")
        }
    }

    /// Logs a request refused for its signing time, about to be signed again.
    @inline(never)
    func logClockResend(_ id: LoadID, offset: TimeInterval) {
        logger.info("signing time refused \(id): the server's clock is \(Int(offset)) s off ours; signing again with it")
    }

    /// Tells the log and the observers that a backend's circuit changed state.
    @inline(never)
    func circuitChanged(_ change: CircuitBreaker.Change, of resolved: ServiceRegistry.ResolvedService) {
        let name = resolved.circuitName
        switch change.to {
        case .open:
            let cause = change.from == .halfOpen ? "a probe failed" : "\(change.failures) requests failed in a row"
            logger.warning("circuit \(name) opened: \(cause); no request goes out for \(RetryPolicy.Reason.seconds(change.openFor ?? .zero)) s")
        case .halfOpen:
            logger.notice("circuit \(name) half-open: probes go out")
        case .closed:
            logger.notice("circuit \(name) closed: the probes succeeded")
        }
        for observer in loadObservers.all { observer.circuitDidChange(change, service: resolved.service.name, environment: resolved.environmentName) }
    }

    /// Logs a refused credential about to be renewed.
    @inline(never)
    func logRenewal(_ id: LoadID, generation: Int, heldBack: Bool) {
        if heldBack {
            logger.info("held back \(id): credential \(generation) was refused for an earlier request; sending with the renewed one")
        } else {
            logger.info("credential refused \(id): renewing credential \(generation), then sending once more")
        }
    }

    /// Logs an error policy naming a handler nobody registered.
    @inline(never)
    func logMissingHandler(_ id: LoadID, _ name: String) {
        logger.warning("error policy of \(id) names the handler \"\(name)\", which is not registered (ServiceRegistry.setErrorHandler)")
    }


    /// Logs why a failed attempt is not retried.
    @inline(never)
    func logNoRetry(_ id: LoadID, _ why: String) {
        logger.info("no retry \(id): \(why)")
    }

    @inline(never)
    func logFailure(_ error: any Error, for request: HTTPRequest, id: LoadID, started: Duration) {
        let resends = (error as? TransportError)?.resends ?? 0
        logger.info("failed \(id) \(request.method) \(Self.loggable(request.url)) after \(milliseconds(since: started)) ms: \(error)\(Self.resent(resends))")
    }

    /// What a log line adds for a request the transport sent again on a fresh connection.
    private static func resent(_ resends: Int) -> String {
        guard resends > 0 else { return "" }
        return "; sent \(resends + 1) times (a reused connection closed before answering, and the request is safe to repeat)"
    }

    /// Logs a load answered from the cache.
    func logCacheHit(_ id: LoadID, path: String, service: ServiceName, bytes: Int) {
        logger.info("response \(id) from cache: service \(service), path \(path), \(bytes) bytes")
    }

    func logOfflineFallback(_ id: LoadID, age: Duration, reason: APIError.Kind) {
        logger.warning("response \(id) from cache, \(RetryPolicy.Reason.seconds(age)) s old: the load failed (\(reason)) and the endpoint falls back to what it stored")
    }

    /// The URL for a log line: no password, no signature.
    static func loggable(_ url: URL) -> String {
        HTTPRequest.redactedURL(url)
    }

    private func milliseconds(since start: Duration) -> String {
        let elapsed = clock.now - start
        let value = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        return String(format: "%.1f", value)
    }
}

extension ServiceRegistry.ResolvedService {
    /// The circuit of this service environment, as messages name it: `"catalogue" (online)`.
    var circuitName: String {
        "\"\(service.name)\" (\(environmentName))"
    }
}
