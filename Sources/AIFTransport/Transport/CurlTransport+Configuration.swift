public import Foundation
public import Logging

extension CurlTransport {
    /// Everything a ``CurlTransport`` can be told, with defaults a client of a public HTTPS API
    /// can use as they are.
    public struct Configuration: Sendable {
        /// Default timeouts; a request's own ``HTTPRequest/timeouts`` replace them.
        public var timeouts: HTTPRequest.Timeouts
        /// Default redirect policy; a request's own ``HTTPRequest/redirects`` replaces it.
        public var redirects: HTTPRequest.RedirectPolicy
        /// Connection limits and reuse.
        public var connectionPool: ConnectionPool
        /// How large a response may be, and how many requests share one HTTP/2 connection.
        public var limits: Limits
        /// Which HTTP versions to speak.
        public var httpVersion: HTTPVersionPreference
        /// Certificate verification, trusted CAs and pinning.
        public var tls: TLS
        /// Which proxy, if any, requests go through.
        public var proxy: ProxyConfiguration
        /// How every request reaches its server: a Unix-domain socket, host overrides, a client
        /// certificate for mutual TLS. A request's own ``HTTPRequest/connection`` adds to it.
        public var connection: HTTPRequest.Connection
        /// Whether to ask for and undo compressed response bodies.
        public var decompression: Decompression
        /// Headers sent with every request (a request's own header of the same name wins).
        public var defaultHeaders: HTTPHeaders
        /// Where the transport logs; nothing is logged by default.
        public var logger: Logger

        /// Creates a configuration; every argument has a default.
        ///
        /// - Parameters:
        ///   - timeouts: 10 s to connect, 60 s in all, by default.
        ///   - redirects: Follow up to 10 by default.
        ///   - connectionPool: Eight connections per host, a connection cache sized to the
        ///     concurrency, by default.
        ///   - limits: In-memory bodies up to 64 MiB, 100 streams per HTTP/2 connection.
        ///   - httpVersion: HTTP/2 over TLS where the server offers it, HTTP/1.1 otherwise.
        ///   - tls: Full verification against the system CA store.
        ///   - proxy: From the standard environment variables.
        ///   - connection: TCP to the address each host name resolves to, without a client
        ///     certificate, by default.
        ///   - decompression: gzip, deflate and brotli, by default.
        ///   - defaultHeaders: A `User-Agent` naming this library (``defaultUserAgent``).
        ///   - logger: A logger that discards everything.
        public init(
            timeouts: HTTPRequest.Timeouts = .default,
            redirects: HTTPRequest.RedirectPolicy = .default,
            connectionPool: ConnectionPool = ConnectionPool(),
            limits: Limits = Limits(),
            httpVersion: HTTPVersionPreference = .automatic,
            tls: TLS = TLS(),
            proxy: ProxyConfiguration = .environment(),
            connection: HTTPRequest.Connection = HTTPRequest.Connection(),
            decompression: Decompression = .automatic,
            defaultHeaders: HTTPHeaders = ["User-Agent": Self.defaultUserAgent],
            logger: Logger = Logger(label: "AIFNetworking.CurlTransport", factory: { _ in SwiftLogNoOpLogHandler() })
        ) {
            self.timeouts = timeouts
            self.redirects = redirects
            self.connectionPool = connectionPool
            self.limits = limits
            self.httpVersion = httpVersion
            self.tls = tls
            self.proxy = proxy
            self.connection = connection
            self.decompression = decompression
            self.defaultHeaders = defaultHeaders
            self.logger = logger
        }
    }

    /// Connection limits and the connection cache.
    public struct ConnectionPool: Sendable, Hashable {
        /// The most connections open to one host at a time; `nil` for no cap. Requests beyond
        /// it wait (in order) for a connection to come free rather than opening more, so a
        /// burst of thousands of loads does not open thousands of connections to a small
        /// server. Over HTTP/2 each connection carries up to
        /// ``Limits-swift.struct/maxConcurrentStreamsPerConnection`` requests at once.
        public var maxConnectionsPerHost: Int?
        /// The most connections open at a time in all; `nil` for no cap. Requests beyond the
        /// caps wait for a connection rather than failing.
        ///
        /// libcurl counts this cap per multi handle, so with a cap the transport keeps every
        /// connection in one, which costs more per request with many hundreds in flight (see
        /// <doc:TheTransport>).
        public var maxConnections: Int?
        /// How many idle connections to keep for reuse; `nil` sizes the cache to the largest
        /// number of requests that have been in flight at once (at least 16), so a steady
        /// concurrency never closes connections it will need again a moment later.
        ///
        /// libcurl keeps this cache per multi handle, so with a fixed size the transport keeps
        /// every connection in one, as with ``maxConnections``.
        public var connectionCacheSize: Int?
        /// How long an idle connection may be kept before it is closed rather than reused.
        public var maxIdleTime: Duration

