import AIFNetworking
import AIFNetworkingTesting
@testable import TestSupport
import Foundation
import Hummingbird
import HTTPTypes
import NIOCore

/// The test server's signature routes, checked by the test kit's ``SignatureVerifier`` (written
/// from each scheme's description, working on the request exactly as it arrived and sharing
/// only the HMAC and SHA-256 primitives with the signers): `ANY /verify/aif/**` for AIF-HMAC,
/// `ANY /verify/rfc9421/**` for RFC 9421 — 200 `verified` with `X-Verified: yes`, or 401 with
/// the reason in `X-Reason`.
enum SignatureRoutes {
    static let aifCredentials = SigningContext.Credentials(publicKey: "verify-pub", privateKey: Secret("verify-secret"))
    static let messageCredentials = SigningContext.Credentials(publicKey: "rfc-key", privateKey: Secret("rfc9421-shared-secret"))
    private static let aif = SignatureVerifier(.aifHMAC, credentials: aifCredentials)
    private static let message = SignatureVerifier(.messageSignature, credentials: messageCredentials)

    static func addRoutes(to router: Router<ConnectionContext>) {
        add("verify/aif/**", aif, methods: [.get, .post, .put, .delete, .patch, .head], to: router)
        add("verify/rfc9421/**", message, methods: [.get, .post, .put, .delete, .patch], to: router)
    }

    private static func add(_ path: RouterPath, _ verifier: SignatureVerifier, methods: [HTTPTypes.HTTPRequest.Method], to router: Router<ConnectionContext>) {
        for method in methods {
            router.on(path, method: method) { (request: Request, _: ConnectionContext) -> Response in
                let body = try await request.body.collect(upTo: 16 << 20)
                do throws(SignatureRejection) {
                    try verifier.verify(ReceivedRequest(request, body: body))
                    return Response(status: .ok, headers: [HTTPField.Name("X-Verified")!: "yes"], body: .init(byteBuffer: ByteBuffer(string: "verified")))
                } catch {
                    return Response(status: .unauthorized, headers: [HTTPField.Name("X-Reason")!: error.description], body: .init(byteBuffer: ByteBuffer(string: error.description)))
                }
            }
        }
    }
}

/// The transport tests' servers with the signature routes added, started once per test process.
enum SignatureServers {
    private static let started = Task<TestServers.Servers, any Error> {
        try await TestServers.start(adding: { SignatureRoutes.addRoutes(to: $0) })
    }

    /// The servers, started on first use.
    static func shared() async throws -> TestServers.Servers {
        try await started.value
    }
}
