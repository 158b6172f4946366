public import Foundation

/// One environment of a service: where it is and with which keys it is called.
public struct ServiceEnvironment: Sendable, Hashable {
    /// The base URL, for example `https://api.example.com`.
    public var baseURL: URL
    /// The API version path segment (`v1`), or empty for none.
    public var apiVersion: String
    /// The public and private keys requests are signed with, or `nil` for unsigned requests.
    public var credentials: SigningContext.Credentials?
    /// Whether the signature covers every parameter (`true`) or only the signature fields.
    public var signsAllParameters: Bool
    /// Makes the environment a mock: its loads are answered from fixture files, through a
    /// ``FixtureTransport``, instead of sent to ``baseURL``. `nil` for a real environment.
    public var mock: ServiceEnvironment.MockBehavior?
    /// How its requests reach the server — a Unix-domain socket, host overrides (a staging
    /// address under the production name), a client certificate for mutual TLS — added to the
    /// transport's; `nil` for the transport's alone.
    public var connection: HTTPRequest.Connection?
    /// The credential of this environment's requests, when it has one of its own — a test key
    /// and a live key for one URL, each with its environment: switching the environment
    /// switches the key. It comes before the service's own ``Service/authenticator``; one set
    /// with ``ServiceRegistry/setAuthenticator(_:for:)`` comes before both. `nil` for none.
    public var authenticator: Authenticator?
    /// When this environment's circuit opens (``CircuitBreaker``), over the service's own
    /// ``Service/circuitBreaker``; `nil` for the service's.
    public var circuitBreaker: CircuitBreaker.Policy?

    /// Creates an environment.
    ///
    /// - Parameters:
    ///   - baseURL: The base URL.
    ///   - apiVersion: The version segment; none by default.
    ///   - credentials: The keys; none by default.
    ///   - signsAllParameters: Whether every parameter is signed; yes by default.
    ///   - mock: Makes it a mock environment; `nil` by default.
    ///   - connection: How its requests reach the server; the transport's way by default.
    ///   - authenticator: The environment's own credential; none by default.
    ///   - circuitBreaker: The environment's own circuit breaking; the service's by default.
    public init(
        baseURL: URL, apiVersion: String = "", credentials: SigningContext.Credentials? = nil, signsAllParameters: Bool = true, mock: ServiceEnvironment.MockBehavior? = nil,
        connection: HTTPRequest.Connection? = nil, authenticator: Authenticator? = nil, circuitBreaker: CircuitBreaker.Policy? = nil
    ) {
        self.baseURL = baseURL
        self.apiVersion = apiVersion
        self.credentials = credentials
        self.signsAllParameters = signsAllParameters
        self.mock = mock
        self.connection = connection
        self.authenticator = authenticator
        self.circuitBreaker = circuitBreaker
    }

    /// The base URL with the version segment, under which the paths go — what
    /// fixture paths are relative to.
    var versionedBaseURL: URL {
        apiVersion.isEmpty ? baseURL : baseURL.appending(path: apiVersion)
    }
}

extension Parameters {
    /// How parameters travel in a request body.
    public enum BodyEncoding: Sendable, Hashable {
        /// `application/json`.
        case json
        /// `application/x-www-form-urlencoded`.
        case form
    }
}

extension Parameters {
    /// How arrays are written in a query string or form (config names: `brackets`, `indexed`,
    /// `repeated`, `comma`, `pipes`, `spaces`).
    public enum ArrayEncoding: Sendable, Hashable {
        /// `key[]=a&key[]=b`; an array of objects `key[][price]=…`, which parsers read element by
        /// element as best they can — use ``indexed`` for those.
        case brackets
        /// `key[0]=a&key[1]=b`, and an array of objects `items[0][price]=…&items[1][price_data][currency]=usd`:
        /// what Rack, Rails and Stripe read arrays of objects as (config: `"indexed"`).
        case indexed
        /// `key=a&key=b`.
        case repeatedKeys
        /// `key=a,b`: one pair, the elements joined by commas (percent-encoded as `%2C`, which
        /// servers decode before they split). An element with a comma of its own cannot be told
        /// apart; an array or dictionary inside the array is written `key[]=…` instead.
        case commaSeparated
        /// `key=a|b`: one pair, the elements joined by `|` (OpenAPI's `pipeDelimited` style; config:
        /// `"pipes"`).
        case pipeSeparated
        /// `key=a%20b`: one pair, the elements joined by spaces (OpenAPI's `spaceDelimited` style;
        /// config: `"spaces"`).
        case spaceSeparated
        /// Pairs written by a function of yours; see ``custom(_:)``.
        case written(Parameters.ArrayWriter)

