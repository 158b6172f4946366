public import Foundation

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

    /// `AIF-HMAC`, where its fields go and what it covers.
    public var schemeDescription: String {
        "AIF-HMAC, fields in the \(placement == .query ? "query" : "headers"), covering \(coverage == .allParameters ? "every parameter" : "its own fields")"
    }

    /// The signer with ``coverage`` set: every parameter, or only the signature fields.
    ///
    /// - Parameter allParameters: Whether every query parameter is signed.
    /// - Returns: The signer to sign with.
    public func covering(allParameters: Bool) -> any RequestSigner {
        var signer = self
        signer.coverage = allParameters ? .allParameters : .signatureFieldsOnly
        return signer
    }

    /// Signs `request` (see the type's description for the exact scheme).
    public func sign(_ request: HTTPRequest, credentials: SigningContext.Credentials, context: SigningContext) throws(SigningError) -> HTTPRequest {
        let ownQuery = PercentEncoding.queryItems(of: request.url).filter { $0.name != "sign" }
        let bodyHash = try request.body.sha256(url: request.url)
        let fields = Self.fields(credentials, context)
        let encodedOwn = ownQuery.map(EncodedItem.init)
        let signature = signature(
            method: request.method, path: request.url.path(percentEncoded: true)[...], ownQuery: encodedOwn, fields: fields,
            bodyHash: bodyHash, key: credentials.privateKey)

        var signed = request
        switch placement {
        case .query:
            let plainFields = [
                (name: "api_key", value: credentials.publicKey), (name: "timestamp", value: fields[1].value), (name: "nonce", value: context.nonce),
            ]
            signed.url = PercentEncoding.url(request.url, replacingQueryWith: ownQuery + plainFields + [(name: "sign", value: signature)])
        case .headers:
            signed.url = PercentEncoding.url(request.url, replacingQueryWith: ownQuery)
            signed.headers.set(name: "X-API-Key", value: credentials.publicKey)
            signed.headers.set(name: "X-Timestamp", value: fields[1].value)
            signed.headers.set(name: "X-Nonce", value: context.nonce)
            signed.headers.set(name: "X-Signature", value: signature)
        }
        return signed
    }

    /// The signed URL as text: exactly what ``sign(_:credentials:context:)`` makes with
    /// ``Placement/query`` (a test holds the two equal); `nil` with ``Placement/headers``, or a
    /// body read from a file or a stream.
    public func signedURLText(
        method: HTTPMethod, prefix: Substring, path: Substring, query: Substring, adding parameters: [(name: String, value: String)],
        body: HTTPRequest.Body,
        coveringAllParameters allParameters: Bool, credentials: SigningContext.Credentials, context: SigningContext
    ) -> String? {
        guard placement == .query else { return nil }
        let bodyHash: [UInt8]
        switch body {
        case .empty: bodyHash = HTTPRequest.Body.emptySHA256
        case .bytes(let data): bodyHash = Digest.hash(data)
        case .file, .multipart, .stream: return nil
        }
        var signer = self
        signer.coverage = allParameters ? .allParameters : .signatureFieldsOnly
        let items = PercentEncoding.queryItems(of: query) + parameters
        var encodedOwn: [EncodedItem] = []
        encodedOwn.reserveCapacity(items.count)
        for item in items where item.name != "sign" { encodedOwn.append(EncodedItem(item)) }
        let fields = Self.fields(credentials, context)
        let signature = signer.signature(method: method, path: path, ownQuery: encodedOwn, fields: fields, bodyHash: bodyHash, key: credentials.privateKey)
        // Room for everything at once: "?" or "&", name, "=", value for each item; "&sign=" and the signature.
        func length(_ items: [EncodedItem]) -> Int { items.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 2 } }
        var text = [UInt8]()
        text.reserveCapacity(prefix.utf8.count + length(encodedOwn) + length(fields) + 6 + signature.utf8.count)
        text.appendUTF8(of: prefix)
        var separator = UInt8(ascii: "?")
        func append(_ items: [EncodedItem]) {
            for item in items {
                text.append(separator)
                text.append(contentsOf: item.name.utf8)
                text.append(UInt8(ascii: "="))
                text.append(contentsOf: item.value.utf8)
                separator = UInt8(ascii: "&")
            }
        }
        append(encodedOwn)
        append(fields)
        text.append(contentsOf: "&sign=".utf8)
        text.append(contentsOf: signature.utf8)
        return String(decoding: text, as: UTF8.self)
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
        let bytes = Self.canonicalBytes(
            method: method, path: url.path(percentEncoded: true)[...], signedItems: signedItems.map(EncodedItem.init),
            bodyHash: try body.sha256(url: url))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A query parameter with its name and value percent-encoded as the scheme specifies.
    struct EncodedItem {
        var name: String
        var value: String

        init(_ item: (name: String, value: String)) {
            name = PercentEncoding.encode(item.name)
            value = PercentEncoding.encode(item.value)
        }

        init(encodedName: String, encodedValue: String) {
            name = encodedName
            value = encodedValue
        }
    }

    /// `api_key`, `timestamp` and `nonce`, encoded.
    private static func fields(_ credentials: SigningContext.Credentials, _ context: SigningContext) -> [EncodedItem] {
        [
            EncodedItem(encodedName: "api_key", encodedValue: PercentEncoding.encode(credentials.publicKey)),
            EncodedItem(encodedName: "timestamp", encodedValue: String(context.unixSeconds)),
            EncodedItem(encodedName: "nonce", encodedValue: PercentEncoding.encode(context.nonce)),
        ]
    }

    /// The lowercase hex signature over the canonical string.
    private func signature(
        method: HTTPMethod, path: Substring, ownQuery: [EncodedItem], fields: [EncodedItem], bodyHash: [UInt8], key: Secret
    ) -> String {
        let signedItems = coverage == .allParameters && !ownQuery.isEmpty ? ownQuery + fields : fields
        let canonical = Self.canonicalBytes(method: method, path: path, signedItems: signedItems, bodyHash: bodyHash)
        return Digest.hmacHex(canonical, key: key.bytes)
    }

    /// The four canonical lines as bytes.
    private static func canonicalBytes(method: HTTPMethod, path: Substring, signedItems: [EncodedItem], bodyHash: [UInt8]) -> [UInt8] {
        let sorted = signedItems.sorted { lhs, rhs in
            lhs.name != rhs.name ? lhs.name.utf8.lexicographicallyPrecedes(rhs.name.utf8) : lhs.value.utf8.lexicographicallyPrecedes(rhs.value.utf8)
        }
        var bytes = [UInt8]()
        bytes.reserveCapacity(path.utf8.count + 80 + sorted.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 2 })
        for byte in method.rawValue.utf8 {
            bytes.append(byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") ? byte - 32 : byte)
        }
        bytes.append(UInt8(ascii: "\n"))
        if path.isEmpty { bytes.append(UInt8(ascii: "/")) } else { bytes.appendUTF8(of: path) }
        bytes.append(UInt8(ascii: "\n"))
        for (index, item) in sorted.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: "&")) }
            bytes.append(contentsOf: item.name.utf8)
            bytes.append(UInt8(ascii: "="))
            bytes.append(contentsOf: item.value.utf8)
        }
        bytes.append(UInt8(ascii: "\n"))
        Digest.appendHex(of: bodyHash, to: &bytes)
        return bytes
    }
}
