import Foundation

/// The legacy MD5 scheme of the later CTNetworking, for old backends that still verify it:
/// `sign` = lowercase hex MD5 of the query parameters, unescaped, sorted by name (then value),
/// joined as `k=v&k=v`, followed directly by the private key. MD5 is not a secure MAC; use
/// ``AIFHMACSigner`` or ``HTTPMessageSignatureSigner`` wherever the server allows.
public struct LegacyMD5Signer: RequestSigner {
    /// Creates the signer.
    public init() {}

    /// `legacy MD5 (not a secure MAC)`.
    public var schemeDescription: String { "legacy MD5 (not a secure MAC)" }

    /// Appends `sign` to the query.
    public func sign(_ request: HTTPRequest, credentials: SigningContext.Credentials, context: SigningContext) throws(SigningError) -> HTTPRequest {
        let items = PercentEncoding.queryItems(of: request.url).filter { $0.name != "sign" }
        let joined = items
            .sorted { $0.name != $1.name ? $0.name < $1.name : $0.value < $1.value }
            .map { "\($0.name)=\($0.value)" }
            .joined(separator: "&")
        let signature = Digest.hex(Digest.hash(Array(joined.utf8) + credentials.privateKey.bytes, algorithm: .md5))
        var signed = request
        signed.url = PercentEncoding.url(request.url, replacingQueryWith: items + [(name: "sign", value: signature)])
        return signed
    }
}