        /// Arrays written by `write`, given the parameter's name and its elements as text (null
        /// elements left out), returning the pairs to send — `key=a|b`, `key[0]=a&key[1]=b`:
        ///
        /// ```swift
        /// .custom { name, elements in [(name, elements.joined(separator: "|"))] }
        /// ```
        ///
        /// An array or dictionary inside the array is written `key[]=…` instead.
        public static func custom(_ write: @escaping @Sendable (_ name: String, _ elements: [String]) -> [(name: String, value: String)]) -> Parameters.ArrayEncoding {
            .written(Parameters.ArrayWriter(write))
        }
    }
}

extension Parameters {
    /// A function that writes an array parameter as pairs, for ``Parameters/ArrayEncoding/custom(_:)``. Two
    /// are equal when they are the same value (copies of one writer).
    public struct ArrayWriter: Sendable, Hashable {
        private final class Function: Sendable {
            let write: @Sendable (String, [String]) -> [(name: String, value: String)]
            init(_ write: @escaping @Sendable (String, [String]) -> [(name: String, value: String)]) { self.write = write }
        }

        private let function: Function

        /// Wraps `write`.
        public init(_ write: @escaping @Sendable (_ name: String, _ elements: [String]) -> [(name: String, value: String)]) {
            function = Function(write)
        }

        /// The pairs for array `name` with `elements`.
        public func callAsFunction(_ name: String, _ elements: [String]) -> [(name: String, value: String)] {
            function.write(name, elements)
        }

        public static func == (left: Parameters.ArrayWriter, right: Parameters.ArrayWriter) -> Bool { left.function === right.function }
        public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(function)) }
    }
}

/// One backend, described once and resolved by name.
///
/// Conform a type and implement what differs; everything but ``name`` and ``environments``
/// has a default. Members that are functions (``commonHeaders()``, ``commonParameters()``)
/// are called for every request, so they can read a token or a device id at call time.
public protocol Service: Sendable {
    /// The name it is registered under.
    var name: ServiceName { get }
    /// Its environments by name (at least one).
    var environments: [ServiceEnvironment.Name: ServiceEnvironment] { get }
    /// The environment used when none was chosen for it: `online` by default.
    var defaultEnvironment: ServiceEnvironment.Name { get }
    /// How request bodies are encoded unless a call says otherwise: JSON by default.
    var bodyEncoding: Parameters.BodyEncoding { get }
    /// How arrays are written in queries and forms: `key[]=` by default.
    var arrayEncoding: Parameters.ArrayEncoding { get }
    /// Timeouts for this service's requests, or `nil` for the transport's.
    var timeouts: HTTPRequest.Timeouts? { get }
    /// Signs the requests of the environments that have signing keys
    /// (``ServiceEnvironment/credentials``): AIF-HMAC by default; `nil` for none. An environment
    /// without keys sends its requests unsigned whatever the signer, so a service called with a
    /// bearer token or an API key needs no `signer` of its own.
    var signer: (any RequestSigner)? { get }
    /// Decodes the content of this service's responses, or `nil` for a default
    /// ``FastJSONDecoder`` (a manager's own `APIManager.decoder` wins).
    var decoder: (any ContentDecoder)? { get }
    /// Encodes the bodies of loads given an `Encodable` value, or `nil` (the default) for
    /// ``ContentEncoder/mirroring(_:)`` of ``decoder``: JSON that reads back as it decodes.
    var encoder: (any ContentEncoder)? { get }
    /// Where the content sits in bodies that wrap it (`{"code": 0, "data": {…}}`), or `nil`
    /// (the default) when the body is the content.
    var envelope: ResponseEnvelope? { get }
    /// How a 2xx body reports an application-level failure (`{"code": 4001, "message": …}`),
    /// or `nil` (the default) for none. The body is parsed once for the rule, the
    /// ``envelope`` and the decoder.
    var applicationErrors: ServiceVeto.Rule? { get }
    /// What the body of a failed status says — the server's message and code, a type to
    /// decode it into — for the load's error: ``ErrorBodyRule/common`` by default.
    var errorBody: ErrorBodyRule { get }
    /// When a failed load is sent again: ``RetryPolicy/standard`` by default.
    var retryPolicy: RetryPolicy { get }
    /// Supplies and refreshes the credential of its requests: none by default (a registry can
    /// give one to several services, ``ServiceRegistry/setAuthenticator(_:for:)``).
    var authenticator: Authenticator? { get }
    /// How the service's listings are paged, when it says (a config file's `paging`); `nil` by
    /// default.
    var paging: PagingRule? { get }
    /// What loads do on given application error codes and HTTP statuses (retry, refresh the
    /// credential, tell an app handler): none by default.
    var errorPolicies: ErrorPolicies? { get }
    /// When each environment's circuit opens, and so loads fail at once instead of reaching a
    /// backend that is down (``CircuitBreaker``); an environment's own
    /// ``ServiceEnvironment/circuitBreaker`` comes first. None by default: opt in.
    var circuitBreaker: CircuitBreaker.Policy? { get }
    /// The cache version of every response of the service, beside each endpoint's
    /// `ResponseCache.Policy.version`: bumping it leaves everything the service's managers stored
    /// unread (YTKNetwork's `cacheVersion`, for a whole backend).
    var cacheVersion: Int { get }

