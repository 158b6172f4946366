@testable import AIFServices
import Foundation
import Testing

/// A multipart form above the transport: how the signing schemes treat it, and how the curl
/// rendering shows its parts.
@Suite struct MultipartSigningTests {
    @Test func signingSchemesThatHashTheBodyRefuseAForm() throws {
        var form = HTTPRequest.MultipartForm()
        form.append("a", "1")
        let request = HTTPRequest(method: .post, url: URL(string: "https://api.example.com/v1/upload")!, body: .multipart(form))
        let credentials = SigningContext.Credentials(publicKey: "key", privateKey: Secret("secret-key-material"))
        for signer in [AIFHMACSigner() as any RequestSigner, HTTPMessageSignatureSigner()] {
            let error = #expect(throws: SigningError.self) {
                try signer.sign(request, credentials: credentials, context: .now())
            }
            #expect(error?.description.contains("multipart/form-data body cannot be signed over its bytes") == true)
            #expect(error?.description.contains("secret-key-material") == false)
        }
        // The MD5 scheme signs the query alone.
        let signed = try LegacyMD5Signer().sign(request, credentials: credentials, context: .now())
        #expect(PercentEncoding.queryItems(of: signed.url).contains { $0.name == "sign" })
        #expect(signed.body.byteCount == nil)
    }

    @Test func curlRendersEachPartAsAFormArgument() {
        HTTPRequest.registerSecretParameter("password")   // as a service with a password parameter does
        var form = HTTPRequest.MultipartForm()
        form.append("caption", "Hi there")
        form.append("password", "hunter2")
        form.appendFile("photo", at: "/tmp/my \"pic\".jpg")
        form.appendFile("raw", data: Data([0xFF, 0x00]), filename: "b.bin")
        let command = HTTPRequest(method: .post, url: URL(string: "https://example.com/upload")!, body: .multipart(form)).curlCommand()
        #expect(command.contains("-F 'caption=Hi there'"))
        #expect(command.contains("-F 'password=***'"))
        #expect(command.contains(#"-F 'photo=@"/tmp/my \"pic\".jpg";filename="my \"pic\".jpg";type=image/jpeg'"#))
        #expect(command.contains(#"-F 'raw=<2 bytes>;filename="b.bin";type=application/octet-stream'"#))
    }
}
