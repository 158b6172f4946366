public import Foundation

/// One HTTP request, as a value: what to send and, optionally, how.
///
/// Settings left `nil` (``timeouts``, ``redirects``) take the transport's defaults.
public struct HTTPRequest: Sendable {
    /// Where a request body comes from.
    public enum Body: Sendable {
        /// No body.
        case empty
        /// These bytes.
        case bytes(Data)
        /// The contents of the file at this path, streamed from disk as it is sent (it is never
        /// read into memory whole). Its size is taken when the transfer starts.
        case file(path: String)
        /// A `multipart/form-data` body, its files streamed from disk as it is sent; the
        /// transport sets its `Content-Type` (with the boundary) and length.
        case multipart(HTTPRequest.MultipartForm)
        /// Bytes produced as the body is sent, from an `AsyncSequence` (chunked when their
        /// length is not known); sent once — a retry or a 307/308 cannot send it again.
        case stream(HTTPRequest.BodyStream)

        /// Whether the body is produced as it is sent (``stream(_:)``), and so can be sent once only.
        public var isStream: Bool {
            if case .stream = self { true } else { false }
        }

        /// The number of bytes of an in-memory body; `nil` for a file, multipart or streamed body.
        public var byteCount: Int? {
            switch self {
            case .empty: 0
            case .bytes(let data): data.count
            case .file, .multipart, .stream: nil
            }
        }
    }

    /// The request method.
    public var method: HTTPMethod
    /// The absolute `http` or `https` URL.
    public var url: URL {
        get { location.url }
        set { location = .parsed(newValue) }
    }
    /// The URL as given, or as text the library wrote (see ``URLLocation``).
    package var location: URLLocation
    /// The header fields, sent after the transport's default headers (a name given here
    /// replaces a default of the same name).
    public var headers: HTTPHeaders
    /// The body.
    public var body: Body
    /// Timeouts for this request, or `nil` for the transport's.
    public var timeouts: Timeouts?
    /// The redirect policy for this request, or `nil` for the transport's.
    public var redirects: RedirectPolicy?
    /// The largest response body this request accepts in memory, in bytes, or `nil` for the
    /// transport's limit (``CurlTransport/Limits-swift.struct/maxResponseBodySize``).
    public var maxResponseBodySize: Int?
    /// Where the response body goes as it arrives (a file, a stream), or `nil` to keep it in
    /// memory, in ``HTTPResponse/body``.
    public var bodyReceiver: (any HTTPRequest.BodyReceiver)? {
        get { attachments.bodyReceiver }
        set { attachments.bodyReceiver = newValue }
    }
    /// Suspends, resumes and paces the transfer while it runs, from any thread; `nil` for
    /// none. See ``TransferControl``.
    public var control: TransferControl? {
        get { attachments.control }
        set { attachments.control = newValue }
    }
    /// How this request reaches its server (a Unix socket, host overrides, a client
    /// certificate), added to the transport's ``CurlTransport/Configuration/connection``; `nil`
    /// for the transport's alone.
    public var connection: Connection? {
        get { attachments.connection }
        set { attachments.connection = newValue }
    }
    /// Whether the request may reach the server more than once: sending it twice has the effect
    /// of sending it once, because its method is idempotent or because it carries a key the
    /// server recognises (`Idempotency-Key`).
    ///
    /// The transport sends only such a request again on its own: when a connection it reused
    /// turns out to have closed before any byte of the answer (a server closes idle connections
    /// at times of its own choosing, and the request may have reached it first), it sends the
    /// request once more on a fresh connection and counts it
    /// (``HTTPResponse/Metrics-swift.struct/resends``). Any other request then ends with
    /// ``TransportError/Code-swift.struct/responseLost``: the server may have processed it.
    ///
    /// By default, whether the ``method`` is idempotent (``HTTPMethod/isIdempotent``) and the body
    /// is not a stream, which can be sent once only; set it for a `POST` that carries an
    /// idempotency key. A load's requests of a method that is not safe (``HTTPMethod/isSafe``)
    /// get it from the load's retry policy: what the policy retries, the transport may send again.
    public var isIdempotent: Bool {
        get { idempotence ?? (method.isIdempotent && !body.isStream) }
        set { idempotence = newValue }
    }
    /// ``isIdempotent`` as set, or `nil` to follow the method and body.
    private var idempotence: Bool?
    /// What the request's operation says of sending it again, over its method: `true` when it
    /// only reads (a GraphQL query, POSTed), so a retry policy repeats it as it repeats a GET;
    /// `false` when it must never run twice (a GraphQL mutation whose server ignores
    /// idempotency keys), key or not; `nil` to go by the method and the key.
    package var declaredSafeToRepeat: Bool?
    /// What may still withdraw the request before it goes out, and hears its response's status
    /// first (see ``SendingCondition``); `nil` for most requests.
    package var sendingCondition: (any SendingCondition)? {
        get { attachments.sendingCondition }
        set { attachments.sendingCondition = newValue }
    }
    /// The body receiver, the control, the connection and the sending condition together:
    /// one optional reference to copy with the request instead of four values.
    private var attachments = RequestAttachments()

