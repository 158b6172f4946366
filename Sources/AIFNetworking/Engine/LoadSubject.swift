import Foundation

/// What a load is of, as the engine reads it: the endpoint it prepares the load for, how the
/// answer is decoded, and who hears the ending. An ``APIManager`` is one. The engine holds it
/// weakly while the load is in flight: a load does not keep its manager alive, and one whose
/// manager went away ends cancelled, heard by its observers and plugins only.
protocol LoadSubject<Content>: AnyObject, Sendable {
    /// What the answer's body decodes into.
    associatedtype Content: Decodable & Sendable

    /// Where the load's requests go.
    var proxy: APIProxy { get }
    /// Where the service is resolved.
    var registry: ServiceRegistry { get }
    /// Where answers are cached, when the endpoint has a cache policy.
    var cache: ResponseCache { get }
    /// What is called and how.
    var endpoint: Endpoint<Content> { get }
    /// The service called (the endpoint's, or an override's).
    var serviceName: ServiceName { get }
    /// The path under the service's base URL.
    var path: String { get }
    /// The request's method.
    var requestMethod: HTTPMethod { get }
    /// The plugins a load takes part with, after the proxy's.
    var plugins: [any LoadPlugin] { get }
    /// The group new loads join.
    var group: APIProxy.LoadGroup? { get }
    /// The subject's loads, as the proxy's table counts them.
    var owner: LoadOwner { get }

    /// The parameters as they are sent.
    func reformParameters(_ parameters: Parameters) -> Parameters
    /// The content of a response whose status and veto were checked.
    func decodeContent(from response: HTTPResponse, service: any Service) throws -> Content
    /// A load ended with `outcome`, on its way to its caller: the subject records it.
    func loadEnded(_ id: LoadID, with outcome: Result<APIResponse<Content>, APIError>)
    /// Where the delegates are told (``LoadDelivery/delegates``).
    var callbackExecutor: CallbackExecutor { get }
    /// Tells the delegates of `outcome`, on the callback executor, unless the plugins hold it
    /// back; the plugins hear before and after.
    func tellDelegates(_ outcome: Result<APIResponse<Content>, APIError>, _ observed: ObservedLoad.Outcome, plugins: LoadPlugins?)
}

/// Where a load's outcome goes, and to whom: what each face hands the engine as it starts a
/// load, and nothing else. Not generic, so that a load passes it around with no run-time type
/// lookups: a caller's completion is given beside it.
enum LoadDelivery: Sendable {
    /// To the subject's delegates, on its callback executor; the load's steps run on the
    /// proxy's load executor.
    case delegates
    /// To the caller that awaits it, through its completion, once, on `executor`, where the
    /// load's steps run too.
    case caller(on: any StepExecutor)
    /// To nobody but the subject's record and the plugins: a refresh in the background.
    case nobody

    /// Whether the delegates hear the outcome.
    var tellsDelegates: Bool {
        if case .delegates = self { return true }
        return false
    }
}

/// What a load is asked with: its parameters, and what moves besides them.
struct LoadInput: Sendable {
    /// The parameters before they are reformed.
    var parameters: Parameters
    /// What the call adds to the endpoint (headers, query items, a body value).
    var call = CallAdditions.none
    /// A body of its own, a file to download to, progress: `nil` for an ordinary load.
    var transfer: LoadTransfer?
    /// The load whose stale answer this one refreshes, if it is a refresh (never answered
    /// from the cache).
    var refreshing: LoadID?
    /// Whether a stale answer from the cache starts its refresh, a load of its own (the
    /// stream face starts it itself).
    var refreshesStale = true
    /// A full URL on the service's origin to load instead of the path (a page a response
    /// linked).
    var url: URL?
}
