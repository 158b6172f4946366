/// Supplies the parameters of a manager's loads, asked each time `loadData()` starts one.
public protocol APIManagerParamSource: AnyObject, Sendable {
    /// The parameters for the next load of `manager`.
    ///
    /// - Parameter manager: The manager starting a load.
    /// - Returns: Its parameters.
    func parameters<Content>(for manager: APIManager<Content>) -> Parameters
}

/// Hears how the loads started with `loadData()` ended, on the manager's
/// ``APIManager/callbackExecutor``: AIFNetworking's `managerCallAPIDidSuccess:` and
/// `managerCallAPIDidFailed:`, with the names ``MainActorManagerDelegate`` uses too.
///
/// One delegate can serve several managers: compare `manager === goodsManager`. A cancelled
/// load calls neither method. Loads made with `await manager.load(…)` return their result
/// instead of calling the delegate.
public protocol APIManagerDelegate: AnyObject, Sendable {
    /// A load succeeded.
    ///
    /// - Parameters:
    ///   - manager: The manager.
    ///   - response: The response, its content decoded.
    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>)

    /// A load failed.
    ///
    /// - Parameters:
    ///   - manager: The manager.
    ///   - error: Why.
    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError)

    /// An upload or download started with `loadData(with:sending:)` or `downloadData(with:to:)`
    /// has moved bytes (at most ten times a second, and at the end). Does nothing by default.
    ///
    /// - Parameters:
    ///   - manager: The manager.
    ///   - progress: The bytes so far, the totals when known, the throughput.
    ///   - requestID: The load's ID.
    func manager<Content>(_ manager: APIManager<Content>, didReportProgress progress: TransferProgress, requestID: RequestID)
}

extension APIManagerDelegate {
    /// Does nothing: most delegates do not follow progress.
    public func manager<Content>(_ manager: APIManager<Content>, didReportProgress progress: TransferProgress, requestID: RequestID) {}
}

/// Checks the parameters before a request is sent and the response after. Throw to reject:
/// the error's description becomes the ``APIError``'s message.
///
/// A manager validates with its own ``APIManager/validate(parameters:)`` and
/// ``APIManager/validate(response:)`` and then with its ``APIManager/validator``, if set.
public protocol APIManagerValidator: AnyObject, Sendable {
    /// Rejects bad parameters by throwing; no request is then sent.
    ///
    /// - Parameters:
    ///   - parameters: The parameters, reformed.
    ///   - manager: The manager about to send them.
    func validate<Content>(parameters: Parameters, for manager: APIManager<Content>) throws

    /// Rejects a response by throwing; it then ends as ``APIError/Kind/invalidResponse`` and is
    /// not cached.
    ///
    /// - Parameters:
    ///   - response: The decoded response.
    ///   - manager: The manager that received it.
    func validate<Content>(response: APIResponse<Content>, for manager: APIManager<Content>) throws
}

extension APIManagerValidator {
    /// Accepts any parameters.
    public func validate<Content>(parameters: Parameters, for manager: APIManager<Content>) throws {}
    /// Accepts any response.
    public func validate<Content>(response: APIResponse<Content>, for manager: APIManager<Content>) throws {}
}