    /// Creates a request.
    ///
    /// - Parameters:
    ///   - method: The method; `GET` by default.
    ///   - url: The absolute URL.
    ///   - headers: Header fields; none by default.
    ///   - body: The body; none by default.
    ///   - timeouts: Timeouts overriding the transport's, or `nil`.
    ///   - redirects: A redirect policy overriding the transport's, or `nil`.
    ///   - maxResponseBodySize: A response size limit overriding the transport's, or `nil`.
    ///   - bodyReceiver: Takes the response body as it arrives, or `nil` to keep it in memory.
    public init(
        method: HTTPMethod = .get,
        url: URL,
        headers: HTTPHeaders = HTTPHeaders(),
        body: Body = .empty,
        timeouts: Timeouts? = nil,
        redirects: RedirectPolicy? = nil,
        maxResponseBodySize: Int? = nil,
        bodyReceiver: (any HTTPRequest.BodyReceiver)? = nil
    ) {
        self.method = method
        self.location = .parsed(url)
        self.headers = headers
        self.body = body
        self.timeouts = timeouts
        self.redirects = redirects
        self.maxResponseBodySize = maxResponseBodySize
        attachments.bodyReceiver = bodyReceiver
    }
}

extension HTTPRequest {
    /// How long a request may take.
    public struct Timeouts: Sendable, Hashable {
        /// The longest the connection phase may take: name resolution, TCP connect, and the TLS
        /// handshake (and a proxy tunnel, if any). `nil` means no limit of our own.
        public var connect: Duration?
        /// The longest the whole transfer may take, from start to the last byte. `nil` means none.
        public var total: Duration?
        /// The longest the transfer may go without moving a byte either way once connected (a
        /// server that stopped sending, or one still thinking about its answer): a stall ends
        /// the request with ``TransportError/Code-swift.struct/stalled`` however much of the
        /// total time is left, so a long download can have a generous ``total`` and still notice
        /// a dead peer. Whole seconds (rounded up); libcurl measures the speed as an average over
        /// the last five seconds, so bytes that came just before a stall can delay its detection
        /// by up to that much. `nil` means no stall detection.
        public var idle: Duration?

        /// Creates timeouts.
        ///
        /// - Parameters:
        ///   - connect: The connection-phase limit; 10 seconds by default.
        ///   - total: The whole-transfer limit; 60 seconds by default.
        ///   - idle: The stall limit; 30 seconds by default.
        public init(connect: Duration? = .seconds(10), total: Duration? = .seconds(60), idle: Duration? = .seconds(30)) {
            self.connect = connect
            self.total = total
            self.idle = idle
        }