    /// Headers sent with every request of the service, read at request time.
    func commonHeaders() -> HTTPHeaders
    /// Parameters sent with every request (a call's own parameters win), read at request time.
    func commonParameters() -> Parameters
    /// Extra headers for one path.
    func extraHeaders(forPath path: String) -> HTTPHeaders
    /// The request URL, for services whose URLs are not `base/version/method`. Return `nil` to
    /// use the standard rule.
    func url(for path: String, in environment: ServiceEnvironment) -> URL?
    /// Turns a response into a failure the service recognises beyond its
    /// ``applicationErrors`` rule (an expired token in a header, a body the rule cannot
    /// read). Return `nil` to accept it. Asked after the rule, when the rule accepts. A veto
    /// fails an answer whose status succeeded; on a failed status its code reaches the error
    /// policies and the authenticator, and the load keeps the status's own error.
    func veto(_ response: HTTPResponse) -> ServiceVeto?
}

/// A service's reason to reject a response the transport delivered.
public struct ServiceVeto: Error, Sendable, Hashable, CustomStringConvertible {
    /// A code the service defines (`token_expired`).
    public var code: String
    /// What it means, in plain words.
    public var message: String

    /// Creates a veto.
    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    /// The code and the message (`4001: coupon expired`); the code alone when it is its own
    /// message (`channel_not_found`).
    public var description: String { message == code ? code : "\(code): \(message)" }
}

extension Service {
    /// `online`.
    public var defaultEnvironment: ServiceEnvironment.Name { .online }
    /// JSON.
    public var bodyEncoding: Parameters.BodyEncoding { .json }
    /// `key[]=`.
    public var arrayEncoding: Parameters.ArrayEncoding { .brackets }
    /// The transport's.
    public var timeouts: HTTPRequest.Timeouts? { nil }
    /// AIF-HMAC in query parameters, for the environments that have signing keys (the others'
    /// requests go unsigned).
    public var signer: (any RequestSigner)? { AIFHMACSigner() }
    /// The default ``FastJSONDecoder``.
    public var decoder: (any ContentDecoder)? { nil }
    /// JSON mirroring the service's decoder.
    public var encoder: (any ContentEncoder)? { nil }
    /// The body is the content.
    public var envelope: ResponseEnvelope? { nil }
    /// None.
    public var applicationErrors: ServiceVeto.Rule? { nil }
    /// ``ErrorBodyRule/common``.
    public var errorBody: ErrorBodyRule { .common }
    /// ``RetryPolicy/standard``.
    public var retryPolicy: RetryPolicy { .standard }
    /// None.
    public var authenticator: Authenticator? { nil }
    /// None.
    public var paging: PagingRule? { nil }
    /// None.
    public var errorPolicies: ErrorPolicies? { nil }
    /// None: every request goes out.
    public var circuitBreaker: CircuitBreaker.Policy? { nil }
    /// 0.
    public var cacheVersion: Int { 0 }
    /// None.
    public func commonHeaders() -> HTTPHeaders { HTTPHeaders() }
    /// None.
    public func commonParameters() -> Parameters { [:] }
    /// None.
    public func extraHeaders(forPath path: String) -> HTTPHeaders { HTTPHeaders() }
    /// The standard rule.
    public func url(for path: String, in environment: ServiceEnvironment) -> URL? { nil }
    /// Accepts every response.
    public func veto(_ response: HTTPResponse) -> ServiceVeto? { nil }
}

extension Service {
    /// What the service says about `response`: for a GraphQL operation's 2xx body, its
    /// `errors`; its ``applicationErrors`` rule on a 2xx body — parsed into
    /// `json`, unless it was already, for the envelope and the decoder after it — then its
    /// ``veto(_:)``.
    package func verdict(on response: HTTPResponse, json: inout ParsedJSON?, graphQL: Bool = false) -> ServiceVeto? {
        let rule = applicationErrors
        if graphQL || rule != nil, response.isSuccess, response.body.first == UInt8(ascii: "{") {
            if json == nil, let tape = try? JSONTape(parsing: [UInt8](response.body)) { json = ParsedJSON(tape) }
            if let json {
                if graphQL, let veto = GraphQLOperation.veto(in: json.tape) { return veto }
                if let rule, let veto = rule.veto(in: json.tape) { return veto }
            }
        }
        return veto(response)
    }
}
