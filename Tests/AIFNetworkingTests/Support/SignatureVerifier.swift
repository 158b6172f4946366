import AIFNetworking
import DemoServer
import Foundation
import Hummingbird
import HTTPTypes
import NIOCore

/// The test server's AIF-HMAC routes, checked by the demo server's verifier
/// (``AIFHMACVerification``, written from the scheme's description, working on the request
/// exactly as it arrived and sharing only the HMAC and SHA-256 primitives with the client).
enum AIFHMACVerifier {
    static let publicKey = "verify-pub"
    static let privateKey = "verify-secret"
    private static let verification = AIFHMACVerification(publicKey: publicKey, privateKey: privateKey)

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

    static func verify(method: String, rawPath: String, rawQuery: String, headers: HTTPFields, body: [UInt8]) -> Result<Void, AIFHMACVerification.Rejection> {
        verification.verify(method: method, rawPath: rawPath, rawQuery: rawQuery, headers: headers, body: body)
    }
}
