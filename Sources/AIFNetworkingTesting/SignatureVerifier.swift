import AIFServices
@_spi(CrossModule) import AIFTransport
import Foundation

/// Checks signed requests the way a server does, to assert in a test that a request was signed
/// correctly — or to guard the routes of a test server.
///
/// Each scheme is verified from its description, on the request as it travels (the path and
/// query exactly as sent, the header fields, the body bytes), sharing only the HMAC, SHA-256 and
/// MD5 primitives with the signers: a signer that drifts from its scheme is caught.
///
/// ```swift
/// let verifier = SignatureVerifier(.aifHMAC, credentials: SigningContext.Credentials(publicKey: "shop-pub", privateKey: Secret("shop-secret")))
/// try verifier.verify(stub.requests[0])
/// ```
///
/// A verifier remembers the nonces it has accepted, as a server must: the same request verified
/// twice is refused the second time (``SignatureRejection/reused(nonce:)``).
public final class SignatureVerifier: Sendable {
    /// A signature scheme of the library.
    public enum Scheme: Sendable, Hashable {
        /// AIF-HMAC (`AIFHMACSigner`) in the query or in headers, covering every query
        /// parameter.
        case aifHMAC
        /// AIF-HMAC covering only its own fields (`AIFHMACSigner.Coverage.signatureFieldsOnly`).
        case aifHMACSignatureFieldsOnly
        /// The legacy MD5 scheme (`LegacyMD5Signer`).
        case legacyMD5
        /// RFC 9421 HTTP Message Signatures with `hmac-sha256` (`HTTPMessageSignatureSigner`),
        /// the public key as `keyid`.
        case messageSignature
    }

    /// The scheme checked.
    public let scheme: Scheme
    /// The public key requests must name.
    public let publicKey: String
    private let privateKey: [UInt8]
    /// How far a request's signing time may be from this machine's clock.
    public let tolerance: Duration
    private let acceptedNonces = Locked<[String: Date]>([:])

    /// Creates a verifier.
    ///
    /// - Parameters:
    ///   - scheme: The scheme to check.
    ///   - credentials: The keys requests must be signed with.
    ///   - tolerance: How far a signing time may be from now; 5 minutes by default.
    public init(_ scheme: Scheme, credentials: SigningContext.Credentials, tolerance: Duration = .seconds(300)) {
        self.scheme = scheme
        publicKey = credentials.publicKey
        privateKey = credentials.privateKey.bytes
        self.tolerance = tolerance
    }

    /// Verifies a request as the library would send it.
    ///
    /// - Parameter request: The request (from a ``StubTransport``'s ``StubTransport/requests``,
    ///   or an `APIResponse.request`).
    /// - Throws: ``SignatureRejection`` saying what does not hold.
    public func verify(_ request: HTTPRequest) throws(SignatureRejection) {
        try verify(ReceivedRequest(request))
    }

    /// Verifies a request as a server received it.
    ///
    /// - Parameter request: The request's parts as they arrived.
    /// - Throws: ``SignatureRejection`` saying what does not hold.
    public func verify(_ request: ReceivedRequest) throws(SignatureRejection) {
        let nonce: String?
        switch scheme {
        case .aifHMAC: nonce = try verifyAIFHMAC(request, coveringAllParameters: true)
        case .aifHMACSignatureFieldsOnly: nonce = try verifyAIFHMAC(request, coveringAllParameters: false)
        case .legacyMD5: nonce = try verifyLegacyMD5(request)
        case .messageSignature: nonce = try verifyMessageSignature(request)
        }
        if let nonce { try accept(nonce) }
    }

    // MARK: AIF-HMAC

