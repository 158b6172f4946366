@testable import AIFServices
import Foundation
import Testing

/// The start of a body as an error message shows it.
@Suite("Body previews: cut at a character, marked as cut, no secret shown")
struct BodyPreviewTests {
    @Test func aShortBodyIsShownWhole() {
        #expect(bodyPreview(Data(#"{"error": "bad"}"#.utf8), limit: 200, hiding: []) == #"{"error": "bad"}"#)
        #expect(bodyPreview(Data(), limit: 200, hiding: []) == "")
    }

    @Test func aLongBodyEndsAtACharacterWithAnEllipsis() {
        // Three bytes a character: a byte limit would cut one in half.
        let text = String(repeating: "错误", count: 150)
        let preview = bodyPreview(Data(text.utf8), limit: 201, hiding: [])
        #expect(preview == String(repeating: "错误", count: 100) + "错…")
        #expect(!preview.contains("\u{FFFD}"))
        let emoji = String(repeating: "👩‍👩‍👧", count: 50)
        // Eighteen bytes a character: only whole ones, however many the bytes read hold.
        let family = bodyPreview(Data(emoji.utf8), limit: 3, hiding: [])
        #expect(family.hasSuffix("…"))
        #expect((1...3).contains(family.count - 1))
        #expect(family.dropLast().allSatisfy { $0 == "👩‍👩‍👧" }, "\(family)")
    }

    @Test func secretsAreHiddenEvenWhereTheCutFalls() {
        let body = Data(#"{"message": "token abcdef123456 was refused", "echo": "Bearer abcdef123456"}"#.utf8)
        let preview = bodyPreview(body, limit: 25, hiding: ["abcdef123456"])
        #expect(preview == #"{"message": "token *** wa…"#)
        // A secret that would straddle the cut shows none of itself.
        let straddling = bodyPreview(body, limit: 22, hiding: ["abcdef123456"])
        #expect(!straddling.contains("abc"), "\(straddling)")
    }

    @Test func theRequestsSecretsAreItsCredentialsInEveryForm() {
        var request = HTTPRequest(method: .get, url: URL(string: "https://api.example.com/me?page=2")!)
        request.headers["Authorization"] = "Bearer tok-0001"
        let environment = ServiceEnvironment(
            baseURL: URL(string: "https://api.example.com")!, credentials: SigningContext.Credentials(publicKey: "pub-0002", privateKey: Secret("priv-0003")))
        let secrets = request.secretValues(in: environment)
        for secret in ["Bearer tok-0001", "tok-0001", "pub-0002", "priv-0003", Data("tok-0001".utf8).base64EncodedString()] {
            #expect(secrets.contains(secret), "\(secret)")
        }
        #expect(!secrets.contains("2"))
    }
}
