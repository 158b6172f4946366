/// This library's version (semantic versioning: `1.2.0`, or `1.3.0-dev` while 1.3.0 is
/// prepared).
///
/// The version's one home: `aif --version`, the transport's default `User-Agent`
/// (``CurlTransport/Configuration/defaultUserAgent``) and the documentation read it from here,
/// and a test holds it equal to the newest section of `CHANGELOG.md` (with `-dev` while that
/// section is in preparation). The libcurl underneath has its own: ``CurlTransport/Library``.
public let aifNetworkingVersion = "1.1.0-dev"

extension CurlTransport.Configuration {
    /// The transport's default `User-Agent`: the library's name and major and minor version,
    /// and libcurl (`AIFNetworking/1.0 libcurl`).
    public static var defaultUserAgent: String {
        let parts = aifNetworkingVersion.split(separator: "-")[0].split(separator: ".")
        return "AIFNetworking/\(parts.prefix(2).joined(separator: ".")) libcurl"
    }
}
