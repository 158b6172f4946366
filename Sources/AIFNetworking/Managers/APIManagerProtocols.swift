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
    ///   - loadID: The load's ID.
    func manager<Content>(_ manager: APIManager<Content>, didReportProgress progress: TransferProgress, loadID: LoadID)
}

extension APIManagerDelegate {
    /// Does nothing: most delegates do not follow progress.
    public func manager<Content>(_ manager: APIManager<Content>, didReportProgress progress: TransferProgress, loadID: LoadID) {}
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
