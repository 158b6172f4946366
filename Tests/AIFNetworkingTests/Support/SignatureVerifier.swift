@testable import AIFNetworking
import Foundation
import Hummingbird
import HTTPTypes
import NIOCore

/// A server-side AIF-HMAC verifier written from the scheme's description, working on the
/// request exactly as it arrived (raw path and query), not on anything the client computed.
/// It shares only the HMAC and SHA-256 primitives with the client.
enum AIFHMACVerifier {
    static let publicKey = "verify-pub"
    static let privateKey = "verify-secret"
    private static let seenNonces = Locked(Set<String>())

    /// Adds `ANY /verify/aif/**`: 200 `verified` or 401 with the reason.
    static func addRoutes(to router: Router<ConnectionContext>) {
        let methods: [HTTPRequest.Method] = [.get, .post, .put, .delete, .patch, .head]
        for method in methods {
            router.on("verify/aif/**", method: method) { request, _ -> Response in
                let body = try await request.body.collect(upTo: 16 << 20)
                let result = verify(method: request.method.rawValue, rawPath: request.uri.path, rawQuery: request.uri.query ?? "",
                                    headers: request.headers, body: Array(buffer: body))
                switch result {
                case .success:
                    return Response(status: .ok, headers: [HTTPField.Name("X-Verified")!: "yes"], body: .init(byteBuffer: ByteBuffer(string: "verified")))
                case .failure(let reason):
                    return Response(status: .unauthorized, headers: [HTTPField.Name("X-Reason")!: reason.message], body: .init(byteBuffer: ByteBuffer(string: reason.message)))
                }
            }
        }
    }

    struct Rejection: Error { let message: String }

    static func verify(method: String, rawPath: String, rawQuery: String, headers: HTTPFields, body: [UInt8]) -> Result<Void, Rejection> {
        // Every query pair, decoded.
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
        guard let timestampText = field("timestamp"), let timestamp = Double(timestampText),
            abs(timestamp - Date().timeIntervalSince1970) <= 300
        else { return .failure(Rejection(message: "stale or missing timestamp")) }
        guard let nonce = field("nonce"), nonce.count == 32 else { return .failure(Rejection(message: "bad nonce")) }

        func encode(_ text: String) -> String {
            text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")) ?? text
        }
        let query = signed.map { (encode($0.0), encode($0.1)) }
            .sorted { ($0.0.utf8.lexicographicallyPrecedes($1.0.utf8)) || ($0.0 == $1.0 && $0.1.utf8.lexicographicallyPrecedes($1.1.utf8)) }
            .map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        let canonical = [method.uppercased(), rawPath, query, Digest.hex(Digest.hash(body))].joined(separator: "\n")
        let expected = Digest.hex(Digest.hmac(Array(canonical.utf8), key: Array(privateKey.utf8)))
        guard Digest.constantTimeEquals(Array(expected.utf8), Array(signature.utf8)) else {
            return .failure(Rejection(message: "signature mismatch"))
        }
        let fresh = seenNonces.withLock { $0.insert(nonce).inserted }
        guard fresh else { return .failure(Rejection(message: "nonce reused")) }
        return .success(())
    }
}
