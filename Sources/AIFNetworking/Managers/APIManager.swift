public import Foundation
@_spi(CrossModule) import AIFTransport

/// One endpoint of a service: subclass it once per endpoint and override what differs.
///
/// ```swift
/// final class GoodsDetailManager: APIManager<Goods>, @unchecked Sendable {
///     // Restated as Swift requires of subclasses; safe: it adds no stored state.
///     override var serviceName: ServiceName { "shop" }
///     override var path: String { "goods/{id}" }
/// }
///
/// // Delegate face:
/// detail.paramSource = self
/// detail.delegate = self
/// let id = detail.loadData()          // … manager(detail, didSucceedWith:)
///
/// // async face:
/// let goods = try await detail.load(["id": 7]).content
/// ```
///
/// Content is decoded from JSON with `Decodable` by ``/AIFServices/FastJSONDecoder`` (set the endpoint's ``Endpoint/decoder``,
/// or ``decodeContent(from:service:)`` for other formats; use ``NoContent`` for endpoints
/// without a body).
///
/// **Plugins** (``plugins``, see ``LoadPlugin``) take part in its loads: refuse one before it
/// starts, add headers to each attempt, decline a retry, reject a response, hold a delivery
/// back.
///
/// **The load pipeline**, the same for both faces: each face hands the load engine the
/// parameters and where the outcome goes; the engine prepares the load from the manager's
/// endpoint (``reformParameters(_:)``, the plugins, the checks, the cache), sends it, checks
/// and decodes the answer (``decodeContent(from:service:)``) and delivers it, once;
/// <doc:OneRequestsPath> follows a load through it. Every load ends exactly once; a cancelled
/// one calls neither delegate method.
///
/// **Subclasses** restate the `@unchecked Sendable` conformance, as the compiler asks: the
/// manager's own state is behind a lock, and what a subclass adds must be safe to read from
/// any thread (see below).
///
/// **Threads.** A manager may be used from any thread, with several loads in flight. The
/// configuration members a subclass overrides (``serviceName``, ``path``,
/// ``requestMethod``, …) are read when a load starts, on the caller's thread, and
/// ``decodeContent(from:service:)`` where the load ends; the delegate runs on
/// ``callbackExecutor``. Overrides must therefore be safe to call from any thread — constants,
/// or state behind a lock.
///
/// A manager that is deallocated cancels the loads it has in flight.
open class APIManager<Content: Decodable & Sendable>: @unchecked Sendable {
    // Unchecked because an `open` class cannot be checked: every stored property is a `let` of
    // a `Sendable` type or lives in `state`, behind a lock. Subclasses are told above that their
    // overrides must be thread-safe.

    /// The proxy loads go through.
    public let proxy: APIProxy
    /// Where ``serviceName`` is resolved.
    let registry: ServiceRegistry
    /// Where responses are cached when the endpoint has a ``Endpoint/cachePolicy``.
    let cache: ResponseCache

    /// What the manager calls and how, as given to `init` — a subclass passes its own
    /// (`convenience init() { self.init(Endpoint(…)) }`). Each load reads its settings from here.
    public let endpoint: Endpoint<Content>
    let state = Locked(ManagerState())

    struct ManagerState {
        weak var paramSource: (any APIManagerParamSource)?
        weak var delegate: (any APIManagerDelegate)?
        var plugins: [any LoadPlugin] = []
        weak var mainActorDelegate: (any MainActorManagerDelegate<Content>)?
        weak var mainActorParamSource: (any MainActorParamSource<Content>)?
        var callbackExecutor = CallbackExecutor.mainActor
        var group: APIProxy.LoadGroup?
        var last: Result<APIResponse<Content>, APIError>?
    }

    /// The call `loadData()` loads, for a manager made for one call (see `CallArguments`).
    let boundArguments: CallArguments?
    /// The manager's loads as the proxy's table finds them (the manager keeps no list).
    let owner = LoadOwner()

