import Foundation

/// Why a transfer ended without a response.
///
/// Every error names the URL (with any password removed) and, when libcurl reported the
/// failure, libcurl's own code and message. Match on ``code``:
///
/// ```swift
/// catch let error as TransportError where error.code == .connectTimeout { … }
/// ```
public struct TransportError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure. An extensible set: new codes may be added without breaking
    /// code that switches on the existing ones with a `default` branch.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case connectionRefused = "connection refused"
            case hostUnreachable = "host unreachable"
            case nameResolutionFailed = "name resolution failed"
            case connectTimeout = "connect timeout"
            case totalTimeout = "total timeout"
            case tlsFailure = "TLS failure"
            case cancelled = "cancelled"
            case connectionDropped = "connection dropped"
            case responseLost = "response lost"
            case invalidURL = "invalid URL"
            case invalidRequest = "invalid request"
            case tooManyRedirects = "too many redirects"
            case bodySourceFailed = "request body source failed"
            case bodyDestinationFailed = "response body destination failed"
            case transportShutDown = "transport shut down"
            case invalidResponse = "invalid response"
            case responseTooLarge = "response too large"
            case responseHeadersTooLarge = "response headers too large"
            case stalled = "transfer stalled"
            case withdrawn = "withdrawn before it was sent"
            case other = "transfer failed"
        }

        private let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// The server refused the TCP connection (nothing listens on that port).
        public static let connectionRefused = Code(.connectionRefused)
        /// No route to the host or network.
        public static let hostUnreachable = Code(.hostUnreachable)
        /// The host name (or the proxy's) could not be resolved.
        public static let nameResolutionFailed = Code(.nameResolutionFailed)
        /// The connection phase (connect and TLS handshake) took longer than its timeout.
        public static let connectTimeout = Code(.connectTimeout)
        /// The whole transfer took longer than its timeout.
        public static let totalTimeout = Code(.totalTimeout)
        /// TLS failed; ``TransportError/tlsReason`` says why.
        public static let tlsFailure = Code(.tlsFailure)
        /// The transfer was cancelled, by its task, its Swift `Task`, or transport shutdown.
        public static let cancelled = Code(.cancelled)
        /// The connection closed or broke before the response was complete.
        public static let connectionDropped = Code(.connectionDropped)
        /// The request went out, and the connection closed before any byte of the answer came
        /// back: the server may have processed it. Unlike the failures that happen before a
        /// request leaves (``connectionRefused``, ``connectTimeout``, a TLS failure …), sending
        /// it again may repeat its effect — a charge made twice — so only a request that is
        /// safe to repeat (``HTTPRequest/isIdempotent``) is retried after it.
        public static let responseLost = Code(.responseLost)
        /// The URL is malformed or its scheme is not `http`/`https`.
        public static let invalidURL = Code(.invalidURL)
        /// The request cannot be sent as given (a header with a line break, an unreadable
        /// option value).
        public static let invalidRequest = Code(.invalidRequest)
        /// More redirects than the policy allows.
        public static let tooManyRedirects = Code(.tooManyRedirects)
        /// The request body could not be read (a missing or unreadable file).
        public static let bodySourceFailed = Code(.bodySourceFailed)
        /// The request's ``HTTPRequest/bodyReceiver`` refused the body (a full disk, an
        /// unwritable file, a resource that changed); the detail says why.
        public static let bodyDestinationFailed = Code(.bodyDestinationFailed)
        /// The transport was shut down before the request was submitted.
        public static let transportShutDown = Code(.transportShutDown)
        /// The server's answer is not valid HTTP (a garbage status line, a malformed header, a
        /// redirect to a `Location` that cannot be followed).
        public static let invalidResponse = Code(.invalidResponse)
        /// The response body is larger than the transport's
        /// ``CurlTransport/Limits-swift.struct/maxResponseBodySize``; the transfer was stopped
        /// and what had arrived was freed.
        public static let responseTooLarge = Code(.responseTooLarge)
        /// The response's header section is larger than libcurl accepts (100 KiB of one header
        /// line, 300 KiB in all).
        public static let responseHeadersTooLarge = Code(.responseHeadersTooLarge)
        /// Data moved slower than the low-speed limit for longer than its window (see
        /// ``HTTPRequest/Timeouts/idle``): the peer stopped sending or receiving.
        public static let stalled = Code(.stalled)
        /// Any other libcurl failure; see ``TransportError/curlCode``.
        public static let other = Code(.other)
        /// The request's ``SendingCondition`` withdrew it before a byte went out. Never
        /// delivered to an app: only the engine sets conditions, and it sends such a request
        /// again once what it waited for is there.
        package static let withdrawn = Code(.withdrawn)

        /// The code in plain words.
        public var description: String { base.rawValue }
    }

    /// Why a TLS connection failed.
    public enum TLSFailureReason: Sendable, Hashable, CustomStringConvertible {
        /// The server's certificate chain is not trusted by the configured CA store.
        case certificateNotTrusted
        /// The server's certificate is trusted, but was issued for another host name than the
        /// one asked for.
        case hostNameMismatch
        /// The server's public key matches none of the pinned keys.
        case pinnedKeyMismatch
        /// The handshake failed (protocol or cipher mismatch, a non-TLS peer).
        case handshakeFailed
        /// The configured CA bundle could not be read.
        case unreadableCertificateAuthorities
        /// The configured client certificate or its key could not be used here: unreadable, not
        /// PEM, a key that does not match, a wrong passphrase.
        case clientCertificateUnusable
        /// The server refused the client certificate presented (a TLS alert such as "unknown
        /// CA" or "bad certificate").
        case clientCertificateRefused
        /// The server requires a client certificate, and none was configured.
        case clientCertificateRequired
        /// Another TLS failure; see the libcurl message.
        case other

        /// The reason in plain words.
        public var description: String {
            switch self {
            case .certificateNotTrusted: "the server certificate is not trusted"
            case .hostNameMismatch: "the server certificate was issued for another host name"
            case .pinnedKeyMismatch: "the server public key does not match the pinned key"
            case .handshakeFailed: "the TLS handshake failed"
            case .unreadableCertificateAuthorities: "the CA bundle could not be read"
            case .clientCertificateUnusable: "the client certificate could not be used"
            case .clientCertificateRefused: "the server refused the client certificate"
            case .clientCertificateRequired: "the server requires a client certificate"
            case .other: "TLS error"
            }
        }
    }

    /// The kind of failure.
    public let code: Code
    /// The request URL, with any password in it replaced by `***`.
    public let url: String
    /// For ``Code-swift.struct/tlsFailure``, why TLS failed.
    public let tlsReason: TLSFailureReason?
    /// libcurl's `CURLcode`, when libcurl reported the failure.
    public let curlCode: Int?
    /// libcurl's own message (its error buffer, or its text for the code), when it reported
    /// the failure; otherwise this library's explanation.
    public let detail: String
    /// How many times the transport sent the request again on a fresh connection before it
    /// failed, because a connection it reused closed before answering: the server may have
    /// seen the request `1 + resends` times. Only a request that is safe to repeat
    /// (``HTTPRequest/isIdempotent``) is sent again; 0 for most failures.
    public var resends: Int

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - url: The request URL (a password in it is redacted here).
    ///   - detail: What happened, in plain words.
    ///   - tlsReason: For TLS failures, the reason.
    ///   - curlCode: libcurl's code, if it reported the failure.
    ///   - resends: How many times the request was sent again on a fresh connection.
    public init(_ code: Code, url: String, detail: String, tlsReason: TLSFailureReason? = nil, curlCode: Int? = nil, resends: Int = 0) {
        self.code = code
        self.url = Self.redactingPassword(in: url)
        self.detail = detail
        self.tlsReason = tlsReason
        self.curlCode = curlCode
        self.resends = resends
    }

    /// Whether no connection could be made at all: refused, unreachable, or unresolvable.
    public var isCannotConnect: Bool {
        code == .connectionRefused || code == .hostUnreachable || code == .nameResolutionFailed
    }

    /// Whether a timeout ended the transfer (connect, total, or a stall past the idle limit).
    public var isTimeout: Bool {
        code == .connectTimeout || code == .totalTimeout || code == .stalled
    }

    /// One line: the kind, the reason for TLS failures, the URL, and libcurl's code and message.
    public var description: String {
        var text = "\(code)"
        if let tlsReason { text += " (\(tlsReason))" }
        text += ": \(url)"
        if let curlCode {
            text += " [libcurl \(curlCode): \(detail)]"
        } else {
            text += " [\(detail)]"
        }
        return text
    }

    /// Replaces the password of a `user:password@host` URL with `***`, so that it never reaches
    /// a log.
    ///
    /// - Parameter url: The URL as text.
    /// - Returns: The URL with any password redacted; unchanged otherwise.
    public static func redactingPassword(in url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let authorityStart = schemeEnd.upperBound
        let authorityEnd = url[authorityStart...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? url.endIndex
        let authority = url[authorityStart..<authorityEnd]
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return url }
        return String(url[..<url.index(after: colon)]) + "***" + String(url[at...])
    }
}
