public import Foundation

extension CurlTransport {
    /// Which proxy requests go through.
    ///
    /// ```swift
    /// .environment()                                   // http_proxy, https_proxy, no_proxy …
    /// .explicit("http://proxy.internal:3128", excluding: ["localhost", ".corp"])
    /// .none
    /// ```
    public struct ProxyConfiguration: Sendable, Hashable {
        /// The proxy URL for `http` requests, or `nil` to connect directly.
        public var httpProxy: String?
        /// The proxy URL for `https` requests, or `nil` to connect directly.
        public var httpsProxy: String?
        /// Hosts (and domain suffixes such as `.example.com`) reached directly even when a proxy is
        /// set; `*` means all.
        public var excludedHosts: [String]

        /// Creates a configuration with a proxy per scheme.
        ///
        /// - Parameters:
        ///   - httpProxy: For `http` requests, or `nil`.
        ///   - httpsProxy: For `https` requests, or `nil`.
        ///   - excludedHosts: Hosts reached directly.
        public init(httpProxy: String?, httpsProxy: String?, excludedHosts: [String] = []) {
            self.httpProxy = httpProxy
            self.httpsProxy = httpsProxy
            self.excludedHosts = excludedHosts
        }

        /// No proxy, whatever the environment says.
        public static let none = ProxyConfiguration(httpProxy: nil, httpsProxy: nil)

        /// One proxy for every request.
        ///
        /// - Parameters:
        ///   - url: The proxy, for example `http://user:secret@proxy:3128` or `socks5h://proxy:1080`.
        ///   - excludedHosts: Hosts reached directly.
        /// - Returns: The configuration.
        public static func explicit(_ url: String, excluding excludedHosts: [String] = []) -> ProxyConfiguration {
            ProxyConfiguration(httpProxy: url, httpsProxy: url, excludedHosts: excludedHosts)
        }

        /// The proxy the standard environment variables name, read once, now.
        ///
        /// Follows curl's rules: `http_proxy` (lower case only: `HTTP_PROXY` can be set by a CGI
        /// request header, so it is ignored) for `http`; `https_proxy` or `HTTPS_PROXY` for `https`;
        /// `all_proxy` or `ALL_PROXY` for either when the specific one is absent; and `no_proxy` or
        /// `NO_PROXY`, a comma-separated list, for hosts to reach directly.
        ///
        /// - Parameter environment: The variables to read; the process's by default.
        /// - Returns: The configuration (``none`` when no variable is set).
        public static func environment(
            _ environment: [String: String] = ProcessInfo.processInfo.environment
        ) -> ProxyConfiguration {
            func value(_ names: String...) -> String? {
                for name in names {
                    if let value = environment[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty { return value }
                }
                return nil
            }
            let all = value("all_proxy", "ALL_PROXY")
            let excluded = (value("no_proxy", "NO_PROXY") ?? "")
                .split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
            return ProxyConfiguration(
                httpProxy: value("http_proxy") ?? all,
                httpsProxy: value("https_proxy", "HTTPS_PROXY") ?? all,
                excludedHosts: excluded
            )
        }

        /// The proxy for a URL scheme, or `nil` for a direct connection.
        func proxy(forScheme scheme: String?) -> String? {
            switch scheme?.lowercased() {
            case "https": httpsProxy
            default: httpProxy
            }
        }
    }
}