/// Hooks into every stage of a manager's loads. Every method has a default that does nothing
/// (or says yes).
///
/// Order: `shouldCallAPI` → (validation, cache, send) → `afterCallingAPI`; when the load ends:
/// `beforePerformSuccess`/`beforePerformFail` → delegate → `afterPerformSuccess`/
/// `afterPerformFail`. The perform hooks run on the manager's callback executor (or in the
/// awaiting task for `load(…)`), and see cancelled loads too, as ``APIError/Kind-swift.struct/cancelled``;
/// a load whose manager was deallocated ends with ``afterPerformFail(ofDeallocatedManager:)``.
/// Every load's end reaches one of them.
public protocol APIManagerInterceptor: AnyObject, Sendable {
    /// Whether to go on with a load; `false` ends it as ``APIError/Kind/vetoedByInterceptor``.
    func shouldCallAPI<Content>(_ manager: APIManager<Content>, with parameters: Parameters) -> Bool
    /// The request has been handed to the proxy (or the load answered from the cache).
    func afterCallingAPI<Content>(_ manager: APIManager<Content>, with parameters: Parameters)
    /// Whether to send a failed load again, as its ``/AIFServices/RetryPolicy`` and the proxy's
    /// ``/AIFServices/RetryPolicy/Budget`` allow; `false` ends it with the failed attempt's outcome. Called on the
    /// thread the load runs on.
    func shouldRetry<Content>(_ manager: APIManager<Content>, attempt: RetryPolicy.Attempt) -> Bool
    /// Whether to tell the delegate of this success.
    func beforePerformSuccess<Content>(_ manager: APIManager<Content>, with response: APIResponse<Content>) -> Bool
    /// The delegate has been told of a success.
    func afterPerformSuccess<Content>(_ manager: APIManager<Content>, with response: APIResponse<Content>)
    /// Whether to tell the delegate of this failure (cancellations are never told).
    func beforePerformFail<Content>(_ manager: APIManager<Content>, with error: APIError) -> Bool
    /// The delegate has been told of a failure.
    func afterPerformFail<Content>(_ manager: APIManager<Content>, with error: APIError)
    /// A load ended after its manager was deallocated — always as
    /// ``APIError/Kind-swift.struct/cancelled``, since a manager cancels its loads when it goes
    /// — so the other hooks, which take the manager, cannot be called. The interceptor is the
    /// one the manager had when the load started. Called where the load ended.
    func afterPerformFail(ofDeallocatedManager error: APIError)
}

extension APIManagerInterceptor {
    /// Goes on.
    public func shouldCallAPI<Content>(_ manager: APIManager<Content>, with parameters: Parameters) -> Bool { true }
    /// Does nothing.
    public func afterCallingAPI<Content>(_ manager: APIManager<Content>, with parameters: Parameters) {}
    /// Lets the retry happen.
    public func shouldRetry<Content>(_ manager: APIManager<Content>, attempt: RetryPolicy.Attempt) -> Bool { true }
    /// Tells the delegate.
    public func beforePerformSuccess<Content>(_ manager: APIManager<Content>, with response: APIResponse<Content>) -> Bool { true }
    /// Does nothing.
    public func afterPerformSuccess<Content>(_ manager: APIManager<Content>, with response: APIResponse<Content>) {}
    /// Tells the delegate.
    public func beforePerformFail<Content>(_ manager: APIManager<Content>, with error: APIError) -> Bool { true }
    /// Does nothing.
    public func afterPerformFail<Content>(_ manager: APIManager<Content>, with error: APIError) {}
    /// Does nothing.
    public func afterPerformFail(ofDeallocatedManager error: APIError) {}
}

/// Turns a manager's last response into what a caller wants (a view model, a list of titles),
/// and optionally its last failure too.
public protocol DataReformer<Content, Output>: Sendable {
    /// The manager's content type.
    associatedtype Content: Sendable
    /// What it produces.
    associatedtype Output

    /// Reforms a response.
    func reform(_ response: APIResponse<Content>) -> Output
    /// Reforms a failure; `nil` (the default) means there is nothing to show for it.
    func reform(failure: APIError) -> Output?
}

extension DataReformer {
    /// Nothing to show for a failure.
    public func reform(failure: APIError) -> Output? { nil }
}

/// A reformer made of closures (``APIManager/lastOutcome(reformedBy:failure:)``).
struct ClosureReformer<Content: Sendable, Output>: DataReformer {
    private let success: @Sendable (APIResponse<Content>) -> Output
    private let failure: @Sendable (APIError) -> Output?

    init(success: @escaping @Sendable (APIResponse<Content>) -> Output, failure: @escaping @Sendable (APIError) -> Output? = { _ in nil }) {
        self.success = success
        self.failure = failure
    }

    func reform(_ response: APIResponse<Content>) -> Output { success(response) }
    func reform(failure error: APIError) -> Output? { failure(error) }
}
