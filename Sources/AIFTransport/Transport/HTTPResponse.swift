public import Foundation

/// One HTTP response, as a value.
public struct HTTPResponse: Sendable {
    /// The status code, for example `200`.
    public var statusCode: Int {
        get { storage.fields.statusCode }
        set { change { $0.statusCode = newValue } }
    }
    /// The header fields of the final response (after any redirects).
    public var headers: HTTPHeaders {
        get { storage.fields.headers }
        set { change { $0.headers = newValue } }
    }
    /// The body, decoded from any `Content-Encoding` the transport undid.
    public var body: Data {
        get { storage.fields.body }
        set {
            change {
                $0.body = newValue
                $0.attachment = nil
            }
        }
    }
    /// What a layer above attached to the response while its load runs, for its own later use
    /// (the services layer: the body's JSON, parsed once for the application-error rule and read
    /// again by the decoder); never kept with a response after its load, dropped when the body
    /// changes.
    package var attachment: (any AnyObject & Sendable)? {
        get { storage.fields.attachment }
        set {
            // Most loads attach nothing and clear what is not there: no new storage for that.
            guard newValue !== storage.fields.attachment else { return }
            change { $0.attachment = newValue }
        }
    }
    /// The protocol version the response arrived over.
    public var httpVersion: Version {
        get { storage.fields.httpVersion }
        set { change { $0.httpVersion = newValue } }
    }
    /// The URL of the final response: the request's URL, or where redirects led.
    public var url: URL {
        get { location.url }
        set { location = .parsed(newValue) }
    }
    /// The URL as given, or the request's text (see ``URLLocation``).
    var location: URLLocation {
        get { storage.fields.location }
        set { change { $0.location = newValue } }
    }
    /// Timings and counters of the transfer.
    public var metrics: Metrics {
        get { storage.fields.metrics }
        set { change { $0.metrics = newValue } }
    }

    /// The members, behind one reference that is never written through: a response is copied
    /// through several closures and frames on its way to the caller, and a copy of the members
    /// themselves counts a reference for each of them where this counts one. A change makes new storage (responses are seldom changed: a redirect's
    /// count, a stub's status).
    private var storage: Storage

    private struct Fields: Sendable {
        var statusCode: Int
        var headers: HTTPHeaders
        var body: Data
        var attachment: (any AnyObject & Sendable)?
        var httpVersion: Version
        var location: URLLocation
        var metrics: Metrics
    }

    private final class Storage: Sendable {
        let fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private mutating func change(_ edit: (inout Fields) -> Void) {
        var fields = storage.fields
        edit(&fields)
        storage = Storage(fields)
    }

    /// Creates a response (for stub transports and tests; the transport builds its own).
    public init(
        statusCode: Int,
        headers: HTTPHeaders = HTTPHeaders(),
        body: Data = Data(),
        httpVersion: Version = .http1_1,
        url: URL,
        metrics: Metrics = Metrics()
    ) {
        self.init(statusCode: statusCode, headers: headers, body: body, httpVersion: httpVersion, location: .parsed(url), metrics: metrics)
    }

    /// Creates a response whose URL may still be text (the transport's, from its request).
    init(statusCode: Int, headers: HTTPHeaders, body: Data, httpVersion: Version, location: URLLocation, metrics: Metrics) {
        storage = Storage(Fields(statusCode: statusCode, headers: headers, body: body, httpVersion: httpVersion, location: location, metrics: metrics))
    }

    /// Whether the status is in the `2xx` range.
    public var isSuccess: Bool { (200..<300).contains(statusCode) }
}

extension HTTPResponse {
    /// Timings and counters of one transfer, as libcurl measured them.
    ///
    /// Each time is measured from the start of the transfer to the end of that phase, so they grow
    /// in order: ``nameLookup`` ≤ ``connect`` ≤ ``tlsHandshake`` ≤ ``timeToFirstByte`` ≤ ``total``.
    /// A phase that did not happen (no TLS, a reused connection) is zero.
    public struct Metrics: Sendable, Hashable {
        /// Until name resolution was done.
        public var nameLookup: Duration
        /// Until the TCP connection was up.
        public var connect: Duration
        /// Until the TLS handshake was done (zero without TLS).
        public var tlsHandshake: Duration
        /// Until the first response byte arrived.
        public var timeToFirstByte: Duration
        /// The whole transfer.
        public var total: Duration
        /// Request bytes sent: header and body.
        public var bytesSent: Int
        /// Response bytes received: header and body (the body as it came over the wire).
        public var bytesReceived: Int
        /// Redirects followed.
        public var redirectCount: Int
        /// Whether the transfer went over a connection kept from an earlier one.
        public var reusedConnection: Bool
        /// How many times the transport sent the request again on a fresh connection, because a
        /// connection it reused closed before answering (see ``HTTPRequest/isIdempotent``): the
        /// server may have seen the request `1 + resends` times. Usually 0.
        public var resends: Int

        /// Creates metrics; every field is zero or `false` by default.
        public init(
            nameLookup: Duration = .zero,
            connect: Duration = .zero,
            tlsHandshake: Duration = .zero,
            timeToFirstByte: Duration = .zero,
            total: Duration = .zero,
            bytesSent: Int = 0,
            bytesReceived: Int = 0,
            redirectCount: Int = 0,
            reusedConnection: Bool = false,
            resends: Int = 0
        ) {
            self.nameLookup = nameLookup
            self.connect = connect
            self.tlsHandshake = tlsHandshake
            self.timeToFirstByte = timeToFirstByte
            self.total = total
            self.bytesSent = bytesSent
            self.bytesReceived = bytesReceived
            self.redirectCount = redirectCount
            self.reusedConnection = reusedConnection
            self.resends = resends
        }
    }
}
