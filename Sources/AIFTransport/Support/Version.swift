import CCurl

/// The library's version, and the libcurl it runs on.
///
/// The version's one home: `aif --version`, the transport's default `User-Agent` and the
/// documentation read it from here, and a test holds it equal to the newest section of
/// `CHANGELOG.md` (with `-dev` while that section is in preparation).
public enum AIFNetworkingVersion {
    /// This library's version (semantic versioning: `1.2.0`, or `1.3.0-dev` while 1.3.0 is
    /// prepared).
    public static let library = "1.0.0-dev"

    /// The transport's default `User-Agent`: the library's name and major and minor version,
    /// and libcurl (`AIFNetworking/1.0 libcurl`).
    public static var userAgent: String {
        let parts = library.split(separator: "-")[0].split(separator: ".")
        return "AIFNetworking/\(parts.prefix(2).joined(separator: ".")) libcurl"
    }

    /// The libcurl loaded at run time and its TLS library (`7.88.1, OpenSSL/3.0.17`).
    public static var libcurl: String {
        let info = aif_curl_version_info().pointee
        let version = info.version.map { String(cString: $0) } ?? "unknown"
        return info.ssl_version.map { "\(version), \(String(cString: $0))" } ?? version
    }
}
