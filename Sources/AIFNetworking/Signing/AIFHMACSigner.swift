import Foundation

/// The default AIF-HMAC scheme, specified so that a server in any language can verify it.
///
/// The signer adds `api_key` (the public key), `timestamp` (Unix seconds) and `nonce`, then
/// `sign`: the lowercase hex HMAC-SHA256, keyed with the private key's UTF-8 bytes, of four
/// lines joined by `\n` (no trailing newline):
///
/// 1. the method in upper case;
/// 2. the path exactly as sent, percent-encoded, without the query (`/v1/goods/42`);
/// 3. the canonical query: every query parameter of the final URL but `sign` (or, with
///    ``Coverage/signatureFieldsOnly``, just `api_key`, `nonce`, `timestamp`), key and value
///    each percent-encoded per RFC 3986 (`A-Z a-z 0-9 - . _ ~` kept, everything else `%XX`
///    upper-case, space `%20`), as `key=value`, sorted by encoded key then encoded value in
///    byte order, joined by `&`;
/// 4. the lowercase hex SHA-256 of the exact body bytes (of nothing when there is no body).
///
/// With ``Placement/headers`` the values travel as `X-API-Key`, `X-Timestamp`, `X-Nonce` and
/// `X-Signature` instead, and the canonical string is the same as if the first three were
/// query parameters. The URL's own query is re-encoded the same way, so what is sent and what
/// is signed agree.
public struct AIFHMACSigner: RequestSigner {
    /// Where the signature fields go.
    public enum Placement: Sendable, Hashable {
        /// Query parameters `api_key`, `timestamp`, `nonce`, then `sign` last.
        case query
        /// Headers `X-API-Key`, `X-Timestamp`, `X-Nonce`, `X-Signature`.
        case headers
    }

    /// Which query parameters the signature covers.
    public enum Coverage: Sendable, Hashable {
        /// Every query parameter.
        case allParameters
        /// Only `api_key`, `nonce` and `timestamp`.
        case signatureFieldsOnly
    }

    /// Where the signature fields go.
    public var placement: Placement
    /// Which query parameters are signed.
    public var coverage: Coverage

    /// Creates the signer.
    ///
    /// - Parameters:
    ///   - placement: Query parameters by default.
    ///   - coverage: Every query parameter by default.
    public init(placement: Placement = .query, coverage: Coverage = .allParameters) {
        self.placement = placement
        self.coverage = coverage
    }

    /// Signs `request` (see the type's description for the exact scheme).
    public func sign(_ request: HTTPRequest, credentials: SigningCredentials, context: SigningContext) throws(SigningError) -> HTTPRequest {
        let fields = [
            (name: "api_key", value: credentials.publicKey),
            (name: "timestamp", value: String(context.unixSeconds)),
            (name: "nonce", value: context.nonce),
        ]
        let ownQuery = PercentEncoding.queryItems(of: request.url).filter { $0.name != "sign" }
        let signedItems: [(name: String, value: String)]
        switch coverage {
        case .allParameters: signedItems = ownQuery + fields
        case .signatureFieldsOnly: signedItems = fields
        }
        let canonical = try canonicalString(method: request.method, url: request.url, signedItems: signedItems, body: request.body)
        let signature = Digest.hex(Digest.hmac(Array(canonical.utf8), key: credentials.privateKey.bytes))

        var signed = request
        switch placement {
        case .query:
            signed.url = PercentEncoding.url(request.url, replacingQueryWith: ownQuery + fields + [(name: "sign", value: signature)])
        case .headers:
            signed.url = PercentEncoding.url(request.url, replacingQueryWith: ownQuery)
            signed.headers.set(name: "X-API-Key", value: credentials.publicKey)
            signed.headers.set(name: "X-Timestamp", value: String(context.unixSeconds))
            signed.headers.set(name: "X-Nonce", value: context.nonce)
            signed.headers.set(name: "X-Signature", value: signature)
        }
        return signed
    }

    /// The string the signature is computed over, for a server's implementation to compare
    /// against and for debugging a mismatch.
    ///
    /// - Parameters:
    ///   - method: The request method.
    ///   - url: The URL as it will be sent (its path is used as it stands).
    ///   - signedItems: The decoded query parameters the signature covers.
    ///   - body: The body.
    /// - Returns: The four-line canonical string.
    public func canonicalString(
        method: HTTPMethod,
        url: URL,
        signedItems: [(name: String, value: String)],
        body: HTTPRequest.Body
    ) throws(SigningError) -> String {
        let path = url.path(percentEncoded: true)
        let query = signedItems
            .map { (PercentEncoding.encode($0.name), PercentEncoding.encode($0.value)) }
            .sorted { lhs, rhs in
                lhs.0 != rhs.0 ? lhs.0.utf8.lexicographicallyPrecedes(rhs.0.utf8) : lhs.1.utf8.lexicographicallyPrecedes(rhs.1.utf8)
            }
            .map { $0.0 + "=" + $0.1 }
            .joined(separator: "&")
        let bodyHash = Digest.hex(try body.sha256(url: url))
        return [method.rawValue.uppercased(), path.isEmpty ? "/" : path, query, bodyHash].joined(separator: "\n")
    }
}