        /// Creates connection-pool settings.
        ///
        /// - Parameters:
        ///   - maxConnectionsPerHost: Eight by default (as AsyncHTTPClient; browsers use six).
        ///   - maxConnections: No cap by default.
        ///   - connectionCacheSize: Automatic by default.
        ///   - maxIdleTime: 60 seconds by default.
        public init(
            maxConnectionsPerHost: Int? = 8,
            maxConnections: Int? = nil,
            connectionCacheSize: Int? = nil,
            maxIdleTime: Duration = .seconds(60)
        ) {
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.maxConnections = maxConnections
            self.connectionCacheSize = connectionCacheSize
            self.maxIdleTime = maxIdleTime
        }
    }

    /// Limits on what one response may hold and on multiplexing.
    public struct Limits: Sendable, Hashable {
        /// The largest response body kept in memory, in bytes (after any decompression, so a
        /// small compressed body cannot unpack into gigabytes); `nil` for no limit. A body that
        /// announces or reaches more ends the request with
        /// ``TransportError/Code-swift.struct/responseTooLarge`` and what had arrived is freed
        /// at once. A request's own ``HTTPRequest/maxResponseBodySize`` replaces it.
        public var maxResponseBodySize: Int?
        /// How many requests may share one HTTP/2 connection at a time (the server's own
        /// `SETTINGS_MAX_CONCURRENT_STREAMS` may lower it). New requests wait for a stream on a
        /// connection being set up rather than opening connections of their own.
        public var maxConcurrentStreamsPerConnection: Int

        /// Creates limits.
        ///
        /// - Parameters:
        ///   - maxResponseBodySize: 64 MiB by default.
        ///   - maxConcurrentStreamsPerConnection: 100 by default (libcurl's and most servers').
        public init(maxResponseBodySize: Int? = 64 << 20, maxConcurrentStreamsPerConnection: Int = 100) {
            self.maxResponseBodySize = maxResponseBodySize
            self.maxConcurrentStreamsPerConnection = maxConcurrentStreamsPerConnection
        }
    }

    /// Which HTTP versions to speak.
    public enum HTTPVersionPreference: Sendable, Hashable {
        /// HTTP/2 over TLS when the server offers it in ALPN (with many requests multiplexed on
        /// one connection), HTTP/1.1 otherwise and for cleartext `http`.
        case automatic
        /// HTTP/1.1 only, with or without TLS.
        case http1Only
        /// HTTP/2 for cleartext `http` too, without upgrade (h2c "prior knowledge"): only for
        /// servers known to speak it.
        case http2PriorKnowledge
    }

    /// Response decompression.
    public enum Decompression: Sendable, Hashable {
        /// Send `Accept-Encoding` with every encoding libcurl can undo (gzip, deflate, brotli,
        /// zstd) and return the decoded body.
        case automatic
        /// Ask for nothing and return bodies as they arrive.
        case disabled
    }

    /// TLS settings.
    public struct TLS: Sendable, Hashable {
        /// Whether to check the server's certificate chain and host name.
        public var certificateVerification: CertificateVerification
        /// Extra or replacement trusted certificate authorities; `nil` uses the system store.
        public var certificateAuthorities: CertificateAuthorities?
        /// Public-key pins: when not empty, the server's key must match one of them, on top of
        /// (not instead of) chain verification.
        public var pinnedPublicKeys: [PublicKeyPin]

        /// Creates TLS settings.
        ///
        /// - Parameters:
        ///   - certificateVerification: Full verification by default.
        ///   - certificateAuthorities: The system store by default.
        ///   - pinnedPublicKeys: No pins by default.
        public init(
            certificateVerification: CertificateVerification = .full,
            certificateAuthorities: CertificateAuthorities? = nil,
            pinnedPublicKeys: [PublicKeyPin] = []
        ) {
            self.certificateVerification = certificateVerification
            self.certificateAuthorities = certificateAuthorities
            self.pinnedPublicKeys = pinnedPublicKeys
        }
    }

    /// Whether to verify the server's certificate.
    public enum CertificateVerification: Sendable, Hashable {
        /// Check the chain against the trusted CAs and the host name against the certificate.
        case full
        /// Accept any certificate from anyone. This removes all protection TLS gives against
        /// an attacker on the network; the transport logs a warning when it is created with it.
        /// For local development against self-signed servers only — prefer trusting the
        /// server's CA with ``CertificateAuthorities``.
        case dangerouslyDisabledForDevelopmentOnly
    }

    /// Trusted certificate authorities other than the system store.
    public enum CertificateAuthorities: Sendable, Hashable {
        /// A PEM bundle file at this path.
        case file(path: String)
        /// PEM bundle bytes held in memory.
        case pem(Data)
    }

    /// A pinned public key: the SHA-256 of the server key's DER-encoded SubjectPublicKeyInfo.
    public struct PublicKeyPin: Sendable, Hashable {
        /// The digest, base64-encoded.
        public let sha256Base64: String

        /// Creates a pin from the base64 SHA-256 digest of a SubjectPublicKeyInfo, as printed by
        /// `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`.
        ///
        /// - Parameter sha256Base64: The base64-encoded digest.
        public init(sha256Base64: String) {
            self.sha256Base64 = sha256Base64
        }

        /// The pin in libcurl's `sha256//…` notation.
        var curlNotation: String { "sha256//" + sha256Base64 }
    }
}
