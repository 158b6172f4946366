import Dispatch
import Foundation

/// Hears one manager's `loadData()` loads on the main actor, with the content typed: the shape
/// of a screen (a view controller, a view model) that owns its managers and keeps plain stored
/// properties.
///
/// ```swift
/// @MainActor
/// final class DetailScreen: MainActorManagerDelegate, MainActorParamSource {
///     let detail = GoodsDetailManager()
///     var title = ""
///
///     func show() {
///         detail.mainActorParamSource = self
///         detail.mainActorDelegate = self
///         detail.loadData()
///     }
///     func parameters(for manager: APIManager<Goods>) -> Parameters { ["id": 42] }
///     func manager(_ manager: APIManager<Goods>, didSucceedWith response: APIResponse<Goods>) {
///         title = response.content.title
///     }
///     func manager(_ manager: APIManager<Goods>, didFailWith error: APIError) { title = error.message }
/// }
/// ```
///
/// It is called on the main actor whatever the manager's ``APIManager/callbackExecutor``: with
/// the default, ``CallbackExecutor/mainActor``, between the perform hooks as the
/// ``APIManagerDelegate`` is; with another executor, on the main actor after them. A cancelled
/// load calls neither method. It may serve beside an ``APIManagerDelegate``; both are told.
@MainActor
public protocol MainActorManagerDelegate<Content>: AnyObject, Sendable {
    /// The manager's content type.
    associatedtype Content: Decodable & Sendable

    /// A load succeeded.
    ///
    /// - Parameters:
    ///   - manager: The manager.
    ///   - response: The response, its content decoded.
    func manager(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>)

    /// A load failed.
    ///
    /// - Parameters:
    ///   - manager: The manager.
    ///   - error: Why.
    func manager(_ manager: APIManager<Content>, didFailWith error: APIError)
}

/// Supplies the parameters of one manager's `loadData()` loads on the main actor, typed like
/// ``MainActorManagerDelegate``.
///
/// It is asked when `loadData()` — or a ``PagedAPIManager``'s `loadFirstPage()` or
/// `loadNextPage()` — is called on the main actor. A load started elsewhere cannot
/// ask it and fails at once with ``APIError/Kind-swift.struct/configuration``, naming why.
/// An ``APIManagerParamSource``, when the manager has one, is asked instead.
@MainActor
public protocol MainActorParamSource<Content>: AnyObject, Sendable {
    /// The manager's content type.
    associatedtype Content: Decodable & Sendable

    /// The parameters for the next load of `manager`.
    ///
    /// - Parameter manager: The manager starting a load.
    /// - Returns: Its parameters.
    func parameters(for manager: APIManager<Content>) -> Parameters
}

/// Whether the caller runs on the main actor: on the main thread, or in a block of the main
/// queue (the main actor's executor; under `dispatchMain()` a worker thread may drain it).
/// Unlike `MainActor.assumeIsolated`, it answers instead of trapping.
func isOnMainActor() -> Bool {
    if Thread.isMainThread { return true }
    _ = mainQueueMarked
    return DispatchQueue.getSpecific(key: mainQueueKey) == true
}

private let mainQueueKey = DispatchSpecificKey<Bool>()
private let mainQueueMarked: Void = DispatchQueue.main.setSpecific(key: mainQueueKey, value: true)