    /// Checks `sign` over `METHOD\npath\ncanonical-query\nhex(sha256(body))`; returns the nonce.
    private func verifyAIFHMAC(_ request: ReceivedRequest, coveringAllParameters: Bool) throws(SignatureRejection) -> String {
        var pairs = request.queryPairs
        var signature = pairs.first { $0.name == "sign" }?.value
        pairs.removeAll { $0.name == "sign" }
        if let headerSignature = request.headers["X-Signature"] {
            signature = headerSignature
            for (header, name) in [("X-API-Key", "api_key"), ("X-Timestamp", "timestamp"), ("X-Nonce", "nonce")] {
                guard let value = request.headers[header] else { throw .missing("the \(header) header") }
                pairs.append((name, value))
            }
        }
        guard let signature else { throw .missing("signature (neither the sign query parameter nor the X-Signature header)") }
        func field(_ name: String) -> String? { pairs.first { $0.name == name }?.value }
        guard let key = field("api_key") else { throw .missing("api_key") }
        guard key == publicKey else { throw .unknownKey(key) }
        guard let timestampText = field("timestamp"), let timestamp = Double(timestampText) else { throw .missing("a timestamp in Unix seconds") }
        try checkTime(Date(timeIntervalSince1970: timestamp))
        guard let nonce = field("nonce"), nonce.count == 32 else { throw .malformed("the nonce must be 32 characters") }
        let signed = coveringAllParameters ? pairs : pairs.filter { ["api_key", "nonce", "timestamp"].contains($0.name) }
        let query = signed.map { (Self.encode($0.name), Self.encode($0.value)) }
            .sorted { $0.0 != $1.0 ? $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) : $0.1.utf8.lexicographicallyPrecedes($1.1.utf8) }
            .map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        let canonical = [request.method.uppercased(), request.path, query, Digest.hex(Digest.hash(request.body))].joined(separator: "\n")
        let expected = Digest.hex(Digest.hmac(Array(canonical.utf8), key: privateKey))
        guard Digest.constantTimeEquals(Array(expected.utf8), Array(signature.utf8)) else { throw .mismatch }
        return nonce
    }

    /// RFC 3986 percent-encoding: unreserved characters kept, everything else `%XX` upper-case.
    private static func encode(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                encoded += String(format: "%%%02X", byte)
            }
        }
        return encoded
    }

    // MARK: Legacy MD5

    /// Checks `sign` = hex MD5 of the decoded query pairs but `sign`, sorted, joined as
    /// `k=v&k=v`, followed by the private key. The scheme carries no time and no nonce.
    private func verifyLegacyMD5(_ request: ReceivedRequest) throws(SignatureRejection) -> String? {
        let pairs = request.queryPairs
        guard let signature = pairs.first(where: { $0.name == "sign" })?.value else { throw .missing("the sign query parameter") }
        let joined = pairs.filter { $0.name != "sign" }
            .sorted { $0.name != $1.name ? $0.name < $1.name : $0.value < $1.value }
            .map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        let expected = Digest.hex(Digest.hash(Array(joined.utf8) + privateKey, algorithm: .md5))
        guard Digest.constantTimeEquals(Array(expected.utf8), Array(signature.utf8)) else { throw .mismatch }
        return nil
    }

    // MARK: RFC 9421

    /// Parses `Signature-Input`, rebuilds the signature base from the received request and
    /// checks `Signature` (and `Content-Digest` when covered); returns the nonce, if any.
    private func verifyMessageSignature(_ request: ReceivedRequest) throws(SignatureRejection) -> String? {
        guard let input = request.headers["Signature-Input"] else { throw .missing("the Signature-Input header") }
        guard let signatureField = request.headers["Signature"] else { throw .missing("the Signature header") }
        guard let equals = input.firstIndex(of: "=") else { throw .malformed("Signature-Input has no label") }
        let label = String(input[..<equals])
        let parameters = String(input[input.index(after: equals)...])
        guard parameters.hasPrefix("("), let close = parameters.firstIndex(of: ")") else { throw .malformed("Signature-Input has no component list") }
        let identifiers = parameters[parameters.index(after: parameters.startIndex)..<close]
            .split(separator: " ").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        var values: [String: String] = [:]
        for item in parameters[parameters.index(after: close)...].split(separator: ";") {
            let parts = item.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        }
        guard let key = values["keyid"] else { throw .missing("keyid in Signature-Input") }
        guard key == publicKey else { throw .unknownKey(key) }
        if let algorithm = values["alg"], algorithm != "hmac-sha256" { throw .malformed("the algorithm is \(algorithm), not hmac-sha256") }
        guard let created = values["created"].flatMap(Double.init) else { throw .missing("created in Signature-Input") }
        try checkTime(Date(timeIntervalSince1970: created))
        var lines: [String] = []
        for identifier in identifiers {
            let value: String?
            switch identifier {
            case "@method": value = request.method.uppercased()
            case "@authority": value = request.authority?.lowercased()
            case "@path": value = request.path.isEmpty ? "/" : request.path
            case "@query": value = "?" + request.query
            default:
                let found = request.headers.values(for: identifier)
                value = found.isEmpty ? nil : found.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
            }
            guard let value else { throw .missing("the covered component \(identifier)") }
            lines.append("\"\(identifier)\": \(value)")
        }
        if identifiers.contains("content-digest") {
            let expected = "sha-256=:" + Data(Digest.hash(request.body)).base64EncodedString() + ":"
            guard request.headers["Content-Digest"] == expected else { throw .malformed("Content-Digest does not match the body") }
        }
        lines.append("\"@signature-params\": \(parameters)")
        let expected = "\(label)=:" + Data(Digest.hmac(Array(lines.joined(separator: "\n").utf8), key: privateKey)).base64EncodedString() + ":"
        guard Digest.constantTimeEquals(Array(expected.utf8), Array(signatureField.utf8)) else { throw .mismatch }
        return values["nonce"]
    }

    // MARK: Time and nonces

    private func checkTime(_ time: Date) throws(SignatureRejection) {
        let offset = time.timeIntervalSinceNow
        guard abs(offset) <= tolerance.timeInterval else { throw .stale(seconds: Int(offset.rounded())) }
    }

    /// Remembers a nonce; refuses one seen before. Nonces older than twice the tolerance are
    /// forgotten (their requests are refused for their time anyway).
    private func accept(_ nonce: String) throws(SignatureRejection) {
        let now = Date()
        let horizon = tolerance.timeInterval * 2
        let fresh = acceptedNonces.withLock { seen -> Bool in
            if seen.count > 50_000 { seen = seen.filter { now.timeIntervalSince($0.value) <= horizon } }
            guard seen[nonce] == nil else { return false }
            seen[nonce] = now
            return true
        }
        guard fresh else { throw .reused(nonce: nonce) }
    }
}

/// Why a ``SignatureVerifier`` refused a request. Its description never holds a key.
public enum SignatureRejection: Error, Sendable, Hashable, CustomStringConvertible {
    /// Something the scheme requires is absent.
    case missing(String)
    /// Something is present but not as the scheme says.
    case malformed(String)
    /// The request names a key the verifier does not hold.
    case unknownKey(String)
    /// The signing time is this many seconds from now (negative: in the past), past the tolerance.
    case stale(seconds: Int)
    /// The signature does not match the request.
    case mismatch
    /// The nonce was accepted before.
    case reused(nonce: String)

    /// The reason in plain words.
    public var description: String {
        switch self {
        case .missing(let what): "the request has no \(what)"
        case .malformed(let what): "the request's signature is malformed: \(what)"
        case .unknownKey(let key): "the request names the key \"\(key)\", not the one expected"
        case .stale(let seconds): "the request was signed \(abs(seconds)) s \(seconds < 0 ? "ago" : "ahead of now"), outside the tolerance"
        case .mismatch: "the signature does not match the request"
        case .reused(let nonce): "the nonce \(nonce) was used before"
        }
    }
}