        /// Ten seconds to connect, sixty for the whole transfer, thirty without a byte moving.
        public static let `default` = Timeouts()
    }

    /// Whether and how far to follow HTTP redirects.
    public enum RedirectPolicy: Sendable, Hashable {
        /// Never follow: a `3xx` response is returned as it is.
        case never
        /// Follow up to `max` redirects; one more ends the request with
        /// ``TransportError/Code-swift.struct/tooManyRedirects``.
        case follow(max: Int)

        /// Follow up to ten redirects.
        public static let `default` = RedirectPolicy.follow(max: 10)

        /// The limit as one number: -1 for never following.
        package var maxRedirects: Int {
            switch self {
            case .never: -1
            case .follow(let max): Swift.max(0, max)
            }
        }
    }
}

extension Duration {
    /// The duration in whole seconds, rounded up, at least one.
    var roundedUpSeconds: Int {
        let (seconds, attoseconds) = components
        return Int(max(1, seconds + (attoseconds > 0 ? 1 : 0)))
    }

    /// The duration in nanoseconds, at least one, and at most about 292 years (a deadline
    /// that far off is none).
    var roundedUpNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        guard seconds < 9_000_000_000 else { return Int64.max / 2 }
        return max(1, seconds * 1_000_000_000 + (attoseconds + 999_999_999) / 1_000_000_000)
    }

    /// The duration in whole milliseconds, rounded up so that a positive duration never becomes
    /// zero (which libcurl reads as "no limit").
    var roundedUpMilliseconds: Int {
        let (seconds, attoseconds) = components
        let milliseconds = seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int(max(milliseconds, 1))
    }
}

/// What a few requests carry besides their message: where the response body goes, the
/// transfer's control, the connection settings, the condition it is sent under. Most requests
/// carry none, and then hold no reference at all; the members are immutable and replaced as a
/// whole when one changes, so that requests keep value semantics.
private struct RequestAttachments: Sendable {
    private final class Members: Sendable {
        let bodyReceiver: (any HTTPRequest.BodyReceiver)?
        let control: TransferControl?
        let connection: HTTPRequest.Connection?
        let sendingCondition: (any SendingCondition)?

        init(
            bodyReceiver: (any HTTPRequest.BodyReceiver)?, control: TransferControl?, connection: HTTPRequest.Connection?,
            sendingCondition: (any SendingCondition)?
        ) {
            self.bodyReceiver = bodyReceiver
            self.control = control
            self.connection = connection
            self.sendingCondition = sendingCondition
        }
    }

    private var members: Members?

    var bodyReceiver: (any HTTPRequest.BodyReceiver)? {
        get { members?.bodyReceiver }
        set { replace(bodyReceiver: newValue, control: control, connection: connection, sendingCondition: sendingCondition) }
    }

    var control: TransferControl? {
        get { members?.control }
        set { replace(bodyReceiver: bodyReceiver, control: newValue, connection: connection, sendingCondition: sendingCondition) }
    }

    var connection: HTTPRequest.Connection? {
        get { members?.connection }
        set { replace(bodyReceiver: bodyReceiver, control: control, connection: newValue, sendingCondition: sendingCondition) }
    }

    var sendingCondition: (any SendingCondition)? {
        get { members?.sendingCondition }
        set { replace(bodyReceiver: bodyReceiver, control: control, connection: connection, sendingCondition: newValue) }
    }

    private mutating func replace(
        bodyReceiver: (any HTTPRequest.BodyReceiver)?, control: TransferControl?, connection: HTTPRequest.Connection?,
        sendingCondition: (any SendingCondition)?
    ) {
        if bodyReceiver == nil, control == nil, connection == nil, sendingCondition == nil {
            members = nil
        } else {
            members = Members(bodyReceiver: bodyReceiver, control: control, connection: connection, sendingCondition: sendingCondition)
        }
    }
}
