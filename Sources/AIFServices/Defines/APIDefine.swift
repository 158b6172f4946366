import Foundation

/// An API defined by name in a config file (RFAPI's defines): which service it calls, its path,
/// method, headers and default parameters, whether it needs the service's credentials, where its
/// content is in the response, and its cache, retry and timeout.
///
/// Defines are read from `*.apis.json` files
/// (``ServiceRegistry/registerAPIs(inDirectory:environment:formats:)``) and called by name:
/// `api("goods.detail").load(["id": 7], as: Goods.self)`. Each is an `Endpoint` underneath, so a
/// call runs through the same pipeline as a manager's.
public struct APIDefine: Sendable {
    /// Its name, its groups' names first (`orders.place`).
    public var name: String
    /// The `@group` of its file it is in (`orders` for `@orders`'s `place`), or `nil` at the
    /// file's top level — whatever dots its own name has.
    public var group: String?
    /// The service it calls.
    public var service: ServiceName
    /// The method.
    public var method: HTTPMethod
    /// The path under the service's base URL and version (a group's `pathPrefix` joined in
    /// front), with `{PARAM}` placeholders filled from the parameters.
    public var path: String
    /// Headers over the service's.
    public var headers: HTTPHeaders
    /// Parameters every call sends; a call's own win.
    public var parameters: Parameters
    /// Where some parameters go, by name, when not where the method puts them (the path, the
    /// query, a header or the body); see ``Parameters/Placement``.
    public var parameterPlacements: [String: Parameters.Placement]
    /// Whether calls carry the service's credential (its ``Authenticator``).
    public var needsAuthorization: Bool
    /// Where the content is in the response, and its shape.
    public var response: Response
    /// How long an answer is kept and served from the cache; `nil` for no caching.
    public var cache: Cache?
    /// The retry policy; `nil` for the service's.
    public var retryPolicy: RetryPolicy?
    /// The total timeout of a call; `nil` for the service's.
    public var timeout: Duration?
    /// How its listing is paged; `nil` for the service's way (``Service/paging``), if any.
    public var paging: PagingRule?
    /// The GraphQL operation it runs, or `nil` (the default) for a REST call.
    public var graphQL: GraphQL? = nil
    /// A sentence saying what it does, for `aif apis`.
    public var summary: String?
    /// The file it was defined in (empty for one defined in code).
    public var file: String

    /// Creates a define.
    ///
    /// - Parameters:
    ///   - name: Its name.
    ///   - group: The group it is in; none by default.
    ///   - service: The service it calls.
    ///   - method: GET by default.
    ///   - path: The path, with `{PARAM}` placeholders.
    ///   - headers: None by default.
    ///   - parameters: None by default.
    ///   - parameterPlacements: None by default: each parameter goes where the method puts them.
    ///   - needsAuthorization: Yes by default.
    ///   - response: The whole body, of any shape, by default.
    ///   - cache: No caching by default.
    ///   - retryPolicy: The service's by default.
    ///   - timeout: The service's by default.
    ///   - paging: The service's by default.
    ///   - summary: None by default.
    ///   - file: Empty by default.
    public init(
        name: String, group: String? = nil, service: ServiceName, method: HTTPMethod = .get, path: String, headers: HTTPHeaders = HTTPHeaders(),
        parameters: Parameters = [:], parameterPlacements: [String: Parameters.Placement] = [:], needsAuthorization: Bool = true, response: Response = Response(), cache: Cache? = nil,
        retryPolicy: RetryPolicy? = nil, timeout: Duration? = nil, paging: PagingRule? = nil, summary: String? = nil, file: String = ""
    ) {
        self.name = name
        self.group = group
        self.service = service
        self.method = method
        self.path = path
        self.headers = headers
        self.parameters = parameters
        self.parameterPlacements = parameterPlacements
        self.needsAuthorization = needsAuthorization
        self.response = response
        self.cache = cache
        self.retryPolicy = retryPolicy
        self.timeout = timeout
        self.paging = paging
        self.summary = summary
        self.file = file
    }

    /// The names of the path's `{PARAM}` placeholders, in order.
    public var placeholders: [String] {
        var names: [String] = []
        var rest = path[...]
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            names.append(String(rest[rest.index(after: open)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return names
    }

    /// Where a define's content is in the response body.
    public struct Response: Sendable, Hashable {
        /// What the content must be.
        public enum Shape: String, Sendable, Hashable, CaseIterable {
            /// Anything.
            case any
            /// A JSON object.
            case object
            /// A JSON array.
            case list
        }

        /// The member holding the content (a dotted path: `result.data`), or `nil` for the whole body.
        public var dataField: String?
        /// What the content must be.
        public var shape: Shape

        /// Creates a response description: the whole body, of any shape, by default.
        public init(dataField: String? = nil, shape: Shape = .any) {
            self.dataField = dataField
            self.shape = shape
        }
    }

    /// The GraphQL operation a define runs: its parameters are the variables, its content is
    /// read from `data` (at ``connectionAt`` inside it, when given), and its `errors` fail it —
    /// as an endpoint made with AIFNetworking's `Endpoint.graphQLQuery` or
    /// `Endpoint.graphQLMutation` does.
    public struct GraphQL: Sendable, Hashable {
        /// What the operation does.
        public enum Kind: String, Sendable, Hashable, CaseIterable {
            /// Reads: sent again as a GET is.
            case query
            /// Changes: never sent a second time once the server may have run it, unless it
            /// honours idempotency keys.
            case mutation
        }

        /// Query or mutation.
        public var kind: Kind
        /// The document, sent as `query`.
        public var document: String
        /// The operation to run (`operationName`), for a document with several.
        public var operationName: String?
        /// Where the content is inside `data` (a dotted path: `viewer.repositories`); `data`
        /// itself when `nil`. A query's only.
        public var connectionAt: String?
        /// Whether the server runs a mutation once per idempotency key.
        public var serverHonoursIdempotencyKeys: Bool

        /// Creates an operation.
        ///
        /// - Parameters:
        ///   - kind: Query or mutation.
        ///   - document: The document.
        ///   - operationName: None by default.
        ///   - connectionAt: `data` itself by default.
        ///   - serverHonoursIdempotencyKeys: `false` by default.
        public init(_ kind: Kind, document: String, operationName: String? = nil, connectionAt: String? = nil, serverHonoursIdempotencyKeys: Bool = false) {
            self.kind = kind
            self.document = document
            self.operationName = operationName
            self.connectionAt = connectionAt
            self.serverHonoursIdempotencyKeys = serverHonoursIdempotencyKeys
        }
    }

    /// How long a define's answers are served from the cache.
    public struct Cache: Sendable, Hashable {
        /// How long an answer is served without asking.
        public var lifetime: Duration
        /// How long past its lifetime an answer is still served while a refresh runs.
        public var staleWhileRevalidate: Duration?
        /// Whether the response's `Cache-Control` has the last word.
        public var followsCacheControl: Bool

        /// Creates a cache description.
        public init(lifetime: Duration, staleWhileRevalidate: Duration? = nil, followsCacheControl: Bool = false) {
            self.lifetime = lifetime
            self.staleWhileRevalidate = staleWhileRevalidate
            self.followsCacheControl = followsCacheControl
        }
    }
}