    /// Creates a manager for an endpoint described as a value — no subclass needed.
    ///
    /// - Parameters:
    ///   - endpoint: What to call and how.
    ///   - proxy: The proxy; ``APIProxy/shared`` by default.
    ///   - registry: Where services are resolved; ``/AIFServices/ServiceRegistry/shared`` by default.
    ///   - cache: The response cache; ``ResponseCache/shared`` by default.
    public init(_ endpoint: Endpoint<Content>, proxy: APIProxy = .shared, registry: ServiceRegistry = .shared, cache: ResponseCache = .shared) {
        self.endpoint = endpoint
        self.proxy = proxy
        self.registry = registry
        self.cache = cache
        boundArguments = nil
    }

    /// Creates a manager for one call of an endpoint: ``loadData()`` loads `arguments` (no
    /// param source is asked) and its delegate hears the outcome.
    ///
    /// - Parameters:
    ///   - endpoint: What to call and how.
    ///   - arguments: The call's parameters, headers, query items and body.
    ///   - proxy: The proxy.
    ///   - registry: Where services are resolved.
    ///   - cache: The response cache.
    package init(_ endpoint: Endpoint<Content>, calling arguments: CallArguments, proxy: APIProxy, registry: ServiceRegistry, cache: ResponseCache) {
        self.endpoint = endpoint
        self.proxy = proxy
        self.registry = registry
        self.cache = cache
        boundArguments = arguments
    }

    /// Creates a manager.
    ///
    /// - Parameters:
    ///   - service: The service to call, unless a subclass overrides ``serviceName``.
    ///   - path: The method to call, unless a subclass overrides ``path``.
    ///   - proxy: The proxy; ``APIProxy/shared`` by default.
    ///   - registry: Where services are resolved; ``/AIFServices/ServiceRegistry/shared`` by default.
    ///   - cache: The response cache; ``ResponseCache/shared`` by default.
    public init(
        service: ServiceName? = nil,
        path: String? = nil,
        proxy: APIProxy = .shared,
        registry: ServiceRegistry = .shared,
        cache: ResponseCache = .shared
    ) {
        endpoint = Endpoint(service: service ?? ServiceName(""), path: path ?? "")
        self.proxy = proxy
        self.registry = registry
        self.cache = cache
        boundArguments = nil
    }

    deinit {
        if owner.hasLoadsInFlight { proxy.cancel(ownedBy: owner) }
    }

    // MARK: What to call (override)

    /// The service to call: the ``endpoint``'s, unless overridden (AIFNetworking's
    /// `serviceType`).
    open var serviceName: ServiceName { endpoint.service }
    /// The path under the service's base URL and version, with `{name}` placeholders filled
    /// from the parameters (`goods/{id}`): the ``endpoint``'s, unless overridden
    /// (AIFNetworking's `methodName`).
    open var path: String { endpoint.path }
    /// The request type: the ``endpoint``'s (GET by default), unless overridden
    /// (AIFNetworking's `requestType`).
    open var requestMethod: HTTPMethod { endpoint.method }

    // MARK: Transforms (override)

    /// Rewrites the parameters just before the call: add a page, rename keys, fill a path
    /// placeholder (AIFNetworking's `reformParams:`). The endpoint's
    /// ``Endpoint/reformParameters``, or unchanged, by default.
    ///
    /// - Parameter parameters: The parameters from the source or the call.
    /// - Returns: The parameters to send.
    open func reformParameters(_ parameters: Parameters) -> Parameters { endpoint.reformParameters?(parameters) ?? parameters }

