import Foundation

/// Everything needed to sign, send and check a request, read from the manager when the load
/// started. Not nested in the generic manager, so its type is known at compile time; and a
/// class, immutable, so the async frames of a load (each holding it across an await) carry one
/// reference instead of 300-odd bytes — small frames fit in the task's own memory instead of
/// each taking a fresh allocation.
final class LoadPlan: Sendable {
    let resolved: ServiceRegistry.ResolvedService
    let serviceName: ServiceName
    let path: String
    let method: HTTPMethod
    let parameters: Parameters
    let headers: HTTPHeaders
    /// The call's own query items.
    let query: [URLQueryItem]
    /// The body: an upload's, or a value's encoded; `nil` for the parameters as the body.
    let body: HTTPRequest.Body?
    /// The body's `Content-Type` as its encoder made it, for when neither the load's headers
    /// nor the service's common headers name one.
    let bodyContentType: String?
    let bodyEncoding: Parameters.BodyEncoding?
    let arrayEncoding: Parameters.ArrayEncoding?
    /// Where some parameters go, by name, when not where the method puts them.
    let placements: [String: Parameters.Placement]
    /// The path as the cache and the coalescer tell loads apart (with the call's query items).
    let keyPath: String
    /// The path as errors and logs show it: a linked page's URL with its credentials hidden.
    let shownPath: String
    let timeouts: HTTPRequest.Timeouts?
    /// How the load uses the cache, if its manager caches.
    let cache: CacheUse?
    /// Identical loads' shared key when the load coalesces, else `nil`.
    let coalescingKey: String?
    /// The manager's retry policy, if it overrides the service's.
    let retryPolicyOverride: RetryPolicy?
    /// The service's policies for error codes and statuses, if it has any.
    let errorPolicies: ErrorPolicies?
    let authenticator: Authenticator?
    /// Whether the load's requests are signed.
    let isSigned: Bool
    /// What the load moves besides its parameters (a body of its own, a file to download
    /// to, progress), or `nil` for an ordinary load.
    let transfer: LoadTransfer?
    /// What hears the load's attempts, when the proxy has observers.
    let observation: (any APIProxy.LoadObservation)?
    /// The manager's plugins as the load started, when it had any: asked before each attempt
    /// is signed and each retry, and told the end of a load whose manager was deallocated.
    let plugins: LoadPlugins?
    /// Whether the load runs a GraphQL operation, whose body's `errors` fail it.
    let readsGraphQLErrors: Bool
    /// What the load's operation says of sending its requests again
    /// (``/AIFTransport/HTTPRequest/declaredSafeToRepeat``); `nil` to go by their method.
    let declaredSafeToRepeat: Bool?

    /// The load's retry policy: the manager's, else the service's. Read only when an attempt
    /// fails, so that a load that succeeds never copies one.
    var retryPolicy: RetryPolicy { retryPolicyOverride ?? resolved.service.retryPolicy }
    /// The load's total timeout, if it has one: the endpoint's timeouts, else the service's (as
    /// its requests carry them).
    var totalTimeout: Duration? { (timeouts ?? resolved.service.timeouts)?.total }

    init(
        resolved: ServiceRegistry.ResolvedService, serviceName: ServiceName, path: String, keyPath: String? = nil, shownPath: String? = nil, method: HTTPMethod,
        parameters: Parameters, headers: HTTPHeaders, query: [URLQueryItem] = [], body: HTTPRequest.Body? = nil, bodyContentType: String? = nil,
        bodyEncoding: Parameters.BodyEncoding?,
        arrayEncoding: Parameters.ArrayEncoding? = nil, placements: [String: Parameters.Placement] = [:], timeouts: HTTPRequest.Timeouts?, cache: CacheUse?,
        coalesces: Bool, retryPolicyOverride: RetryPolicy?, errorPolicies: ErrorPolicies?, authenticator: Authenticator?,
        transfer: LoadTransfer? = nil, observation: (any APIProxy.LoadObservation)? = nil, plugins: LoadPlugins? = nil,
        graphQL: GraphQLOperation? = nil
    ) {
        readsGraphQLErrors = graphQL != nil
        declaredSafeToRepeat = graphQL?.repeatable
        self.resolved = resolved
        self.serviceName = serviceName
        self.path = path
        self.method = method
        self.parameters = parameters
        self.headers = headers
        self.query = query
        self.body = body
        self.bodyContentType = bodyContentType
        self.bodyEncoding = bodyEncoding
        self.arrayEncoding = arrayEncoding
        self.placements = placements
        let keyPath = keyPath ?? path
        self.keyPath = keyPath
        self.shownPath = shownPath ?? path
        self.timeouts = timeouts
        self.cache = cache
        coalescingKey = coalesces ? ResponseCache.Key(
            service: serviceName, environment: resolved.environmentName, method: method, path: keyPath, parameters: parameters
        ).description : nil
        self.retryPolicyOverride = retryPolicyOverride
        self.errorPolicies = errorPolicies
        self.authenticator = authenticator
        self.transfer = transfer
        self.observation = observation
        self.plugins = plugins
        isSigned = resolved.isSigned
    }

    /// What identifies the load's file across attempts and processes (its URL changes with
    /// each signature): service, environment, method, path and parameters.
    var downloadIdentity: String {
        ResponseCache.Key(service: serviceName, environment: resolved.environmentName, method: method, path: keyPath, parameters: parameters).description
    }

    /// An error of this load.
    func error(
        _ kind: APIError.Kind, id: LoadID, _ message: String, _ underlying: (any Error)? = nil, _ response: HTTPResponse? = nil, attempts: Int? = nil
    ) -> APIError {
        APIError(kind, loadID: id, service: serviceName, path: shownPath, message: message, underlyingError: underlying, response: response, attempts: attempts)
    }
}

// Not nested in the generic manager: a nested type is generic too, and every use of it would
// look its metadata up at run time.

/// The request sent and the response received (a class for the same reason as ``LoadPlan``).
final class Exchange: Sendable {
    let request: HTTPRequest
    let response: HTTPResponse
    /// The service's veto of the response when the engine asked for it already (its answer:
    /// a veto or none), so that it is not asked — and the body parsed — twice; `nil` when it
    /// was not asked.
    let veto: ServiceVeto??

    init(request: HTTPRequest, response: HTTPResponse, veto: ServiceVeto?? = nil) {
        self.request = request
        self.response = response
        self.veto = veto
    }
}
