@testable import AIFServices
@testable import AIFTransport
import Foundation
import Testing

/// The request generator puts a load's credential in the request it makes, where the
/// authenticator says, over everything else, before signing.
@Suite("Credentials in the requests the generator makes")
struct CredentialPlacementTests {
    private struct Shop: Service {
        var name: ServiceName = "shop"
        var signs = false
        var environments: [ServiceEnvironment.Name: ServiceEnvironment] {
            [.online: ServiceEnvironment(
                baseURL: URL(string: "https://shop.test")!, apiVersion: "v1",
                credentials: signs ? SigningContext.Credentials(publicKey: "pub", privateKey: Secret("s3cr3t")) : nil, signsAllParameters: true)]
        }
        var signer: (any RequestSigner)? { signs ? AIFHMACSigner(coverage: .allParameters) : nil }
        func commonHeaders() -> HTTPHeaders { ["Authorization": "Basic service-wide"] }
        func commonParameters() -> Parameters { ["access_token": "from-the-service"] }
    }

    private static let context = SigningContext(time: Date(timeIntervalSince1970: 1_795_341_600), nonce: "n-1")
    private static let token = Authenticator.Credential(token: "t-42")

    private func request(
        _ method: HTTPMethod, _ parameters: Parameters = [:], headers: HTTPHeaders = [:], credential: Authenticator.PlacedCredential?, signs: Bool = false
    ) throws -> HTTPRequest {
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(Shop(signs: signs))
        return try registry.resolve("shop").makeRequest(path: "goods", method: method, parameters: parameters, headers: headers, credential: credential,
            signingContext: Self.context)
    }

    @Test func aBearerCredentialGoesOverTheServicesAndTheCallsAuthorization() throws {
        let request = try request(.get, headers: ["Authorization": "Bearer the-calls"], credential: .init(Self.token))
        #expect(request.headers["Authorization"] == "Bearer t-42")
        #expect(request.headers.values(for: "Authorization").count == 1)
        let raw = try self.request(.get, credential: .init(Self.token, as: .authorization(scheme: "")))
        #expect(raw.headers["Authorization"] == "t-42")
        let token = try self.request(.get, credential: .init(Self.token, as: .authorization(scheme: "Token")))
        #expect(token.headers["Authorization"] == "Token t-42")
        // Without a credential, the service's header stands.
        #expect(try self.request(.get, credential: nil).headers["Authorization"] == "Basic service-wide")
    }

    @Test func aCredentialParameterGoesWhereTheMethodPutsParameters() throws {
        let get = try request(.get, ["access_token": "the-calls", "q": "cup"], credential: .init(Self.token, as: .parameter("access_token")))
        #expect(get.url.absoluteString == "https://shop.test/v1/goods?access_token=t-42&q=cup")
        let post = try request(.post, ["q": "cup"], credential: .init(Self.token, as: .parameter("access_token")))
        guard case .bytes(let body) = post.body else { Issue.record("no body: \(post.body)"); return }
        #expect(String(decoding: body, as: UTF8.self) == #"{"access_token":"t-42","q":"cup"}"#)
        // Hidden wherever the request is shown.
        #expect(!get.curlCommand(revealingSecrets: false).contains("t-42"))
    }

    @Test func theSignatureCoversTheCredential() throws {
        let placed = Authenticator.PlacedCredential(Self.token, as: .parameter("access_token"))
        let signed = try request(.get, ["q": "cup"], credential: placed, signs: true)
        let other = try request(.get, ["q": "cup"], credential: .init(Authenticator.Credential(token: "t-43"), as: placed.placement), signs: true)
        let query = URLComponents(url: signed.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        #expect(query.first { $0.name == "access_token" }?.value == "t-42")
        let signature = query.first { $0.name == "sign" }?.value
        let otherSignature = URLComponents(url: other.url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "sign" }?.value
        #expect(signature != nil)
        #expect(signature != otherSignature)
    }
}
