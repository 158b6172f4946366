import AIFNetworking
import Foundation
import HTTPTypes
import NIOConcurrencyHelpers

/// The server side of AIF-HMAC: checks a request exactly as it arrived (raw path and query,
/// body bytes), written from the scheme's description and sharing only the HMAC and SHA-256
/// primitives with the client.
///
/// Checks, in order: a signature is present (query `sign`, or the `X-Signature` header with
/// `X-API-Key`, `X-Timestamp`, `X-Nonce`); the key is known; the timestamp is within
/// ``tolerance`` of the server's clock; the nonce is 32 characters; the HMAC-SHA256 of
/// `METHOD\npath\nsorted-encoded-query\nhex(sha256(body))` matches; the nonce is new.
public final class AIFHMACVerification: Sendable {
    /// Why a request was refused.
    public struct Rejection: Error, Sendable, CustomStringConvertible {
        /// The reason, safe to send back (it never contains the key).
        public let message: String
        /// The reason.
        public var description: String { message }
    }

    /// The public key requests must carry.
    public let publicKey: String
    private let privateKey: [UInt8]
    /// How far a request's timestamp may be from the server's clock, in seconds.
    public let tolerance: Double
    private let seenNonces = NIOLockedValueBox([String: Double]())

    /// Creates a verifier for one key pair.
    ///
    /// - Parameters:
    ///   - publicKey: The public key.
    ///   - privateKey: The private key.
    ///   - tolerance: The clock tolerance; 300 s by default.
    public init(publicKey: String, privateKey: String, tolerance: Double = 300) {
        self.publicKey = publicKey
        self.privateKey = Array(privateKey.utf8)
        self.tolerance = tolerance
    }

    /// Verifies a request.
    ///
    /// - Parameters:
    ///   - method: The method, as sent.
    ///   - rawPath: The path, percent-encoded as sent.
    ///   - rawQuery: The query, percent-encoded as sent, without `?`.
    ///   - headers: The headers.
    ///   - body: The body bytes.
    /// - Returns: Success, or the reason for refusing.
    public func verify(method: String, rawPath: String, rawQuery: String, headers: HTTPFields, body: [UInt8]) -> Result<Void, Rejection> {
        var pairs: [(String, String)] = []
        for piece in rawQuery.split(separator: "&") where !piece.isEmpty {
            let parts = piece.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
            pairs.append((name, value))
        }
        var signature = pairs.first { $0.0 == "sign" }?.1
        var signed = pairs.filter { $0.0 != "sign" }
        if let headerSignature = headers[HTTPField.Name("X-Signature")!] {
            signature = headerSignature
            for (header, name) in [("X-API-Key", "api_key"), ("X-Timestamp", "timestamp"), ("X-Nonce", "nonce")] {
                guard let value = headers[HTTPField.Name(header)!] else { return .failure(Rejection(message: "missing \(header)")) }
                signed.append((name, value))
            }
        }
        guard let signature else { return .failure(Rejection(message: "no signature")) }
        func field(_ name: String) -> String? { signed.first { $0.0 == name }?.1 }
        guard field("api_key") == publicKey else { return .failure(Rejection(message: "unknown api_key")) }
        let now = Date().timeIntervalSince1970
        guard let timestampText = field("timestamp"), let timestamp = Double(timestampText), abs(timestamp - now) <= tolerance else {
            return .failure(Rejection(message: "stale or missing timestamp"))
        }
        guard let nonce = field("nonce"), nonce.count == 32 else { return .failure(Rejection(message: "bad nonce")) }

        func encode(_ text: String) -> String {
            text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")) ?? text
        }
        let query = signed.map { (encode($0.0), encode($0.1)) }
            .sorted { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) || ($0.0 == $1.0 && $0.1.utf8.lexicographicallyPrecedes($1.1.utf8)) }
            .map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        let canonical = [method.uppercased(), rawPath, query, Digest.hex(Digest.hash(body))].joined(separator: "\n")
        let expected = Digest.hex(Digest.hmac(Array(canonical.utf8), key: privateKey))
        guard Digest.constantTimeEquals(Array(expected.utf8), Array(signature.utf8)) else {
            return .failure(Rejection(message: "signature mismatch"))
        }
        let fresh = seenNonces.withLockedValue { seen -> Bool in
            if seen.count > 50_000 { seen = seen.filter { now - $0.value <= tolerance * 2 } }
            guard seen[nonce] == nil else { return false }
            seen[nonce] = now
            return true
        }
        guard fresh else { return .failure(Rejection(message: "nonce reused")) }
        return .success(())
    }
}
