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
    /// Every setting but the generic one, held by reference: a copy of an endpoint (a load reads
    /// its manager's) is one reference, not each setting copied.
    private var settings: EndpointSettings

    /// The service to call.
    public var service: ServiceName {
        get { settings.fields.service }
        set { change { $0.service = newValue } }
    }
    /// The path under the service's base URL and version, with `{name}`
    /// placeholders filled from the parameters (`goods/{id}`), or a full URL.
    public var path: String {
        get { settings.fields.path }
        set { change { $0.path = newValue } }
    }
    /// The request type.
    public var method: HTTPMethod {
        get { settings.fields.method }
        set { change { $0.method = newValue } }
    }
    /// How a body is encoded; `nil` for the service's choice.
    public var bodyEncoding: Parameters.BodyEncoding? {
        get { settings.fields.bodyEncoding }
        set { change { $0.bodyEncoding = newValue } }
    }
    /// The body every load sends, encoded as ``bodyEncoding`` says (a call's own body wins);
    /// `nil` for the parameters as the body.
    public var body: (any Encodable & Sendable)? {
        get { settings.fields.body }
        set { change { $0.body = newValue } }
    }
    /// How arrays are written in the query or a form; `nil` for the service's choice.
    public var arrayEncoding: Parameters.ArrayEncoding? {
        get { settings.fields.arrayEncoding }
        set { change { $0.arrayEncoding = newValue } }
    }
    /// Where some parameters go, by name, when not where the method puts them (the path, the
    /// query, a header or the body); see ``/AIFServices/Parameters/Placement``.
    public var parameterPlacements: [String: Parameters.Placement] {
        get { settings.fields.parameterPlacements }
        set { change { $0.parameterPlacements = newValue } }
    }
    /// Headers of this endpoint, over the service's.
    public var headers: HTTPHeaders {
        get { settings.fields.headers }
        set { change { $0.headers = newValue } }
    }
    /// Timeouts of this endpoint; `nil` for the service's or the transport's.
    public var timeouts: HTTPRequest.Timeouts? {
        get { settings.fields.timeouts }
        set { change { $0.timeouts = newValue } }
    }
    /// Decodes the content; `nil` for the service's decoder, or else a default
    /// ``/AIFServices/FastJSONDecoder``.
    public var decoder: (any ContentDecoder)? {
        get { settings.fields.decoder }
        set { change { $0.decoder = newValue } }
    }
    /// Where the content is in the body; `nil` for the service's ``/AIFServices/Service/envelope``
    /// (or the whole body).
    public var envelope: ResponseEnvelope? {
        get { settings.fields.envelope }
        set { change { $0.envelope = newValue } }
    }
    /// The type the body of a failed status decodes into, handed over by
    /// ``APIError/errorBody(as:)``; `nil` for the service's (``/AIFServices/ErrorBodyRule/type``).
    public var errorBody: (any (Decodable & Sendable).Type)? {
        get { settings.fields.errorBody }
        set { change { $0.errorBody = newValue } }
    }
    /// How validated responses are cached; `nil` for no caching.
    public var cachePolicy: ResponseCache.Policy? {
        get { settings.fields.cachePolicy }
        set { change { $0.cachePolicy = newValue } }
    }
    /// Whether identical GET loads in flight at once share one transfer.
    public var coalescesIdenticalRequests: Bool {
        get { settings.fields.coalescesIdenticalRequests }
        set { change { $0.coalescesIdenticalRequests = newValue } }
    }
    /// When a failed load is sent again; `nil` for the service's policy.
    public var retryPolicy: RetryPolicy? {
        get { settings.fields.retryPolicy }
        set { change { $0.retryPolicy = newValue } }
    }
    /// Whether loads carry the credential of the service's ``/AIFServices/Authenticator`` (`false` for the
    /// endpoint that refreshes it).
    public var usesAuthenticator: Bool {
        get { settings.fields.usesAuthenticator }
        set { change { $0.usesAuthenticator = newValue } }
    }
    /// Rewrites the parameters just before the call (see ``APIManager/reformParameters(_:)``).
    public var reformParameters: (@Sendable (Parameters) -> Parameters)? {
        get { settings.fields.reformParameters }
        set { change { $0.reformParameters = newValue } }
    }
    /// Throws to reject the parameters: the load ends as
    /// ``APIError/Kind-swift.struct/invalidParameters``, nothing sent (for checks shared by many
    /// endpoints, see ``LoadPlugin``).
    public var validateParameters: (@Sendable (Parameters) throws -> Void)? {
        get { settings.fields.validateParameters }
        set { change { $0.validateParameters = newValue } }
    }
    /// The GraphQL operation the endpoint runs (``graphQLQuery(_:name:connectionAt:service:path:method:headers:timeouts:cachePolicy:retryPolicy:usesAuthenticator:reformParameters:validateParameters:validateResponse:)``,
    /// ``graphQLMutation(_:name:serverHonoursIdempotencyKeys:service:path:headers:timeouts:retryPolicy:usesAuthenticator:reformParameters:validateParameters:validateResponse:)``).
    var graphQL: GraphQLOperation? {
        get { settings.fields.graphQL }
        set { change { $0.graphQL = newValue } }
    }
    /// Throws to reject a decoded response: the load ends as
    /// ``APIError/Kind-swift.struct/invalidResponse``, nothing cached.
    public var validateResponse: (@Sendable (APIResponse<Content>) throws -> Void)?

    /// Changes one setting: the settings are shared by every copy, so a change makes them anew.
    private mutating func change(_ body: (inout EndpointSettings.Fields) -> Void) {
        var fields = settings.fields
        body(&fields)
        settings = EndpointSettings(fields)
    }

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
        settings = EndpointSettings(EndpointSettings.Fields(
            service: service,
            path: path,
            method: method,
            bodyEncoding: bodyEncoding,
            body: body,
            arrayEncoding: arrayEncoding,
            parameterPlacements: parameterPlacements,
            headers: headers,
            timeouts: timeouts,
            decoder: decoder,
            envelope: envelope,
            errorBody: errorBody,
            cachePolicy: cachePolicy,
            coalescesIdenticalRequests: coalescesIdenticalRequests,
            retryPolicy: retryPolicy,
            usesAuthenticator: usesAuthenticator,
            reformParameters: reformParameters,
            validateParameters: validateParameters))
        self.validateResponse = validateResponse
    }
}

