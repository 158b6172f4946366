/// One endpoint as a value: what a manager calls and how it checks the call — the alternative
/// to an ``APIManager`` subclass that the compiler checks for thread safety (every part is
/// `Sendable`, every closure `@Sendable`), with nothing to restate.
///
/// ```swift
/// extension Endpoint where Content == Goods {
///     static let goodsDetail = Endpoint(
///         service: "shop", path: "goods/{id}", cachePolicy: .lifetime(.seconds(300)),
///         validateParameters: { parameters in
///             guard case .integer(let id)? = parameters["id"], id > 0 else { throw InvalidID() }
///         })
/// }
///
/// let detail = APIManager(.goodsDetail)
/// let goods = try await detail.load(["id": 42]).content
/// ```
///
/// A manager made with an endpoint takes each setting from it; a subclass can still override
/// any of them.
public struct Endpoint<Content: Decodable & Sendable>: Sendable {
    /// The service to call.
    public var service: ServiceName
    /// The path under the service's base URL and version, with `{name}`
    /// placeholders filled from the parameters (`goods/{id}`), or a full URL.
    public var path: String
    /// The request type.
    public var method: HTTPMethod
    /// How a body is encoded; `nil` for the service's choice.
    public var bodyEncoding: Parameters.BodyEncoding?
    /// The body every load sends, encoded as ``bodyEncoding`` says (a call's own body wins);
    /// `nil` for the parameters as the body.
    public var body: (any Encodable & Sendable)?
    /// How arrays are written in the query or a form; `nil` for the service's choice.
    public var arrayEncoding: Parameters.ArrayEncoding?
    /// Where some parameters go, by name, when not where the method puts them (the path, the
    /// query, a header or the body); see ``/AIFServices/Parameters/Placement``.
    public var parameterPlacements: [String: Parameters.Placement]
    /// Headers of this endpoint, over the service's.
    public var headers: HTTPHeaders
    /// Timeouts of this endpoint; `nil` for the service's or the transport's.
    public var timeouts: HTTPRequest.Timeouts?
    /// Decodes the content; `nil` for the service's decoder, or else a default
    /// ``/AIFServices/FastJSONDecoder``.
    public var decoder: (any ContentDecoder)?
    /// Where the content is in the body; `nil` for the service's ``/AIFServices/Service/envelope``
    /// (or the whole body).
    public var envelope: ResponseEnvelope?
    /// The type the body of a failed status decodes into, handed over by
    /// ``APIError/errorBody(as:)``; `nil` for the service's (``/AIFServices/ErrorBodyRule/type``).
    public var errorBody: (any (Decodable & Sendable).Type)?
    /// How validated responses are cached; `nil` for no caching.
    public var cachePolicy: ResponseCache.Policy?
    /// Whether identical GET loads in flight at once share one transfer.
    public var coalescesIdenticalRequests: Bool
    /// When a failed load is sent again; `nil` for the service's policy.
    public var retryPolicy: RetryPolicy?
    /// Whether loads carry the credential of the service's ``/AIFServices/Authenticator`` (`false` for the
    /// endpoint that refreshes it).
    public var usesAuthenticator: Bool
    /// Rewrites the parameters just before the call (see ``APIManager/reformParameters(_:)``).
    public var reformParameters: (@Sendable (Parameters) -> Parameters)?
    /// Throws to reject the parameters: the load ends as
    /// ``APIError/Kind-swift.struct/invalidParameters``, nothing sent (for checks shared by many
    /// endpoints, see ``LoadPlugin``).
    public var validateParameters: (@Sendable (Parameters) throws -> Void)?
    /// Throws to reject a decoded response: the load ends as
    /// ``APIError/Kind-swift.struct/invalidResponse``, nothing cached.
    public var validateResponse: (@Sendable (APIResponse<Content>) throws -> Void)?

    /// Describes an endpoint; everything but the service and the path has a default.
    ///
    /// - Parameters:
    ///   - service: The service to call.
    ///   - path: The path (`goods/{id}`).
    ///   - method: GET by default.
    ///   - bodyEncoding: The service's by default.
    ///   - body: None by default: the parameters are the body.
    ///   - arrayEncoding: The service's by default.
    ///   - parameterPlacements: None by default: each parameter goes where the method puts them.
    ///   - headers: None by default.
    ///   - timeouts: The service's or the transport's by default.
    ///   - decoder: The service's by default.
    ///   - envelope: The service's by default.
    ///   - errorBody: The service's by default.
    ///   - cachePolicy: No caching by default.
    ///   - coalescesIdenticalRequests: Off by default.
    ///   - retryPolicy: The service's by default.
    ///   - usesAuthenticator: Yes by default.
    ///   - reformParameters: Parameters sent as they come by default.
    ///   - validateParameters: Every parameter accepted by default.
    ///   - validateResponse: Every response accepted by default.
    public init(
        service: ServiceName,
        path: String,
        method: HTTPMethod = .get,
        bodyEncoding: Parameters.BodyEncoding? = nil,
        body: (any Encodable & Sendable)? = nil,
        arrayEncoding: Parameters.ArrayEncoding? = nil,
        parameterPlacements: [String: Parameters.Placement] = [:],
        headers: HTTPHeaders = HTTPHeaders(),
        timeouts: HTTPRequest.Timeouts? = nil,
        decoder: (any ContentDecoder)? = nil,
        envelope: ResponseEnvelope? = nil,
        errorBody: (any (Decodable & Sendable).Type)? = nil,
        cachePolicy: ResponseCache.Policy? = nil,
        coalescesIdenticalRequests: Bool = false,
        retryPolicy: RetryPolicy? = nil,
        usesAuthenticator: Bool = true,
        reformParameters: (@Sendable (Parameters) -> Parameters)? = nil,
        validateParameters: (@Sendable (Parameters) throws -> Void)? = nil,
        validateResponse: (@Sendable (APIResponse<Content>) throws -> Void)? = nil
    ) {
        self.service = service
        self.path = path
        self.method = method
        self.bodyEncoding = bodyEncoding
        self.body = body
        self.arrayEncoding = arrayEncoding
        self.parameterPlacements = parameterPlacements
        self.headers = headers
        self.timeouts = timeouts
        self.decoder = decoder
        self.envelope = envelope
        self.errorBody = errorBody
        self.cachePolicy = cachePolicy
        self.coalescesIdenticalRequests = coalescesIdenticalRequests
        self.retryPolicy = retryPolicy
        self.usesAuthenticator = usesAuthenticator
        self.reformParameters = reformParameters
        self.validateParameters = validateParameters
        self.validateResponse = validateResponse
    }
}
