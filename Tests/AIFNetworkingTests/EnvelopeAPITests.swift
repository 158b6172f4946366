@testable import AIFNetworking
@testable import AIFServices
import AIFNetworkingTesting
import Foundation
import Logging
import Testing

/// APIs that answer 200 to everything and say in the body whether it worked (Slack's
/// `{"ok": false, "error": "channel_not_found"}`): the rule that reads them, checked when it is
/// registered; the refusal typed like an error body; warnings beside a success; a failed status
/// that keeps its own error whatever the service's veto says. Over a stub transport: no socket.
@Suite("Envelope APIs: a success flag, a typed refusal, warnings, rules checked when registered")
struct EnvelopeAPITests {
    /// What Slack answers beside `ok`.
    struct SlackRefusal: Decodable, Sendable, Equatable {
        var ok: Bool
        var error: String
        var needed: String?
    }

    struct Posted: Decodable, Sendable, Equatable {
        var ts: String
    }

    /// A Slack-shaped service whose rule is given by the test.
    struct Chat: Service {
        let name: ServiceName = "chat"
        var rule: ServiceVeto.Rule?
        var vetoesErrors = false
        var environments: [ServiceEnvironment.Name: ServiceEnvironment] { [.online: ServiceEnvironment(baseURL: URL(string: "https://chat.test/api")!)] }
        var signer: (any RequestSigner)? { nil }
        var applicationErrors: ServiceVeto.Rule? { rule }
        var errorBody: ErrorBodyRule { ErrorBodyRule(type: SlackRefusal.self) }
        /// A GraphQL-style veto of its own: any body with `errors` is refused.
        func veto(_ response: HTTPResponse) -> ServiceVeto? {
            guard vetoesErrors, String(decoding: response.body, as: UTF8.self).contains("\"errors\"") else { return nil }
            return ServiceVeto(code: "GRAPHQL_ERROR", message: "the body has errors")
        }
    }

    private let stub = StubTransport()

    private func manager<Content: Decodable & Sendable>(
        _ service: Chat, _ path: String = "chat.postMessage", as type: Content.Type = Posted.self
    ) -> APIManager<Content> {
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(service)
        let proxy = APIProxy(transport: stub, logger: Logger(label: "chat", factory: { _ in SwiftLogNoOpLogHandler() }), recorder: nil)
        return APIManager(Endpoint<Content>(service: "chat", path: path, method: .post), proxy: proxy, registry: registry)
    }

    // MARK: The rule

    private static func veto(_ body: String, _ rule: ServiceVeto.Rule) -> ServiceVeto? {
        rule.veto(HTTPResponse(statusCode: 200, body: Data(body.utf8), url: URL(string: "https://chat.test")!))
    }