    /// Decodes the body into the content type: through the endpoint's ``Endpoint/decoder``, else
    /// the service's ``/AIFServices/Service/decoder``, else a default ``/AIFServices/FastJSONDecoder``; the content is the
    /// endpoint's ``Endpoint/envelope``'s, or the ``/AIFServices/Service/envelope``'s, when there is one; ``NoContent`` ignores the body. A
    /// ``/AIFServices/FastJSONDecoder`` reads the body the service's ``/AIFServices/Service/applicationErrors`` rule
    /// parsed, without parsing it again. Override for other formats.
    ///
    /// - Parameters:
    ///   - response: The HTTP response, its status already checked.
    ///   - service: The service it came from.
    /// - Returns: The content.
    open func decodeContent(from response: HTTPResponse, service: any Service) throws -> Content {
        // A metatype comparison first: a conditional cast per load is a runtime call (and kept
        // out of line, as is its optional's type lookup).
        if Content.self == NoContent.self { return try Self.noContent() }
        let envelope = endpoint.envelope ?? service.envelope
        let fast: FastJSONDecoder
        if let chosen = endpoint.decoder ?? service.decoder {
            guard let chosen = chosen as? FastJSONDecoder else {
                // Another decoder reads bytes: an envelope's content is cut out for it.
                guard let envelope else { return try chosen.decode(Content.self, from: response.body) }
                let tape = try response.json?.tape ?? JSONTape(decoding: response.body)
                return try chosen.decode(Content.self, from: envelope.content(of: tape))
            }
            fast = chosen
        } else {
            fast = sharedJSONDecoder
        }
        let tape = try response.json?.tape ?? JSONTape(decoding: response.body)
        return try fast.decode(Content.self, from: tape, at: envelope?.contentIndex(in: tape) ?? 0)
    }

    @inline(never)
    private static func noContent() throws -> Content {
        guard let none = NoContent() as? Content else {
            throw DecodingError.typeMismatch(Content.self, .init(codingPath: [], debugDescription: "NoContent is not \(Content.self)"))
        }
        return none
    }

    // MARK: Driven by

    /// Supplies the parameters of `loadData()`; held weakly.
    public var paramSource: (any APIManagerParamSource)? {
        get { state.withLock { $0.paramSource } }
        set { state.withLock { $0.paramSource = newValue } }
    }

