/// Takes part in a manager's loads at a few moments: before a load starts, before each of its
/// attempts is signed, when a failed attempt could be sent again, when its response has been
/// decoded, and as it ends. The one way to hook into a load (AIFNetworking's interceptor and
/// validator moments, Moya's plugins); ``APIProxy/LoadObserver`` is its read-only form, for a whole
/// proxy (metrics, tracing).
///
/// Every moment has a default that does nothing (or says yes), so a plugin writes only the
/// moments it needs. A manager asks its ``APIManager/plugins`` in order; each moment gets the
/// load as ``ObservedLoad`` (its ID, service, environment, path, method), so one plugin can
/// serve many managers and tell their loads apart.
///
/// ```swift
/// struct RequiresSignIn: LoadPlugin {
///     let session: Session
///     func loadWillStart(_ load: ObservedLoad, parameters: Parameters) throws {
///         guard session.isSignedIn else { throw SignInNeeded() }
///     }
/// }
///
/// struct RequestIDHeader: LoadPlugin {
///     func attemptWillBeSigned(_ attempt: Int, headers: inout HTTPHeaders, of load: ObservedLoad) {
///         headers.set(name: "X-Request-ID", value: "\(load.loadID.rawValue)-\(attempt)")
///     }
/// }
///
/// goodsManager.plugins = [RequiresSignIn(session: session), RequestIDHeader()]
/// ```
///
/// | AIFNetworking | here |
/// |---|---|
/// | `shouldCallAPIWithParams:`, a validator's `isCorrectWithParamsData:` | ``loadWillStart(_:parameters:)`` throws |
/// | `afterCallingAPIWithParams:` | ``attemptWillBeSigned(_:headers:of:)`` |
/// | a validator's `isCorrectWithCallBackData:` | ``loadDidReceive(_:of:)`` throws |
/// | `beforePerformSuccessWithResponse:`, `beforePerformFailWithResponse:` | ``loadWillDeliver(_:of:)`` |
/// | `afterPerformSuccessWithResponse:`, `afterPerformFailWithResponse:` | ``loadDidEnd(_:of:)`` |
///
/// `loadWillStart` runs on the thread that starts the load, the delivery moments where the
/// outcome is delivered (the manager's ``APIManager/callbackExecutor``, or the awaiting task),
/// the others where the load's step runs (the transport's thread or the load executor): keep
/// them short and never block.
public protocol LoadPlugin: Sendable {
    /// A load is about to start, its service resolved and its parameters reformed. Throw to
    /// refuse it: nothing is sent, and it ends as ``APIError/Kind-swift.struct/invalidParameters``
    /// with your error as its ``APIError/underlyingError``.
    ///
    /// - Parameters:
    ///   - load: The load.
    ///   - parameters: Its parameters, reformed.
    func loadWillStart(_ load: ObservedLoad, parameters: Parameters) throws

    /// An attempt is about to be signed and sent: headers added here are signed with the rest.
    ///
    /// - Parameters:
    ///   - attempt: The attempt's number, 1 for the first.
    ///   - headers: The request's own headers so far (before the service's and the signature's).
    ///   - load: The load.
    func attemptWillBeSigned(_ attempt: Int, headers: inout HTTPHeaders, of load: ObservedLoad)

    /// An attempt failed and the load's ``/AIFServices/RetryPolicy`` would send it again;
    /// `false` ends the load with that attempt's outcome, saying a plugin declined the retry.
    ///
    /// - Parameters:
    ///   - retry: The failed attempt and why a retry is possible.
    ///   - load: The load.
    /// - Returns: Whether the retry may go ahead (the proxy's retry budget is asked next).
    func loadShouldRetry(_ retry: RetryPolicy.Attempt, of load: ObservedLoad) -> Bool

    /// The load's response arrived and was decoded. Throw to reject it: it then ends as
    /// ``APIError/Kind-swift.struct/invalidResponse`` and is not cached.
    ///
    /// - Parameters:
    ///   - response: The decoded response.
    ///   - load: The load.
    func loadDidReceive<Content>(_ response: APIResponse<Content>, of load: ObservedLoad) throws

    /// The load ended and its outcome is about to be delivered; `false` keeps the delegate from
    /// hearing it (a caller awaiting `load(…)` always gets its result). Cancelled loads come
    /// here too, though no delegate hears of them.
    ///
    /// - Parameters:
    ///   - outcome: The response, or why the load failed.
    ///   - load: The load.
    /// - Returns: Whether to tell the delegate.
    func loadWillDeliver<Content>(_ outcome: Result<APIResponse<Content>, APIError>, of load: ObservedLoad) -> Bool

    /// The load's outcome has been delivered (or the load ended after its manager was
    /// deallocated, as cancelled): called exactly once for every load that reached
    /// ``loadWillStart(_:parameters:)``, and last.
    ///
    /// - Parameters:
    ///   - outcome: How the load ended.
    ///   - load: The load.
    func loadDidEnd(_ outcome: ObservedLoad.Outcome, of load: ObservedLoad)
}

extension LoadPlugin {
    /// Lets the load start.
    public func loadWillStart(_ load: ObservedLoad, parameters: Parameters) throws {}
    /// Adds nothing.
    public func attemptWillBeSigned(_ attempt: Int, headers: inout HTTPHeaders, of load: ObservedLoad) {}
    /// Lets the retry happen.
    public func loadShouldRetry(_ retry: RetryPolicy.Attempt, of load: ObservedLoad) -> Bool { true }
    /// Accepts the response.
    public func loadDidReceive<Content>(_ response: APIResponse<Content>, of load: ObservedLoad) throws {}
    /// Tells the delegate.
    public func loadWillDeliver<Content>(_ outcome: Result<APIResponse<Content>, APIError>, of load: ObservedLoad) -> Bool { true }
    /// Does nothing.
    public func loadDidEnd(_ outcome: ObservedLoad.Outcome, of load: ObservedLoad) {}
}

/// A manager's plugins as one of its loads started, with the load they are told about: what
/// the engine asks before signing and retrying, and what a load whose manager was deallocated
/// tells its end. Only a manager with plugins makes one.
final class LoadPlugins: Sendable {
    let list: [any LoadPlugin]
    let load: ObservedLoad

    init(_ list: [any LoadPlugin], load: ObservedLoad) {
        self.list = list
        self.load = load
    }

    /// Refuses the load when a plugin throws.
    func willStart(parameters: Parameters) throws {
        for plugin in list { try plugin.loadWillStart(load, parameters: parameters) }
    }

    func attemptWillBeSigned(_ attempt: Int, headers: inout HTTPHeaders) {
        for plugin in list { plugin.attemptWillBeSigned(attempt, headers: &headers, of: load) }
    }

    /// Whether every plugin lets the retry happen (asked in order, until one says no).
    func allowRetry(_ retry: RetryPolicy.Attempt) -> Bool {
        list.allSatisfy { $0.loadShouldRetry(retry, of: load) }
    }

    /// Rejects the response when a plugin throws.
    func didReceive<Content>(_ response: APIResponse<Content>) throws {
        for plugin in list { try plugin.loadDidReceive(response, of: load) }
    }

    /// Whether to tell the delegate: every plugin is asked, as each may note the outcome.
    func willDeliver<Content>(_ outcome: Result<APIResponse<Content>, APIError>) -> Bool {
        var tell = true
        for plugin in list where !plugin.loadWillDeliver(outcome, of: load) { tell = false }
        return tell
    }

    func didEnd(_ outcome: ObservedLoad.Outcome) {
        for plugin in list { plugin.loadDidEnd(outcome, of: load) }
    }
}