    @Test func aSuccessFlagReadsTrueAndFalse() {
        let slack = ServiceVeto.Rule.successFlag("ok", errorField: "error")
        #expect(Self.veto(#"{"ok": true, "ts": "1.2"}"#, slack) == nil)
        #expect(Self.veto(#"{"ok": "true"}"#, slack) == nil)
        #expect(Self.veto(#"{"ts": "1.2"}"#, slack) == nil, "a body without the flag says nothing")
        let refused = Self.veto(#"{"ok": false, "error": "channel_not_found"}"#, slack)
        #expect(refused == ServiceVeto(code: "channel_not_found", message: "channel_not_found"))
        #expect(refused?.description == "channel_not_found")
        #expect(Self.veto(#"{"ok": "false", "error": "x"}"#, slack)?.code == "x")
        #expect(Self.veto(#"{"ok": false}"#, slack) == ServiceVeto(code: "false", message: "false"))
        let described = ServiceVeto.Rule.successFlag("success", errorField: "code", messageField: "detail")
        #expect(Self.veto(#"{"success": false, "code": 17, "detail": "over quota"}"#, described) == ServiceVeto(code: "17", message: "over quota"))
    }

    /// The trial's defect: `successCodes: ["true"]` read the JSON `true` as `1`, so every
    /// success was refused. A boolean reads `true` or `1`.
    @Test func aBooleanCodeMatchesTrueAsWellAsOne() {
        for codes: Set<String> in [["true"], ["1"]] {
            let rule = ServiceVeto.Rule(codeField: "ok", messageField: "error", successCodes: codes)
            #expect(Self.veto(#"{"ok": true}"#, rule) == nil, "\(codes)")
            #expect(Self.veto(#"{"ok": false, "error": "invalid_auth"}"#, rule) == ServiceVeto(code: "false", message: "invalid_auth"), "\(codes)")
        }
        let zero = ServiceVeto.Rule(codeField: "ok", successCodes: ["false"])
        #expect(Self.veto(#"{"ok": false}"#, zero) == nil)
    }

    @Test func aRuleThatCouldRefuseEverythingHasAProblem() {
        #expect(ServiceVeto.Rule().problem == nil)
        #expect(ServiceVeto.Rule.successFlag().problem == nil)
        #expect(ServiceVeto.Rule(successCodes: []).problem == "no success code is given, so every answer would be refused")
        #expect(ServiceVeto.Rule(successCodes: ["0", " 0"]).problem?.contains("\" 0\" is blank or has spaces") == true)
        #expect(ServiceVeto.Rule(codeField: "").problem?.contains("has no name") == true)
        #expect(ServiceVeto.Rule.successFlag(errorField: "").problem == "the error field has an empty name")
        #expect(ServiceVeto.Rule(warningsField: "response_metadata..warnings").problem?.contains("dotted path") == true)
    }

    @Test func aRegisteredServiceWithAnUnsoundRuleFailsEveryLoadSaying() async throws {
        let manager = manager(Chat(rule: ServiceVeto.Rule(codeField: "ok", successCodes: [])))
        let error = await #expect(throws: APIError.self) { try await manager.load(["text": "hi"]) }
        #expect(error?.kind == .configuration)
        #expect(
            error?.message.contains("service \"chat\" cannot be used: its applicationErrors rule is unsound: no success code is given") == true,
            "\(error?.message ?? "")")
        #expect(stub.requests.isEmpty)
        // A factory's service is checked as it is made.
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register("chat") { Chat(rule: ServiceVeto.Rule(successCodes: [])) }
        #expect(throws: ServiceError.self) { try registry.resolve("chat") }
        #expect(throws: ServiceError.self) { try registry.resolve("chat") }
    }