    /// Hears the outcome of `loadData` loads; held weakly.
    public var delegate: (any APIManagerDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    /// Hears `loadData` loads on the main actor, typed (see ``MainActorManagerDelegate``);
    /// held weakly.
    public var mainActorDelegate: (any MainActorManagerDelegate<Content>)? {
        get { state.withLock { $0.mainActorDelegate } }
        set { state.withLock { $0.mainActorDelegate = newValue } }
    }

    /// Supplies the parameters of `loadData()` on the main actor, typed (see
    /// ``MainActorParamSource``); held weakly. ``paramSource`` wins when both are set.
    public var mainActorParamSource: (any MainActorParamSource<Content>)? {
        get { state.withLock { $0.mainActorParamSource } }
        set { state.withLock { $0.mainActorParamSource = newValue } }
    }

    /// What takes part in this manager's loads, asked in order at each moment after the proxy's
    /// own ``APIProxy/plugins`` (see ``LoadPlugin``); none by default. A load keeps the list it
    /// started with.
    public var plugins: [any LoadPlugin] {
        get { state.withLock { $0.plugins } }
        set { state.withLock { $0.plugins = newValue } }
    }

    /// Where the delegate and the plugins' delivery moments are called; the main actor by
    /// default.
    public var callbackExecutor: CallbackExecutor {
        get { state.withLock { $0.callbackExecutor } }
        set { state.withLock { $0.callbackExecutor = newValue } }
    }

    /// The group new loads join, so that ``APIProxy/cancel(group:)`` can cancel them together.
    public var group: APIProxy.LoadGroup? {
        get { state.withLock { $0.group } }
        set { state.withLock { $0.group = newValue } }
    }

    // MARK: Loading

    /// Starts a load with the parameters from ``paramSource`` or ``mainActorParamSource`` (none
    /// without either) — or, for a manager a typed interface made for one call, that call's
    /// arguments.
    ///
    /// - Returns: The load's ID, to cancel it; the outcome goes to the delegate.
    @discardableResult
    public func loadData() -> LoadID {
        if let boundArguments { return loadData(boundArguments) }
        return switch sourceParameters() {
        case .success(let parameters): loadData(with: parameters ?? [:])
        case .failure(let message): failWithoutSending(.configuration, message, onStart: nil)
        }
    }

    /// The parameters of ``paramSource``, or of ``mainActorParamSource`` on the main actor;
    /// `nil` without either. Fails, saying why, when the only source is a main-actor one and
    /// this is not the main actor: a load never goes out without the parameters it was given.
    func sourceParameters() -> Result<Parameters?, SourceUnreachable> {
        if let source = paramSource { return .success(source.parameters(for: self)) }
        guard let source = mainActorParamSource else { return .success(nil) }
        guard isOnMainActor() else {
            return .failure(SourceUnreachable(
                "the param source is a MainActorParamSource, which can only be asked on the main actor: start the load there"))
        }
        return .success(MainActor.assumeIsolated { source.parameters(for: self) })
    }

    /// Why a load's param source could not be asked.
    struct SourceUnreachable: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// A load of the async face that ends at once with this error, nothing sent: entered and
    /// ended as every load is (its observers told); the error is the caller's to throw.
    func failedLoad(_ kind: APIError.Kind, _ message: String) -> APIError {
        let load = startLoad()
        let error = APIError(kind, loadID: load.id, service: serviceName, path: path, message: message)
        if case .failure(let ended) = load.endWithoutSending(.failed(error), of: self, delivery: .nobody) { return ended }
        return error
    }

    /// Starts a load that fails at once with this error, ended off the caller's stack like
    /// every load; `onStart` hears its ID first.
    func failWithoutSending(_ kind: APIError.Kind, _ message: SourceUnreachable, onStart: ((LoadID) -> Void)?) -> LoadID {
        let load = startLoad()
        onStart?(load.id)
        let error = APIError(kind, loadID: load.id, service: serviceName, path: path, message: message.message)
        // The manager is held until then: a load that sent nothing ends on the next turn.
        callbackExecutor.run { load.endWithoutSending(.failed(error), of: self, delivery: .delegates) }
        return load.id
    }

    /// Starts a load with the given parameters, and headers or query items of this call's own.
    ///
    /// - Parameters:
    ///   - parameters: The parameters (the source is not asked).
    ///   - headers: Headers over the endpoint's and the service's; none by default.
    ///   - query: Query items after those the parameters make; none by default.
    /// - Returns: The load's ID, to cancel it; the outcome goes to the delegate.
    @discardableResult
    public func loadData(with parameters: Parameters, headers: HTTPHeaders = HTTPHeaders(), query: [URLQueryItem] = []) -> LoadID {
        loadData(with: parameters, onStart: nil, call: CallAdditions(headers: headers, query: query))
    }

    /// Starts a load whose body is `body` encoded — as JSON, or a form when `encoding` (or the
    /// endpoint, or the service) says so; the parameters fill the path and go in the query.
    ///
    /// - Parameters:
    ///   - parameters: The parameters (the source is not asked); none by default.
    ///   - body: The body's value, encoded with the service's ``/AIFServices/Service/encoder``.
    ///   - encoding: JSON or a form; the endpoint's or the service's choice by default.
    ///   - headers: Headers over the endpoint's and the service's; none by default.
    ///   - query: Query items after those the parameters make; none by default.
    /// - Returns: The load's ID, to cancel it; the outcome goes to the delegate.
    @discardableResult
    public func loadData(
        with parameters: Parameters = [:], body: some Encodable & Sendable, encoding: Parameters.BodyEncoding? = nil, headers: HTTPHeaders = HTTPHeaders(),
        query: [URLQueryItem] = []
    ) -> LoadID {
        loadData(with: parameters, onStart: nil, call: CallAdditions(headers: headers, query: query, body: body, bodyEncoding: encoding))
    }

    /// Starts a load, telling `onStart` its ID before anything can end it.
    ///
    /// - Parameter url: A full URL on the service's origin to load instead of ``path`` (the
    ///   next page a response linked).
    @discardableResult
    func loadData(
        with parameters: Parameters, onStart: ((LoadID) -> Void)?, transfer: LoadTransfer? = nil, refreshing: LoadID? = nil, deliver: Bool = true,
        at url: URL? = nil, call: CallAdditions = .none
    ) -> LoadID {
        let load = startLoad()
        onStart?(load.id)
        let input = LoadInput(parameters: parameters, call: call, transfer: transfer, refreshing: refreshing, url: url)
        load.run(of: self, input, delivery: deliver ? .delegates : .nobody)
        return load.id
    }

    /// Loads and returns the decoded response: the same pipeline as
    /// ``loadData(with:headers:query:)``, with the result returned instead of told to the
    /// delegate. Cancelling the calling task cancels the load.
    ///
    /// ```swift
    /// let issues = try await repoIssues.load(["owner": "octo", "repo": "shop"], headers: ["X-Request-Id": requestID], query: [URLQueryItem(name: "state", value: "open")])
    /// ```
    ///
    /// - Parameters:
    ///   - parameters: The parameters (the source is not asked); none by default.
    ///   - headers: Headers over the endpoint's and the service's; none by default.
    ///   - query: Query items after those the parameters make; none by default.
    /// - Returns: The response.
    /// - Throws: ``APIError``; ``APIError/Kind/cancelled`` when cancelled.
    public func load(_ parameters: Parameters = [:], headers: HTTPHeaders = HTTPHeaders(), query: [URLQueryItem] = []) async throws(APIError) -> APIResponse<Content> {
        try await load(parameters, transfer: nil, call: CallAdditions(headers: headers, query: query))
    }

    /// Loads with `body` encoded as the request's body — JSON, or a form when `encoding` (or the
    /// endpoint, or the service) says so — and returns the decoded response; the parameters
    /// fill the path and go in the query.
    ///
    /// ```swift
    /// let created = try await createIssue.load(["owner": "octo", "repo": "shop"], body: NewIssue(title: "Cups arrive chipped", labels: ["bug"]))
    /// ```
    ///
    /// A body that cannot be encoded fails the load before anything is sent
    /// (``APIError/Kind/invalidParameters``, naming its type and where in it encoding failed). A
    /// signature that covers the body covers these bytes; every attempt sends the same ones.
    ///
    /// - Parameters:
    ///   - parameters: The parameters (the source is not asked); none by default.
    ///   - body: The body's value, encoded with the service's ``/AIFServices/Service/encoder``.
    ///   - encoding: JSON or a form; the endpoint's or the service's choice by default.
    ///   - headers: Headers over the endpoint's and the service's; none by default.
    ///   - query: Query items after those the parameters make; none by default.
    /// - Returns: The response.
    /// - Throws: ``APIError``; ``APIError/Kind/cancelled`` when cancelled.
    public func load(
        _ parameters: Parameters = [:], body: some Encodable & Sendable, encoding: Parameters.BodyEncoding? = nil, headers: HTTPHeaders = HTTPHeaders(),
        query: [URLQueryItem] = []
    ) async throws(APIError) -> APIResponse<Content> {
        try await load(parameters, transfer: nil, call: CallAdditions(headers: headers, query: query, body: body, bodyEncoding: encoding))
    }

    /// Loads a full URL on the service's origin instead of ``path``, with no parameters of its
    /// own: the next page a response linked (`Link: <…>; rel="next"`), which carries them.
    package func load(linked url: URL) async throws(APIError) -> APIResponse<Content> {
        try await load([:], transfer: nil, at: url)
    }

    /// The async face, with what the load moves besides its parameters.
    ///
    /// - Parameters:
    ///   - refreshing: The load whose stale answer this one refreshes, if it is a refresh.
    ///   - refreshesStale: Whether a stale answer starts its refresh in the background (the
    ///     stream face starts it itself).
    ///   - url: A full URL on the service's origin to load instead of ``path``.
    func load(
        _ parameters: Parameters, transfer: LoadTransfer?, refreshing: LoadID? = nil, refreshesStale: Bool = true, at url: URL? = nil,
        call: CallAdditions = .none
    ) async throws(APIError) -> APIResponse<Content> {
        let load = startLoad()
        let input = LoadInput(parameters: parameters, call: call, transfer: transfer, refreshing: refreshing, refreshesStale: refreshesStale, url: url)
        // The load's steps run in this task: two thread hops, to the transport and back.
        let result = await withTaskCancellationHandler {
            await AwaitingTaskExecutor.outcome { executor, completion in
                load.run(of: self, input, delivery: .caller(on: executor), then: completion)
            }
        } onCancel: {
            load.cancel(.asked)
        }
        return try result.get()
    }

    /// Loads, and hands over each response as it comes: one — or, when the manager's
    /// ``ResponseCache/Policy/staleWhileRevalidate`` answers with an expired response, that one at
    /// once and then the refresh's (whose ``APIResponse/refreshes`` names the first). A
    /// failure ends the sequence with the ``APIError``; ending the iteration early cancels
    /// the load under way.
    ///
    /// ```swift
    /// for try await response in catalogue.responses(["page": 1]) {
    ///     show(response.content, dimmed: response.isStale)
    /// }
    /// ```
    ///
    /// - Parameter parameters: The parameters; none by default.
    /// - Returns: The responses.
    public func responses(_ parameters: Parameters = [:]) -> AsyncThrowingStream<APIResponse<Content>, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do throws(APIError) {
                    let first = try await load(parameters, transfer: nil, refreshesStale: false)
                    continuation.yield(first)
                    if case .staleCache = first.origin {
                        continuation.yield(try await load(parameters, transfer: nil, refreshing: first.loadID))
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Cancels one of this manager's loads (any load's, in fact: IDs are global).
    ///
    /// - Parameter id: The ID `loadData` returned.
    public func cancelLoad(_ id: LoadID) {
        proxy.cancel(id)
    }

    /// Cancels every load of this manager in flight.
    public func cancelAllLoads() {
        proxy.cancel(ownedBy: owner)
    }

    /// Whether any load of this manager is in flight.
    public var isLoading: Bool { owner.hasLoadsInFlight }

    /// The IDs of this manager's loads in flight, oldest first.
    public var loadsInFlight: [LoadID] { proxy.loadsInFlight(ownedBy: owner) }

    /// The last load's outcome (of either face): its response, or its failure; `nil` before any
    /// load ended. Cancellations are not recorded. What AIFNetworking calls `fetchData`:
    /// `try manager.lastOutcome?.get().content`.
    public var lastOutcome: Result<APIResponse<Content>, APIError>? {
        state.withLock { $0.last }
    }

    /// The last load's outcome as a reformer shapes it: its response, or its failure if the
    /// last load failed (`nil` before any load, or when the reformer shows nothing for it) —
    /// what AIFNetworking calls `fetchDataWithReformer:`.
    ///
    /// - Parameter reformer: Turns the response (or failure) into what the caller wants.
    /// - Returns: What the reformer made.
    public func lastOutcome<Reformer: DataReformer>(reformedBy reformer: Reformer) -> Reformer.Output? where Reformer.Content == Content {
        switch state.withLock({ $0.last }) {
        case .success(let response)?: reformer.reform(response)
        case .failure(let error)?: reformer.reform(failure: error)
        case nil: nil
        }
    }

    /// Forgets this manager's cached responses (its service and path, any parameters).
    public func invalidateCache() {
        cache.removeAll(.method(serviceName, path))
    }

    /// Called in the load's task when a load has ended, before delivery (paging keeps its
    /// cursor here).
    func loadDidEnd(_ id: LoadID, result: Result<APIResponse<Content>, APIError>) {}
}

/// Used by managers whose manager and service name no decoder.
let sharedJSONDecoder = FastJSONDecoder()
