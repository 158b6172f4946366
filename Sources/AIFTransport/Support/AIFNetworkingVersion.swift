import CCurl

/// The library's version, and the libcurl it runs on.
public enum AIFNetworkingVersion {
    /// This library's version.
    public static let library = "0.1.0"

    /// The libcurl loaded at run time and its TLS library (`7.88.1, OpenSSL/3.0.17`).
    public static var libcurl: String {
        let info = aif_curl_version_info().pointee
        let version = info.version.map { String(cString: $0) } ?? "unknown"
        return info.ssl_version.map { "\(version), \(String(cString: $0))" } ?? version
    }
}
