extension HTTPResponse {
    /// The HTTP protocol version a response arrived over.
    public enum Version: Sendable, Hashable, CustomStringConvertible {
        /// HTTP/1.0.
        case http1_0
        /// HTTP/1.1.
        case http1_1
        /// HTTP/2, over TLS (negotiated with ALPN) or cleartext with prior knowledge.
        case http2
        /// HTTP/3 over QUIC.
        case http3
        /// A version libcurl reported that this library does not know.
        case unknown

        /// The version as written in a status line, for example `HTTP/1.1`.
        public var description: String {
            switch self {
            case .http1_0: "HTTP/1.0"
            case .http1_1: "HTTP/1.1"
            case .http2: "HTTP/2"
            case .http3: "HTTP/3"
            case .unknown: "HTTP/?"
            }
        }
    }
}
