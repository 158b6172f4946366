public import Foundation

/// Why a load failed: what went wrong, for which request of which service, in plain words, with
/// the error underneath and the response when there was one.
///
/// ```swift
/// catch let error {
///     switch error.kind {
///     case .invalidParameters: showForm(error.message)
///     case .noNetwork, .timeout: offerRetry()
///     case .httpStatus where error.statusCode == 401: signIn()
///     case .serviceVeto: show(error.serviceVeto?.message ?? error.message)
///     default: show(error.description)
///     }
/// }
/// ```
public struct APIError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure. An extensible set, like ``/AIFTransport/TransportError/Code-swift.struct``: kinds
    /// may be added (by retries, token refresh, downloads) without breaking code that switches
    /// over the existing ones with a `default` branch. What a kind carries is on the error:
    /// ``APIError/statusCode`` for ``httpStatus``, ``APIError/serviceVeto`` for ``serviceVeto``.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case invalidParameters = "invalid parameters"
            case configuration = "configuration"
            case httpStatus = "HTTP status"
            case serviceVeto = "service veto"
            case noContent = "no content"
            case decodingFailed = "decoding failed"
            case invalidResponse = "invalid response"
            case timeout = "timeout"
            case noNetwork = "no network"
            case responseLost = "response lost"
            case transport = "transport"
            case cancelled = "cancelled"
            case authenticationFailed = "authentication failed"
            case shutDown = "shut down"
            case circuitOpen = "circuit open"
        }

        private let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// The kind as one word in snake case (`http_status`, `no_network`, `cancelled`), for
        /// a metric's label or a span's `error.type`.
        public var identifier: String {
            switch base {
            case .invalidParameters: "invalid_parameters"
            case .configuration: "configuration"
            case .httpStatus: "http_status"
            case .serviceVeto: "service_veto"
            case .noContent: "no_content"
            case .decodingFailed: "decoding_failed"
            case .invalidResponse: "invalid_response"
            case .timeout: "timeout"
            case .noNetwork: "no_network"
            case .responseLost: "response_lost"
            case .transport: "transport"
            case .cancelled: "cancelled"
            case .authenticationFailed: "authentication_failed"
            case .shutDown: "shut_down"
            case .circuitOpen: "circuit_open"
            }
        }

        /// The parameters were rejected — by the endpoint's ``Endpoint/validateParameters`` or a
        /// plugin's ``LoadPlugin/loadWillStart(_:parameters:)`` (its error is the underlying
        /// error) — or could not be encoded; no request was sent.
        public static let invalidParameters = Kind(.invalidParameters)
        /// The service, its environment or the request could not be resolved or built (unknown
        /// service, bad URL, missing path parameter, signing failure); no request was sent.
        public static let configuration = Kind(.configuration)
        /// The response arrived with a status outside 200–299 (``APIError/statusCode``; the
        /// response carries the body).
        public static let httpStatus = Kind(.httpStatus)
        /// The service recognised an application-level failure in the response
        /// (``APIError/serviceVeto``).
        public static let serviceVeto = Kind(.serviceVeto)
        /// The response had no body where content was expected.
        public static let noContent = Kind(.noContent)
        /// The body could not be decoded into the manager's content type.
        public static let decodingFailed = Kind(.decodingFailed)
        /// The endpoint's ``Endpoint/validateResponse`` or a plugin's
        /// ``LoadPlugin/loadDidReceive(_:of:)`` rejected the response (its error is the underlying
        /// error), or the response was not one the load could use.
        public static let invalidResponse = Kind(.invalidResponse)
        /// The connection or the whole request took too long, or the transfer stalled.
        public static let timeout = Kind(.timeout)
        /// The server could not be reached (refused, unreachable, name not found).
        public static let noNetwork = Kind(.noNetwork)
        /// The request went out and the connection closed before any of the answer came back:
        /// the server may have processed it. Unlike ``noNetwork`` (nothing was sent), sending it
        /// again may repeat its effect; it is retried only when it is safe to repeat (its method
        /// is one the ``/AIFServices/RetryPolicy`` retries, or it carries the policy's
        /// idempotency key). ``APIError/underlyingError`` is the ``/AIFTransport/TransportError``.
        public static let responseLost = Kind(.responseLost)
        /// Any other transport failure (TLS, a dropped connection, too many redirects, an
        /// invalid or oversized response …); ``APIError/underlyingError`` is the
        /// ``/AIFTransport/TransportError``.
        public static let transport = Kind(.transport)
        /// The load was cancelled: by ID, group, deallocation of its manager, or its task.
        public static let cancelled = Kind(.cancelled)
        /// The service's ``/AIFServices/Authenticator`` could not refresh the credential;
        /// ``APIError/underlyingError`` is the refresh's error. No request was sent with the
        /// old credential after it was refused.
        public static let authenticationFailed = Kind(.authenticationFailed)
        /// The proxy is shut down (``APIProxy/shutdown(deadline:)``): the load was refused
        /// before anything was sent, or it was still in flight when the shutdown's deadline
        /// passed and was cancelled then (its request may have reached the server) — or its
        /// transport was shut down (``/AIFTransport/TransportError/Code-swift.struct/transportShutDown``
        /// underneath). Unlike a cancellation the caller asked for, the delegate hears of it.
        public static let shutDown = Kind(.shutDown)
        /// The backend's circuit is open (``/AIFServices/CircuitBreaker``): its environment's
        /// requests failed too often in a row, and nothing was sent. ``APIError/retryableAt``
        /// says when the next probe goes out (`nil` while the probes allowed are out).
        public static let circuitOpen = Kind(.circuitOpen)

        /// A short name for the kind.
        public var description: String { base.rawValue }
    }

    /// What kind of failure it is.
    public var kind: Kind { storage.kind }
    /// The load's ID.
    public var loadID: LoadID { storage.loadID }
    /// The service the manager calls.
    public var service: ServiceName { storage.service }
    /// The manager's path.
    public var path: String { storage.path }
    /// What went wrong, in plain words (never a secret).
    public var message: String { storage.message }
    /// The error underneath (``/AIFTransport/TransportError``, ``/AIFServices/ServiceError``, `DecodingError`, a
    /// plugin's error …), if any.
    public var underlyingError: (any Error)? { storage.underlyingError }
    /// The response, when one arrived.
    public var response: HTTPResponse? { storage.response }
    /// How many times the request was sent before the load failed: 0 when it failed before
    /// sending, more than 1 when it was retried (see ``/AIFServices/RetryPolicy``) or when the
    /// transport sent it again on a fresh connection (a reused one had closed before answering;
    /// only a request safe to repeat) — each time it could have reached the server.
    public var attempts: Int { storage.attempts ?? (storage.response == nil && !Self.sentKinds.contains(kind) ? 0 : 1) }

    /// Creates an error; managers and reformers use this.
    ///
    /// - Parameters:
    ///   - kind: The kind.
    ///   - loadID: The load's ID.
    ///   - service: The service.
    ///   - path: The path under the base URL and version (`goods/{id}`).
    ///   - message: What went wrong.
    ///   - underlyingError: The error underneath.
    ///   - response: The response, if one arrived.
    ///   - attempts: How many times the request was sent, or `nil` to tell from the kind and
    ///     the response (1 when one arrived or the kind is a sending failure, 0 otherwise).
    public init(
        _ kind: Kind, loadID: LoadID, service: ServiceName, path: String, message: String,
        underlyingError: (any Error)? = nil, response: HTTPResponse? = nil, attempts: Int? = nil
    ) {
        storage = Storage(
            kind: kind, loadID: loadID, service: service, path: path, message: message,
            underlyingError: underlyingError, response: response, attempts: attempts)
    }

    /// The same error with what its response's body said (``ErrorBodyRule``).
    func carrying(_ reading: ErrorBodyRule.Reading) -> APIError {
        var error = self
        error.storage = Storage(copying: storage, attempts: storage.attempts, serverSaid: reading)
        return error
    }

    /// The server's message, read from the body of a failed status by the service's
    /// ``/AIFServices/Service/errorBody`` rule (`"Validation Failed"`), when it found one; ``message``
    /// then shows it instead of the body's start.
    public var serverMessage: String? { storage.serverSaid?.message }

    /// The server's code for the failure, read as ``serverMessage`` is, when there is one.
    public var serverCode: String? { storage.serverSaid?.code }

    /// The body of a failed status decoded into the type the endpoint or the service declared
    /// (``Endpoint/errorBody``, ``/AIFServices/ErrorBodyRule/type``), when it is `Body` and the
    /// body decoded into it.
    ///
    /// ```swift
    /// catch let error as APIError where error.statusCode == 422 {
    ///     for field in error.errorBody(as: GitHubError.self)?.errors ?? [] { mark(field.field, field.code) }
    /// }
    /// ```
    ///
    /// - Parameter type: The declared type.
    /// - Returns: The decoded body, or `nil`.
    public func errorBody<Body: Sendable>(as type: Body.Type = Body.self) -> Body? {
        storage.serverSaid?.decoded as? Body
    }

    /// The kinds of failure that happen while sending, so after one attempt at least.
    private static let sentKinds: Set<Kind> = [.timeout, .noNetwork, .responseLost, .transport]

    /// The same error, saying when the request may be sent again.
    func retryable(at date: Date?) -> APIError {
        guard let date else { return self }
        var error = self
        error.storage = Storage(copying: storage, retryableAt: date)
        return error
    }

    /// The same error, counting `attempts` sends.
    func counting(attempts: Int) -> APIError {
        var error = self
        error.storage = Storage(copying: storage, attempts: attempts, serverSaid: storage.serverSaid)
        return error
    }

    /// The same error, its message ending with why the load was not retried (`note`: the
    /// failure, and what stopped the retry) and, when the server said, when it may be sent
    /// again: `(not retried: …)` after one attempt, `(gave up: …)` after retries.
    func explaining(notRetried note: String, retryableAt: Date? = nil) -> APIError {
        var error = self
        var explained = "\(message) (\(attempts > 1 ? "gave up" : "not retried"): \(note)"
        if let retryableAt { explained += "; it may be sent again from \(retryableAt.formatted(.iso8601))" }
        error.storage = Storage(copying: storage, message: explained + ")", retryableAt: retryableAt)
        return error
    }

    /// When the server said the request may be sent again (`Retry-After`, a rate limit's
    /// reset), when the load ended without waiting that long — past its wait budget
    /// (``/AIFServices/RetryPolicy/maxTotalWait``), its total timeout or the longest wait;
    /// `nil` otherwise.
    public var retryableAt: Date? { storage.retryableAt }

    /// The fields, in one shared immutable box: an error is one reference wide, so every
    /// `Result` carrying one (and every frame holding such a result) stays small.
    private var storage: Storage

    private final class Storage: Sendable {
        let kind: Kind
        let loadID: LoadID
        let service: ServiceName
        let path: String
        let message: String
        let underlyingError: (any Error)?
        let response: HTTPResponse?
        let attempts: Int?
        /// What the body of a failed status said, when it was read.
        let serverSaid: ErrorBodyRule.Reading?
        /// When the server said the request may be sent again (see ``APIError/retryableAt``).
        let retryableAt: Date?

        /// `storage` with a new message, count of attempts, reading of the body or time it may
        /// be sent again.
        convenience init(
            copying storage: Storage, message: String? = nil, attempts: Int? = nil, serverSaid: ErrorBodyRule.Reading? = nil, retryableAt: Date? = nil
        ) {
            self.init(
                kind: storage.kind, loadID: storage.loadID, service: storage.service, path: storage.path, message: message ?? storage.message,
                underlyingError: storage.underlyingError, response: storage.response, attempts: attempts ?? storage.attempts,
                serverSaid: serverSaid ?? storage.serverSaid, retryableAt: retryableAt ?? storage.retryableAt)
        }

        init(
            kind: Kind, loadID: LoadID, service: ServiceName, path: String, message: String,
            underlyingError: (any Error)?, response: HTTPResponse?, attempts: Int?, serverSaid: ErrorBodyRule.Reading? = nil, retryableAt: Date? = nil
        ) {
            self.kind = kind
            self.loadID = loadID
            self.service = service
            self.path = path
            self.message = message
            self.underlyingError = underlyingError
            self.response = response
            self.attempts = attempts
            self.serverSaid = serverSaid
            self.retryableAt = retryableAt
        }
    }

    /// Whether the load was cancelled rather than failed.
    public var isCancellation: Bool { kind == .cancelled }

    /// The HTTP status, when a response arrived.
    public var statusCode: Int? { response?.statusCode }

    /// For a ``Kind-swift.struct/serviceVeto``, the service's verdict: its code and message.
    public var serviceVeto: ServiceVeto? { underlyingError as? ServiceVeto }

    /// `load #12 (service "shop", path "goods/{id}"): HTTP status 404: …`.
    public var description: String {
        let tries = attempts > 1 ? " after \(attempts) attempts" : ""
        return "load \(loadID) (service \"\(service)\", path \"\(path)\"): \(kindDescription)\(tries): \(message)"
    }

    /// The kind with what it carries: `HTTP status 404`, `service veto 4001`.
    private var kindDescription: String {
        if kind == .httpStatus, let statusCode { return "\(kind) \(statusCode)" }
        if kind == .serviceVeto, let serviceVeto { return "\(kind) \(serviceVeto.code)" }
        return kind.description
    }
}