/// The settings of an ``Endpoint`` but its generic one, immutable and shared by its copies. Not
/// nested in the generic endpoint: a nested type is generic too, and reading its fields would
/// look its metadata up at run time.
final class EndpointSettings: Sendable {
    /// The settings, as ``Endpoint`` documents them.
    struct Fields: Sendable {
        var service: ServiceName
        var path: String
        var method: HTTPMethod
        var bodyEncoding: Parameters.BodyEncoding?
        var body: (any Encodable & Sendable)?
        var arrayEncoding: Parameters.ArrayEncoding?
        var parameterPlacements: [String: Parameters.Placement]
        var headers: HTTPHeaders
        var timeouts: HTTPRequest.Timeouts?
        var decoder: (any ContentDecoder)?
        var envelope: ResponseEnvelope?
        var errorBody: (any (Decodable & Sendable).Type)?
        var cachePolicy: ResponseCache.Policy?
        var coalescesIdenticalRequests: Bool
        var retryPolicy: RetryPolicy?
        var usesAuthenticator: Bool
        var reformParameters: (@Sendable (Parameters) -> Parameters)?
        var validateParameters: (@Sendable (Parameters) throws -> Void)?
        var graphQL: GraphQLOperation? = nil
    }

    /// The settings.
    let fields: Fields

    init(_ fields: Fields) {
        self.fields = fields
    }
}
