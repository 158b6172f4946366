@testable import AIFNetworking
import Foundation
import Hummingbird
import HTTPTypes
import NIOCore

/// A server-side RFC 9421 (`hmac-sha256`) verifier written from the RFC, working on the
/// request as it arrived: it parses `Signature-Input`, rebuilds the signature base from the
/// received method, authority, path, query and header fields, and checks `Content-Digest`
/// against the received body.
enum MessageSignatureVerifier {
    static let keyID = "rfc-key"
    static let secret: [UInt8] = Array("rfc9421-shared-secret".utf8)
    private static let seenNonces = Locked(Set<String>())

    static func addRoutes(to router: Router<ConnectionContext>) {
        let methods: [HTTPRequest.Method] = [.get, .post, .put, .delete, .patch]
        for method in methods {
            router.on("verify/rfc9421/**", method: method) { request, _ -> Response in
                let body = Array(buffer: try await request.body.collect(upTo: 16 << 20))
                if let problem = verify(request, body: body) {
                    return Response(status: .unauthorized, headers: [HTTPField.Name("X-Reason")!: problem])
                }
                return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "verified")))
            }
        }
    }

    /// `nil` when the signature holds; otherwise why not.
    static func verify(_ request: Request, body: [UInt8]) -> String? {
        guard let input = request.headers[HTTPField.Name("Signature-Input")!],
            let signatureHeader = request.headers[HTTPField.Name("Signature")!]
        else { return "unsigned" }
        guard let equals = input.firstIndex(of: "=") else { return "malformed Signature-Input" }
        let label = String(input[..<equals])
        let parameters = String(input[input.index(after: equals)...])
        guard parameters.hasPrefix("("), let close = parameters.firstIndex(of: ")") else { return "malformed component list" }
        let identifiers = parameters[parameters.index(after: parameters.startIndex)..<close]
            .split(separator: " ").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        let signatureParameters = parameters[parameters.index(after: close)...].split(separator: ";").reduce(into: [String: String]()) { result, item in
            let parts = item.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { result[String(parts[0])] = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        }
        guard signatureParameters["keyid"] == keyID else { return "unknown keyid" }
        guard signatureParameters["alg"] == "hmac-sha256" else { return "unexpected alg" }
        guard let created = signatureParameters["created"].flatMap(Double.init), abs(created - Date().timeIntervalSince1970) < 300 else {
            return "stale created"
        }
        var lines: [String] = []
        for identifier in identifiers {
            let value: String?
            switch identifier {
            case "@method": value = request.method.rawValue
            case "@authority": value = request.head.authority?.lowercased()
            case "@path": value = request.uri.path
            case "@query": value = "?" + (request.uri.query ?? "")
            default:
                guard let name = HTTPField.Name(identifier) else { return "bad component \(identifier)" }
                let values = request.headers[values: name]
                value = values.isEmpty ? nil : values.joined(separator: ", ")
            }
            guard let value else { return "component \(identifier) absent" }
            lines.append("\"\(identifier)\": \(value)")
        }
        if identifiers.contains("content-digest") {
            let expected = "sha-256=:" + Data(Digest.hash(body)).base64EncodedString() + ":"
            guard request.headers[HTTPField.Name("Content-Digest")!] == expected else { return "content digest mismatch" }
        }
        lines.append("\"@signature-params\": \(parameters)")
        let expected = "\(label)=:" + Data(Digest.hmac(Array(lines.joined(separator: "\n").utf8), key: secret)).base64EncodedString() + ":"
        guard Digest.constantTimeEquals(Array(expected.utf8), Array(signatureHeader.utf8)) else { return "signature mismatch" }
        guard let nonce = signatureParameters["nonce"] else { return "no nonce" }
        return seenNonces.withLock { $0.insert(nonce).inserted } ? nil : "nonce reused"
    }
}