    @Test func aConfigFileSaysTheRuleEitherWayAndIsCheckedAsItIsRead() throws {
        func parse(_ rule: String) throws(ServiceRegistry.ConfigurationError) -> ServiceRegistry.ConfiguredService {
            let json = #"{"name": "chat", "environments": {"online": {"baseURL": "https://chat.test"}}, "applicationErrors": \#(rule)}"#
            return try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "/tmp/aif-tests/chat.json", environment: [:])
        }
        let flagged = try parse(#"{"successFlag": "ok", "warningsField": "response_metadata.warnings"}"#).applicationErrors
        #expect(flagged == .successFlag("ok", errorField: "error", warningsField: "response_metadata.warnings"))
        #expect(try parse(#"{"codeField": "ok", "successCodes": [true]}"#).applicationErrors?.success == .codes(["true"]))
        let refused: [(String, String, String)] = [
            (#"{"successFlag": "ok", "successCodes": [0]}"#, "applicationErrors.successCodes", "does not go with successFlag"),
            (#"{"successFlag": "ok", "codeField": "code"}"#, "applicationErrors.codeField", "does not go with successFlag"),
            (#"{"errorField": "error"}"#, "applicationErrors.errorField", "goes with successFlag"),
            (#"{"successFlag": ""}"#, "applicationErrors.successFlag", "has no name"),
            (#"{"successCodes": [" 0"]}"#, "applicationErrors", "blank or has spaces"),
            (#"{"successFlag": "ok", "warningsField": "a..b"}"#, "applicationErrors.successFlag", "dotted path"),
        ]
        for (rule, key, problem) in refused {
            let error = #expect(throws: ServiceRegistry.ConfigurationError.self) { try parse(rule) }
            #expect(error?.key == key, "\(rule): \(String(describing: error))")
            #expect(error?.description.contains(problem) == true, "\(rule): \(String(describing: error))")
        }
    }

    @Test func warningsAreReadFromAStringOrStrings() {
        let rule = ServiceVeto.Rule.successFlag(warningsField: "response_metadata.warnings")
        func warnings(_ body: String) -> [String] { rule.warnings(in: try! JSONTape(parsing: Array(body.utf8))) }
        #expect(warnings(#"{"ok": true, "response_metadata": {"warnings": ["missing_charset", 3, "superfluous_charset"]}}"#) == ["missing_charset", "superfluous_charset"])
        #expect(warnings(#"{"ok": true, "response_metadata": {"warnings": "missing_charset"}}"#) == ["missing_charset"])
        #expect(warnings(#"{"ok": true, "response_metadata": []}"#) == [])
        #expect(warnings(#"{"ok": true}"#) == [])
        #expect(warnings(#"[]"#) == [])
    }

    // MARK: Through a manager

    /// A refused 200: the error is the service's veto, its message the server's code alone,
    /// its body typed as the service's error body says.
    @Test func aRefused200IsTypedLikeAnErrorBody() async throws {
        stub.stub(.post, "chat.postMessage", with: .json(#"{"ok": false, "error": "missing_scope", "needed": "chat:write"}"#))
        let error = await #expect(throws: APIError.self) {
            try await manager(Chat(rule: .successFlag())).load(["channel": "C1", "text": "hi"])
        }
        #expect(error?.kind == .serviceVeto)
        #expect(error?.message == "the service refused the response: missing_scope")
        #expect(error?.serverCode == "missing_scope")
        #expect(error?.serverMessage == "missing_scope")
        #expect(error?.errorBody(as: SlackRefusal.self) == SlackRefusal(ok: false, error: "missing_scope", needed: "chat:write"))
        #expect(error?.statusCode == 200)
    }

    @Test func aSuccessCarriesItsWarnings() async throws {
        stub.stub(.post, "chat.postMessage", with: .json(#"{"ok": true, "ts": "1.5", "response_metadata": {"warnings": ["missing_charset"]}}"#), times: 1)
        let response = try await manager(Chat(rule: .successFlag(warningsField: "response_metadata.warnings"))).load(["text": "hi"])
        #expect(response.content == Posted(ts: "1.5"))
        #expect(response.warnings == ["missing_charset"])
        stub.stub(.post, "chat.postMessage", with: .json(#"{"ok": true, "ts": "1.6"}"#))
        #expect(try await manager(Chat(rule: .successFlag(warningsField: "response_metadata.warnings"))).load(["text": "hi"]).warnings == [])
    }

    /// A service's veto judges answers whose status succeeded: a 405 keeps its status error and
    /// its error body, whatever the veto says of its body.
    @Test func aFailedStatusKeepsItsOwnErrorWhateverTheVeto() async throws {
        stub.stub(.post, "graphql", with: .json(#"{"ok": false, "error": "method_not_allowed", "errors": [{"message": "use POST"}]}"#, status: 405), times: 1)
        var chat = Chat(rule: .successFlag())
        chat.vetoesErrors = true
        let error = await #expect(throws: APIError.self) { try await manager(chat, "graphql").load() }
        #expect(error?.kind == .httpStatus)
        #expect(error?.statusCode == 405)
        #expect(error?.errorBody(as: SlackRefusal.self)?.error == "method_not_allowed")
        #expect(error?.message.contains("GRAPHQL_ERROR") == false, "\(error?.message ?? "")")
        // On a 200 the veto is the answer's verdict.
        stub.stub(.post, "graphql", with: .json(#"{"ok": true, "ts": "1", "errors": [{"message": "partial"}]}"#))
        let vetoed = await #expect(throws: APIError.self) { try await manager(chat, "graphql").load() }
        #expect(vetoed?.kind == .serviceVeto)
        #expect(vetoed?.serverCode == "GRAPHQL_ERROR")
    }
}
