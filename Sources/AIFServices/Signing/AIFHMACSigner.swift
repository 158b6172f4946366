public import Foundation
@_spi(CrossModule) import AIFTransport

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
        let fields = Fields(credentials, context)
        let canonical = Self.canonicalBytes(
            method: request.method, path: request.url.path(percentEncoded: true)[...], own: coverage == .allParameters ? ownQuery.map(EncodedItem.init) : [],
            fields: fields, bodyHash: bodyHash)
        let signature = Digest.hmacHex(canonical, key: credentials.privateKey.bytes)

        var signed = request
        switch placement {
        case .query:
            let plainFields = [
                (name: "api_key", value: credentials.publicKey), (name: "timestamp", value: fields.timestamp.value), (name: "nonce", value: context.nonce),
            ]
            signed.url = PercentEncoding.url(request.url, replacingQueryWith: ownQuery + plainFields + [(name: "sign", value: signature)])
        case .headers:
            signed.url = PercentEncoding.url(request.url, replacingQueryWith: ownQuery)
            signed.headers.set(name: "X-API-Key", value: credentials.publicKey)
            signed.headers.set(name: "X-Timestamp", value: fields.timestamp.value)
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
        // The URL's own query items, then the parameters, encoded; a `sign` among them is left out.
        var own: [EncodedItem] = []
        if !query.isEmpty || !parameters.isEmpty {
            let fromQuery = PercentEncoding.queryItems(of: query)
            own.reserveCapacity(fromQuery.count + parameters.count)
            for item in fromQuery where item.name != "sign" { own.append(EncodedItem(item)) }
            for item in parameters where item.name != "sign" { own.append(EncodedItem(item)) }
        }
        let fields = Fields(credentials, context)
        let canonical = Self.canonicalBytes(method: method, path: path, own: allParameters ? own : [], fields: fields, bodyHash: bodyHash)
        // Written straight into the string's storage, its length known: the prefix, each item
        // with its "?" or "&" and "=", then "&sign=" and the signature's 64 digits.
        var prefix = prefix
        let length = prefix.utf8.count + own.reduce(0) { $0 + $1.length } + fields.length + 6 + 64
        return String(unsafeUninitializedCapacity: length) { storage in
            guard let start = storage.baseAddress else { return 0 }
            var cursor = ByteCursor(start)
            prefix.withUTF8 { cursor.write($0) }
            var separator = UInt8(ascii: "?")
            for item in own {
                cursor.write(item, after: separator)
                separator = UInt8(ascii: "&")
            }
            cursor.write(fields.apiKey, after: separator)
            cursor.write(fields.timestamp, after: UInt8(ascii: "&"))
            cursor.write(fields.nonce, after: UInt8(ascii: "&"))
            ("&sign=" as StaticString).withUTF8Buffer { cursor.write($0) }
            assert(cursor.position + 64 - start == length, "the signed URL's length was counted wrong")
            Digest.writeHMACSHA256Hex(of: canonical, key: credentials.privateKey.bytes, to: cursor.position)
            return length
        }
    }

    /// Writes bytes at a pointer with room for them, moving on past each.
    private struct ByteCursor {
        var position: UnsafeMutablePointer<UInt8>

        init(_ start: UnsafeMutablePointer<UInt8>) { position = start }

        mutating func write(_ byte: UInt8) {
            position.pointee = byte
            position += 1
        }

        mutating func write(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard let base = bytes.baseAddress else { return }
            position.update(from: base, count: bytes.count)
            position += bytes.count
        }

        mutating func write(_ text: String) {
            var text = text
            text.withUTF8 { write($0) }
        }

        /// `separator`, then `name=value`.
        mutating func write(_ item: EncodedItem, after separator: UInt8) {
            write(separator)
            write(item.name)
            write(UInt8(ascii: "="))
            write(item.value)
        }
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
            method: method, path: url.path(percentEncoded: true)[...], own: signedItems.map(EncodedItem.init), fields: nil,
            bodyHash: try body.sha256(url: url))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A query parameter with its name and value percent-encoded as the scheme specifies: ASCII,
    /// so that comparing the strings compares their bytes.
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

        /// The bytes of `name=value`, and a separator.
        var length: Int { name.utf8.count + value.utf8.count + 2 }

        /// The scheme's order: by name, then by value, byte by byte.
        func precedes(_ other: EncodedItem) -> Bool {
            name != other.name ? name < other.name : value < other.value
        }
    }

    /// `api_key`, `timestamp` and `nonce`, encoded: in the scheme's order as they stand.
    struct Fields {
        let apiKey: EncodedItem
        let timestamp: EncodedItem
        let nonce: EncodedItem

        init(_ credentials: SigningContext.Credentials, _ context: SigningContext) {
            apiKey = EncodedItem(encodedName: "api_key", encodedValue: PercentEncoding.encode(credentials.publicKey))
            timestamp = EncodedItem(encodedName: "timestamp", encodedValue: String(context.unixSeconds))
            nonce = EncodedItem(encodedName: "nonce", encodedValue: PercentEncoding.encode(context.nonce))
        }

        /// The bytes of the three as query items.
        var length: Int { apiKey.length + timestamp.length + nonce.length }
    }

    /// The four canonical lines as bytes: the signed items are `own` (sorted here) and, when
    /// given, the signature's `fields`, merged into their places.
    private static func canonicalBytes(method: HTTPMethod, path: Substring, own: [EncodedItem], fields: Fields?, bodyHash: [UInt8]) -> [UInt8] {
        var sorted = own
        if sorted.count > 1 { sorted.sort { $0.precedes($1) } }
        var bytes = [UInt8]()
        bytes.reserveCapacity(
            method.rawValue.utf8.count + path.utf8.count + 4 + sorted.reduce(0) { $0 + $1.length } + (fields?.length ?? 0) + bodyHash.count * 2)
        for byte in method.rawValue.utf8 {
            bytes.append(byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") ? byte - 32 : byte)
        }
        bytes.append(UInt8(ascii: "\n"))
        if path.isEmpty { bytes.append(UInt8(ascii: "/")) } else { bytes.appendUTF8(of: path) }
        bytes.append(UInt8(ascii: "\n"))
        var separator: UInt8?
        func write(_ item: EncodedItem) {
            if let separator { bytes.append(separator) }
            append(item.name, to: &bytes)
            bytes.append(UInt8(ascii: "="))
            append(item.value, to: &bytes)
            separator = UInt8(ascii: "&")
        }
        var next = 0
        func merge(_ field: EncodedItem) {
            while next < sorted.count && sorted[next].precedes(field) {
                write(sorted[next])
                next += 1
            }
            write(field)
        }
        if let fields {
            merge(fields.apiKey)
            merge(fields.nonce)
            merge(fields.timestamp)
        }
        while next < sorted.count {
            write(sorted[next])
            next += 1
        }
        bytes.append(UInt8(ascii: "\n"))
        Digest.appendHex(of: bodyHash, to: &bytes)
        return bytes
    }

    /// Appends the UTF-8 bytes of `text` (from its storage at once).
    static func append(_ text: String, to bytes: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }
}
