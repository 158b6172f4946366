import CCurl
import COpenSSL

extension CurlTransport {
    /// What the libcurl this process runs on was built with, and what this library does with it —
    /// what `aif doctor` prints.
    ///
    /// ```swift
    /// let library = CurlTransport.Library.current
    /// print(library.version, library.has("HTTP2"), library.has("UnixSockets"))
    /// ```
    public struct Library: Sendable, Hashable {
        /// libcurl's version (`7.88.1`).
        public let version: String
        /// The TLS library libcurl uses, with its version (`OpenSSL/3.0.19`), or `nil` without TLS.
        public let tlsLibrary: String?
        /// The libraries libcurl was built with, each with its version (`zlib/1.2.13`,
        /// `brotli/1.0.9`, `nghttp2/1.52.0` …), in libcurl's order.
        public let components: [String]
        /// The protocols libcurl speaks (this library sends only `http` and `https`).
        public let protocols: [String]
        /// The features libcurl was built with, by libcurl's names (`HTTP2`, `UnixSockets`, `zstd` …).
        public let features: [String]
        /// The libcrypto requests are signed with (`OpenSSL 3.0.19 27 Jan 2026`).
        public let signingLibrary: String

        /// The libcurl loaded in this process.
        public static var current: CurlTransport.Library {
            let info = aif_curl_version_info().pointee
            func text(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
            func list(_ pointer: UnsafePointer<UnsafePointer<CChar>?>?) -> [String] {
                guard var cursor = pointer else { return [] }
                var names: [String] = []
                while let name = cursor.pointee {
                    names.append(String(cString: name))
                    cursor += 1
                }
                return names
            }
            var components: [String] = []
            if let zlib = text(info.libz_version) { components.append("zlib/\(zlib)") }
            if info.age.rawValue >= CURLVERSION_FIFTH.rawValue, let brotli = text(info.brotli_version) { components.append("brotli/\(brotli)") }
            if info.age.rawValue >= CURLVERSION_EIGHTH.rawValue, let zstd = text(info.zstd_version) { components.append("zstd/\(zstd)") }
            if info.age.rawValue >= CURLVERSION_SIXTH.rawValue {
                if let nghttp2 = text(info.nghttp2_version) { components.append("nghttp2/\(nghttp2)") }
                if let quic = text(info.quic_version) { components.append(quic) }
            }
            // Feature names came with libcurl 7.87 (the eleventh form of the structure); before,
            // the bits this library cares about.
            let features = info.age.rawValue >= CURLVERSION_ELEVENTH.rawValue
                ? list(info.feature_names)
                : Self.featureBits.compactMap { info.features & $0.bit != 0 ? $0.name : nil }
            return CurlTransport.Library(
                version: text(info.version) ?? "unknown",
                tlsLibrary: text(info.ssl_version),
                components: components,
                protocols: list(info.protocols),
                features: features,
                signingLibrary: String(cString: OpenSSL_version(OPENSSL_VERSION))
            )
        }

        /// Whether libcurl was built with a feature, by libcurl's name for it, in any case.
        ///
        /// - Parameter feature: `HTTP2`, `HTTP3`, `UnixSockets`, `brotli`, `zstd`, `libz` …
        /// - Returns: `true` when built in.
        public func has(_ feature: String) -> Bool {
            features.contains { $0.lowercased() == feature.lowercased() }
        }

        /// What this library does with one of libcurl's features.
        public struct FeatureUse: Sendable, Hashable {
            /// libcurl's name for the feature.
            public let feature: String
            /// What it is used for here, or why it is not.
            public let use: String
            /// Whether this library uses it when present.
            public let isUsed: Bool
        }

        /// The features this library uses, or could and does not, with what for: the ones `aif
        /// doctor` lists. Whether each is built in is ``has(_:)``.
        public static let featureUses: [FeatureUse] = [
            FeatureUse(feature: "SSL", use: "HTTPS: certificate checks, pinned keys, client certificates", isUsed: true),
            FeatureUse(feature: "HTTP2", use: "HTTP/2 over TLS, many requests on one connection; h2c with http2PriorKnowledge", isUsed: true),
            FeatureUse(feature: "HTTP3", use: "not used: libcurl's HTTP/3 is still experimental in the 7.x and 8.x builds this library targets", isUsed: false),
            FeatureUse(feature: "libz", use: "gzip and deflate responses, undone as they arrive", isUsed: true),
            FeatureUse(feature: "brotli", use: "brotli (br) responses", isUsed: true),
            FeatureUse(feature: "zstd", use: "zstd responses", isUsed: true),
            FeatureUse(feature: "UnixSockets", use: "HTTP over a Unix-domain socket (HTTPRequest.Connection)", isUsed: true),
            FeatureUse(feature: "AsynchDNS", use: "name resolution off the event loop (without it, a slow lookup stalls every transfer)", isUsed: true),
            FeatureUse(feature: "IPv6", use: "IPv6 addresses and host overrides", isUsed: true),
            FeatureUse(feature: "HTTPS-proxy", use: "proxies reached over HTTPS", isUsed: true),
            FeatureUse(feature: "Largefile", use: "downloads and uploads over 2 GiB", isUsed: true),
            FeatureUse(feature: "alt-svc", use: "not used: connections go where the URL (or a host override) says", isUsed: false),
            FeatureUse(feature: "HSTS", use: "not used: a service's base URL names its scheme", isUsed: false),
        ]

        /// libcurl's feature bits, for a libcurl older than its feature names.
        private static let featureBits: [(name: String, bit: Int32)] = [
            ("IPv6", CURL_VERSION_IPV6), ("SSL", CURL_VERSION_SSL), ("libz", CURL_VERSION_LIBZ), ("AsynchDNS", CURL_VERSION_ASYNCHDNS),
            ("Largefile", CURL_VERSION_LARGEFILE), ("HTTP2", CURL_VERSION_HTTP2), ("UnixSockets", CURL_VERSION_UNIX_SOCKETS),
            ("HTTPS-proxy", CURL_VERSION_HTTPS_PROXY), ("brotli", CURL_VERSION_BROTLI), ("alt-svc", CURL_VERSION_ALTSVC),
            ("HTTP3", CURL_VERSION_HTTP3), ("zstd", CURL_VERSION_ZSTD), ("HSTS", CURL_VERSION_HSTS),
        ]
    }
}
