// Former names: those from before the API said "load" for a load everywhere (a request is one
// attempt, an `HTTPRequest`), types that became nested in the type they belong to, and the
// hooks that became plugins. Each forwards to (or names) its replacement and goes in a later
// major version.

/// The former name of ``LoadID``.
@available(*, deprecated, renamed: "LoadID")
public typealias RequestID = LoadID

/// The former name of ``LoadGroup``.
@available(*, deprecated, renamed: "LoadGroup")
public typealias RequestGroup = LoadGroup

extension APIManager {
    /// The former name of ``cancelLoad(_:)``.
    @available(*, deprecated, renamed: "cancelLoad(_:)")
    public func cancelRequest(_ id: LoadID) { cancelLoad(id) }

    /// The former name of ``cancelAllLoads()``.
    @available(*, deprecated, renamed: "cancelAllLoads()")
    public func cancelAllRequests() { cancelAllLoads() }

    /// The former name of ``loadsInFlight``.
    @available(*, deprecated, renamed: "loadsInFlight")
    public var requestsInFlight: [LoadID] { loadsInFlight }
}

extension APIProxy {
    /// The former name of ``loadsInFlight``.
    @available(*, deprecated, renamed: "loadsInFlight")
    public var requestsInFlight: [LoadID] { loadsInFlight }
}

extension APIResponse {
    /// The former name of ``loadID``.
    @available(*, deprecated, renamed: "loadID")
    public var requestID: LoadID { loadID }
}

extension APIError {
    /// The former name of ``loadID``.
    @available(*, deprecated, renamed: "loadID")
    public var requestID: LoadID { loadID }
}

extension ObservedLoad {
    /// The former name of ``loadID``.
    @available(*, deprecated, renamed: "loadID")
    public var requestID: LoadID { loadID }

    /// The former spelling of ``init(loadID:service:environment:path:method:)``.
    @available(*, deprecated, renamed: "init(loadID:service:environment:path:method:)")
    public init(requestID: LoadID, service: ServiceName, environment: ServiceEnvironment.Name?, path: String, method: HTTPMethod) {
        self.init(loadID: requestID, service: service, environment: environment, path: path, method: method)
    }
}

/// Replaced by ``LoadPlugin``: one list of moments for what the interceptor and the validator
/// did (see its table).
@available(*, unavailable, renamed: "LoadPlugin", message: "hooks are LoadPlugins now: set the manager's plugins")
public typealias APIManagerInterceptor = LoadPlugin

/// Replaced by ``LoadPlugin``: its ``LoadPlugin/loadWillStart(_:parameters:)`` and
/// ``LoadPlugin/loadDidReceive(_:of:)`` throw to reject parameters and responses.
@available(*, unavailable, renamed: "LoadPlugin", message: "validate in a LoadPlugin's loadWillStart(_:parameters:) and loadDidReceive(_:of:)")
public typealias APIManagerValidator = LoadPlugin

/// The former name of ``Paging/ItemList``.
@available(*, deprecated, renamed: "Paging.ItemList")
public typealias ItemList = Paging.ItemList

/// The former name of ``Paging/PageContent``.
@available(*, deprecated, renamed: "Paging.PageContent")
public typealias PageContent = Paging.PageContent

/// The former name of ``ResponseCache/Policy``.
@available(*, deprecated, renamed: "ResponseCache.Policy")
public typealias CachePolicy = ResponseCache.Policy