extension APIError {
    /// Classifies an error thrown while sending.
    static func sending(_ error: any Error, id: LoadID, service: ServiceName, path: String) -> APIError {
        func make(_ kind: Kind, _ message: String) -> APIError {
            APIError(kind, loadID: id, service: service, path: path, message: message, underlyingError: error)
        }
        switch error {
        case let transport as TransportError:
            if transport.code == .cancelled { return make(.cancelled, "the request was cancelled") }
            if transport.isTimeout { return make(.timeout, transport.description) }
            if transport.isCannotConnect { return make(.noNetwork, transport.description) }
            if transport.code == .responseLost { return make(.responseLost, transport.description) }
            if transport.code == .transportShutDown { return make(.shutDown, transport.description) }
            return make(.transport, transport.description)
        case let service as ServiceError:
            return make(.configuration, service.description)
        case is CancellationError:
            return make(.cancelled, "the request was cancelled")
        default:
            return make(.transport, String(describing: error))
        }
    }

    /// Describes a decoding failure in plain words: where in the document, and what.
    static func describeDecoding(_ error: any Error, body: Data, contentType: String?) -> String {
        let shown = contentType.map { " (Content-Type \($0))" } ?? ""
        guard let decoding = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            let text = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return text.isEmpty ? "the top level" : String(text.drop(while: { $0 == "." }))
        }
        switch decoding {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            let preview = bodyPreview(body, limit: 80, hiding: [])
            return "the body is not valid JSON\(shown): \(preview.debugDescription)"
        case .dataCorrupted(let context):
            return "bad value at \(path(context)): \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "missing key \"\(key.stringValue)\" at \(path(context))"
        case .typeMismatch(let type, let context):
            return "expected \(type) at \(path(context)): \(context.debugDescription)"
        case .valueNotFound(let type, let context):
            return "null where \(type) was expected at \(path(context))"
        @unknown default:
            return "\(decoding)"
        }
    }
}
