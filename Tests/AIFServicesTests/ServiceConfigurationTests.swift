@testable import TestSupport
@testable import AIFServices
import Foundation
import Testing

@Suite("Services from config files")
struct ServiceConfigurationTests {
    static let environment = [
        "SHOP_ONLINE_URL": "https://shop.test", "SHOP_OFFLINE_URL": "http://127.0.0.1:8080",
        "SHOP_PUBLIC_KEY": "pub-key", "SHOP_PRIVATE_KEY": "s3cr3t-value",
    ]

    /// The repository's own Configs/shop.json.
    static var shopFile: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "Configs/shop.json")
    }

    @Test func theShopConfigLoads() throws {
        let service = try ServiceRegistry.ConfiguredService.load(from: Self.shopFile, environment: Self.environment)
        #expect(service.name == "shop")
        #expect(service.environments[.online]?.baseURL.absoluteString == "https://shop.test")
        #expect(service.environments[.offline]?.credentials?.publicKey == "pub-key")
        #expect(service.environments[.online]?.credentials?.privateKey == Secret("s3cr3t-value"))
        #expect(service.commonHeaders()["X-Client"] == "aif-shop-sample")
        #expect(service.commonParameters()["app"] == "shop-sample")
        #expect(service.timeouts?.total == .seconds(30))
        #expect(service.signer is AIFHMACSigner)
    }

    @Test func aMissingVariableIsNamedWithFileAndKey() {
        var environment = Self.environment
        environment["SHOP_PRIVATE_KEY"] = nil
        let error = #expect(throws: ServiceRegistry.ConfigurationError.self) { try ServiceRegistry.ConfiguredService.load(from: Self.shopFile, environment: environment) }
        #expect(error?.file == Self.shopFile.path)
        #expect(error?.key?.hasSuffix(".privateKey") == true)
        #expect(error?.description.contains("SHOP_PRIVATE_KEY") == true)
    }

    @Test(arguments: [
        (#"{"name": "x", "environments": {"online": {"baseURL": "https://a.test", "publicKey": "p", "privateKey": "literal"}}}"#, "environments.online.privateKey"),
        (#"{"name": "x"}"#, "environments"),
        (#"{"name": "x", "environments": {}}"#, "environments"),
        (#"{"environments": {"online": {"baseURL": "https://a.test"}}}"#, "name"),
        (#"{"name": "x", "environments": {"online": {"baseURL": "ftp://a.test"}}}"#, "environments.online.baseURL"),
        (#"{"name": "x", "environments": {"online": {"baseURL": "https://a.test"}}, "signing": {"scheme": "rot13"}}"#, "signing.scheme"),
        (#"{"name": "x", "environments": {"staging": {"baseURL": "https://a.test"}}}"#, "defaultEnvironment"),
        (#"{"name": "x", "enviroments": {}}"#, "enviroments"),
        (#"{"name": "x", "environments": {"online": {"baseURL": "https://a.test", "privatekey": "${K}"}}}"#, "environments.online.privatekey"),
        (#"{"name": 5, "environments": {"online": {"baseURL": "https://a.test"}}}"#, "name"),
        (#"{"name": "x", "environments": {"online": {"baseURL": "https://a.test", "signsAllParameters": 1}}}"#, "environments.online.signsAllParameters"),
        (#"{"name": "x", "environments": {"online": {"baseURL": "https://a.test"}}, "decoding": {"keys": "camel"}}"#, "decoding.keys"),
        (#"{"name": "x", "environments": {"online": {"baseURL": "https://a.test"}}, "decoding": {"dates": "rfc822"}}"#, "decoding.dates"),
        (#"{"name": "x", "environments": {"online": {"baseURL": "https://a.test"}}, "decoding": {"dates": "formatted"}}"#, "decoding.dates"),
        (#"{"name": "x", "environments": {"online": {"baseURL": "https://a.test"}}, "decoding": {"dates": "iso8601", "dateFormat": "yyyy"}}"#, "decoding.dateFormat"),
        (#"{"name": "x", "environments": {"online": {"baseURL": "https://a.test"}}, "decoding": {"key": "snakeCase"}}"#, "decoding.key"),
        (#"{"name": "x", "environments": {"online": {"baseURL": "https://a.test"}}, "applicationErrors": {"successCodes": []}}"#, "applicationErrors.successCodes"),
        (#"{"name": "x", "environments": {"online": {"baseURL": "https://a.test"}}, "applicationErrors": {"successCodes": [0, 1.5]}}"#, "applicationErrors.successCodes[1]"),
        (#"{"name": "x", "environments": {"online": {"baseURL": "https://a.test"}}, "applicationErrors": {"codeField": 3}}"#, "applicationErrors.codeField"),
        // Numbers out of range: refused, never a trap converting them.
        (#"{"name":"s","timeoutSeconds":9223372036854775,"environments":{"online":{"baseURL":"http://h"}}}"#, "timeoutSeconds"),
        (#"{"name":"s","timeoutSeconds":1e300,"environments":{"online":{"baseURL":"http://h"}}}"#, "timeoutSeconds"),
        (#"{"name":"s","timeoutSeconds":604801,"environments":{"online":{"baseURL":"http://h"}}}"#, "timeoutSeconds"),
        (#"{"name":"s","timeoutSeconds":-1,"environments":{"online":{"baseURL":"http://h"}}}"#, "timeoutSeconds"),
        (#"{"name":"s","timeoutSeconds":0,"environments":{"online":{"baseURL":"http://h"}}}"#, "timeoutSeconds"),
        // A credential is an environment variable, one of a kind, never in clear.
        (#"{"name":"s","environments":{"online":{"baseURL":"http://h","authorization":{"bearer":"sk_live_123"}}}}"#, "environments.online.authorization.bearer"),
        (#"{"name":"s","environments":{"online":{"baseURL":"http://h","authorization":{"basic":{"user":"u","password":"pw"}}}}}"#, "environments.online.authorization.basic.password"),
        (#"{"name":"s","environments":{"online":{"baseURL":"http://h","authorization":{"parameter":{"name":"api_key","value":"k${K}"}}}}}"#, "environments.online.authorization.parameter.value"),
        (#"{"name":"s","environments":{"online":{"baseURL":"http://h","authorization":{}}}}"#, "environments.online.authorization"),
        (#"{"name":"s","environments":{"online":{"baseURL":"http://h","authorization":{"bearer":"${A}","basic":{"user":"${B}"}}}}}"#, "environments.online.authorization"),
        (#"{"name":"s","environments":{"online":{"baseURL":"http://h","authorization":{"token":"${A}"}}}}"#, "environments.online.authorization.token"),
        (#"{"name":"s","retry":{"retryAdviceHeader":"Should Retry"},"environments":{"online":{"baseURL":"http://h"}}}"#, "retry.retryAdviceHeader"),
        (#"{"name":"s","retry":{"generateIdempotencyKeys":"yes"},"environments":{"online":{"baseURL":"http://h"}}}"#, "retry.generateIdempotencyKeys"),
    ])
    func malformedDefinitionsNameTheKey(json: String, key: String) {
        let error = #expect(throws: ServiceRegistry.ConfigurationError.self) {
            try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "test.json", environment: [:])
        }
        #expect(error?.key == key, "\(error.map { "\($0)" } ?? "no error")")
        #expect(error?.description.hasPrefix("test.json: ") == true)
    }

    /// The file is decoded into typed sections: a value of the wrong type says what it must
    /// be, an unknown key lists the keys its section knows, and `${NAME}` works in any string.
    @Test func errorsSayWhatTheValueMustBe() throws {
        func problem(_ json: String) -> String? {
            let error = #expect(throws: ServiceRegistry.ConfigurationError.self) { try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "t.json", environment: [:]) }
            return error.map { "\($0.key ?? "-") \($0.problem)" }
        }
        let online = #""environments": {"online": {"baseURL": "https://a.test"}}"#
        #expect(problem(#"{"name": 5, \#(online)}"#) == "name must be a string")
        #expect(problem(#"{"name": "x", "environments": {"online": {"baseURL": "https://a.test", "signsAllParameters": 1}}}"#)
            == "environments.online.signsAllParameters must be true or false")
        #expect(problem(#"{"name": "x", "cacheVersion": 1.5, \#(online)}"#) == "cacheVersion must be a whole number in range, not 1.5")
        #expect(problem(#"{"name": "x", "cacheVersion": 1e30, \#(online)}"#) == "cacheVersion must be a whole number in range, not 1e30")
        #expect(problem(#"{"name": "x", "timeoutSeconds": "30", \#(online)}"#) == "timeoutSeconds must be a number")
        #expect(problem(#"{"name": "x", "retry": {"statusCodes": 503}, \#(online)}"#) == "retry.statusCodes must be an array")
        #expect(problem(#"{"name": "x", "signing": [], \#(online)}"#) == "signing must be an object")
        #expect(problem(#"{"name": "x", "commonHeaders": {"X-A": 1}, \#(online)}"#) == "commonHeaders.X-A must be a string")
        #expect(problem(#"{"name": null, \#(online)}"#) == "name must be a string, not null")
        #expect(problem(#"{"name": "x", "signing": {"schema": "md5"}, \#(online)}"#) == "signing.schema is not a known key; expected one of: placement, scheme")
        #expect(problem(#"{"name": "x", "enviroments": {}}"#)?.hasPrefix("enviroments is not a known key; expected one of: applicationErrors, arrayEncoding, ") == true)
        #expect(problem(#"[1]"#) == "- must be an object")

        let json = #"{"name": "x", "signing": {"scheme": "${SCHEME}"}, "decoding": {"keys": "${KEYS}"}, \#(online)}"#
        let service = try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "t.json", environment: ["SCHEME": "md5", "KEYS": "snakeCase"])
        #expect(service.signer is LegacyMD5Signer)
        #expect((service.decoder as? FastJSONDecoder)?.keyDecodingStrategy == .convertFromSnakeCase)
    }

    /// Idempotency keys made for each load and the server's word on retries, from `retry`.
    @Test func theRetryKeysForKeysAndAdvice() throws {
        let json = #"{"name": "pay", "retry": {"generateIdempotencyKeys": true, "retryAdviceHeader": "Stripe-Should-Retry"}, "environments": {"online": {"baseURL": "https://a.test"}}}"#
        let policy = try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "t.json", environment: [:]).retryPolicy
        #expect(policy.generatesIdempotencyKeys)
        #expect(policy.keyHeader == "Idempotency-Key", "the usual header when none is named")
        #expect(policy.retryAdviceHeader == "Stripe-Should-Retry")
        #expect(policy.description.contains("or a request with Idempotency-Key (one made for each POST or PATCH load)"))
        #expect(policy.description.contains("or as Stripe-Should-Retry says"))
        #expect(RetryPolicy.standard.keyHeader == nil)
        let key = try #require(policy.newIdempotencyKey(for: .post, given: [:]))
        #expect(key.header == "Idempotency-Key" && UUID(uuidString: key.key) != nil && key.key == key.key.lowercased())
        #expect(policy.newIdempotencyKey(for: .post, given: [:])?.key != key.key)
        #expect(policy.newIdempotencyKey(for: .post, given: ["idempotency-key": "mine"]) == nil, "a key given wins")
        #expect(policy.newIdempotencyKey(for: .get, given: [:]) == nil)
        #expect(policy.newIdempotencyKey(for: .put, given: [:]) == nil)
        #expect(policy.newIdempotencyKey(for: .patch, given: [:]) != nil)
        #expect(RetryPolicy.standard.newIdempotencyKey(for: .post, given: [:]) == nil)
    }

    /// Circuit breaking from `circuitBreaker`: the service's, an environment's own, and each
    /// value refused with what it must be.
    @Test func theCircuitBreakerKeyForTheServiceAndAnEnvironment() throws {
        let json = #"""
            {"name": "backend",
             "circuitBreaker": {"failuresToOpen": 4, "coolDownSeconds": 2.5, "probes": 2, "counted": ["timeout", "serverError"], "serverErrorStatuses": [503]},
             "environments": {"online": {"baseURL": "https://a.test"}, "staging": {"baseURL": "https://b.test", "circuitBreaker": true}}}
            """#
        let service = try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "t.json", environment: [:])
        #expect(service.circuitBreaker == CircuitBreaker.Policy(failuresToOpen: 4, coolDown: .milliseconds(2500), probes: 2, counted: [.timeout, .serverError], serverErrorStatuses: [503]))
        #expect(service.environments["staging"]?.circuitBreaker == CircuitBreaker.Policy())
        #expect(service.environments[.online]?.circuitBreaker == nil)
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(service)
        #expect(try registry.resolve("backend").circuitBreaker?.policy.failuresToOpen == 4)
        registry.setEnvironment("staging", for: "backend")
        #expect(try registry.resolve("backend").circuitBreaker?.policy == CircuitBreaker.Policy())
        #expect(registry.circuitBreaker(of: "backend", in: "staging")?.state == .closed)

        let plain = try ServiceRegistry.ConfiguredService.parse(Data(#"{"name": "x", "environments": {"online": {"baseURL": "https://a.test"}}}"#.utf8), file: "t.json", environment: [:])
        #expect(plain.circuitBreaker == nil)

        func problem(_ breaker: String) -> String? {
            let json = #"{"name": "x", "circuitBreaker": \#(breaker), "environments": {"online": {"baseURL": "https://a.test"}}}"#
            let error = #expect(throws: ServiceRegistry.ConfigurationError.self) { try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "t.json", environment: [:]) }
            return error.map { "\($0.key ?? "-") \($0.problem)" }
        }
        #expect(problem(#"{"failuresToOpen": 0}"#) == "circuitBreaker.failuresToOpen must be a whole number from 1 to 1000")
        #expect(problem(#"{"coolDownSeconds": 0}"#) == "circuitBreaker.coolDownSeconds must be a number of seconds above 0, at most 3600")
        #expect(problem(#"{"probes": 0}"#) == "circuitBreaker.probes must be a whole number from 1 to 100")
        #expect(problem(#"{"counted": ["5xx"]}"#) == "circuitBreaker.counted[0] must be one of: timeout, connection, serverError")
        #expect(problem(#"{"serverErrorStatuses": [404]}"#) == "circuitBreaker.serverErrorStatuses[0] must be a server error status (500–599)")
        #expect(problem(#"{"failures": 3}"#) == "circuitBreaker.failures is not a known key; expected one of: coolDownSeconds, counted, failuresToOpen, probes, serverErrorStatuses")
    }

    /// An environment's own credential, from a variable; a variable not set fails that
    /// environment's loads only.
    @Test func anEnvironmentsCredentialComesFromAVariable() throws {
        let json = #"""
            {"name": "pay", "environments": {
              "test": {"baseURL": "https://pay.test", "authorization": {"bearer": "${TEST_KEY}"}},
              "live": {"baseURL": "https://pay.test", "authorization": {"basic": {"user": "${LIVE_KEY}"}}},
              "keyed": {"baseURL": "https://pay.test", "authorization": {"parameter": {"name": "api_key", "value": "${TEST_KEY}"}}}},
             "defaultEnvironment": "test"}
            """#
        let service = try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "pay.json", environment: ["TEST_KEY": "sk_test_1"])
        let test = try #require(service.environments["test"]?.authenticator)
        #expect(test.credential?.token == "sk_test_1")
        #expect(test.placement == .bearer)
        #expect(service.environments["keyed"]?.authenticator?.placement == .parameter("api_key"))
        let live = try #require(service.environments["live"]?.authenticator)
        #expect(live.credential == nil, "LIVE_KEY is not set: nothing to send")
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(service)
        #expect(try registry.resolve("pay").authenticator === test)
        registry.setEnvironment("live", for: "pay")
        #expect(try registry.resolve("pay").authenticator === live)
        let session = Authenticator.bearer("shared")
        registry.setAuthenticator(session, for: ["pay"])
        #expect(try registry.resolve("pay").authenticator === session, "one set on the registry comes first")
    }

    /// A date pattern in the file: `dateFormat`, alone or with `"dates": "formatted"`.
    @Test func aDatePatternIsRead() throws {
        for decoding in [#"{"dateFormat": "yyyy-MM-dd HH:mm"}"#, #"{"dates": "formatted", "dateFormat": "yyyy-MM-dd HH:mm"}"#] {
            let json = #"{"name": "x", "decoding": \#(decoding), "environments": {"online": {"baseURL": "https://a.test"}}}"#
            let service = try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "t.json", environment: [:])
            #expect((service.decoder as? FastJSONDecoder)?.dateDecodingStrategy == .formatted("yyyy-MM-dd HH:mm"))
        }
        let refused = #expect(throws: ServiceRegistry.ConfigurationError.self) {
            try ServiceRegistry.ConfiguredService.parse(Data(#"{"name": "x", "decoding": {"dates": "formatted"}, "environments": {"online": {"baseURL": "https://a.test"}}}"#.utf8), file: "t.json", environment: [:])
        }
        #expect(refused?.description == #"t.json: decoding.dates "formatted" needs the pattern in decoding.dateFormat ("yyyy-MM-dd HH:mm:ss")"#)
    }

    @Test func aTimeoutUpToAWeekIsTaken() throws {
        let json = #"{"name":"s","timeoutSeconds":604800,"environments":{"online":{"baseURL":"http://h"}}}"#
        let service = try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "test.json", environment: [:])
        #expect(service.timeouts?.total == .seconds(604_800))
        let fractional = try ServiceRegistry.ConfiguredService.parse(Data(json.replacing("604800", with: "0.25").utf8), file: "test.json", environment: [:])
        #expect(fractional.timeouts?.total == .milliseconds(250))
    }

    @Test func invalidJSONNamesTheFile() {
        let error = #expect(throws: ServiceRegistry.ConfigurationError.self) {
            try ServiceRegistry.ConfiguredService.parse(Data("{\n  \"name\": \"x\",\n  \"environments\" {}\n}".utf8), file: "broken.json", environment: [:])
        }
        #expect(error?.description == "broken.json is not valid JSON: expected ':' but found '{' (at line 3, column 18)")
        // Columns count characters, not bytes.
        let accented = #expect(throws: ServiceRegistry.ConfigurationError.self) {
            try ServiceRegistry.ConfiguredService.parse(Data("{\"name\": \"café\" \"x\"}".utf8), file: "broken.json", environment: [:])
        }
        #expect(accented?.description.hasSuffix("(at line 1, column 17)") == true, "\(String(describing: accented))")
        let missing = #expect(throws: ServiceRegistry.ConfigurationError.self) {
            try ServiceRegistry.ConfiguredService.load(from: URL(fileURLWithPath: "/nonexistent/shop.json"), environment: [:])
        }
        #expect(missing?.description.hasPrefix("/nonexistent/shop.json cannot be read") == true)
    }

    @Test func aFolderOfConfigsRegistersEveryService() throws {
        let registry = ServiceRegistry(processEnvironment: [:])
        let names = try registry.registerServices(inDirectory: Self.shopFile.deletingLastPathComponent(), environment: Self.environment)
        #expect(names == ["shop"])
        registry.setEnvironment(.offline)
        let request = try registry.resolve("shop").makeRequest(path: "goods/{id}", method: .get, parameters: ["id": 3])
        #expect(request.url.absoluteString.hasPrefix("http://127.0.0.1:8080/v1/goods/3?app=shop-sample&api_key=pub-key&timestamp="))
        #expect(!request.curlCommand().contains("s3cr3t-value"))
    }

    @Test func applicationErrorsAndDecodingComeFromTheFile() throws {
        let json = #"{"name": "x", "environments": {"online": {"baseURL": "https://a.test"}}, "decoding": {"keys": "snakeCase"}, "applicationErrors": {"codeField": "status", "messageField": "msg", "successCodes": ["ok", 200]}}"#
        let service = try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "test.json", environment: [:])
        func response(_ body: String, status: Int = 200) -> HTTPResponse {
            HTTPResponse(statusCode: status, headers: HTTPHeaders(), body: Data(body.utf8), httpVersion: .http1_1, url: URL(string: "https://a.test")!, metrics: HTTPResponse.Metrics())
        }
        #expect(service.applicationErrors?.veto(response(#"{"status": "ok"}"#)) == nil)
        #expect(service.applicationErrors?.veto(response(#"{"status": 200}"#)) == nil)
        #expect(service.applicationErrors?.veto(response(#"{"other": 1}"#)) == nil)
        #expect(service.applicationErrors?.veto(response("[1, 2]")) == nil)
        #expect(service.applicationErrors?.veto(response(#"{"status": 7, "msg": "out of stock"}"#)) == ServiceVeto(code: "7", message: "out of stock"))
        #expect(service.applicationErrors?.veto(response(#"{"status": 7}"#, status: 500)) == nil, "a failed status fails on its own")
        struct Item: Decodable { var goodsId: Int }
        #expect(try service.decoder?.decode(Item.self, from: Data(#"{"goods_id": 3}"#.utf8)).goodsId == 3)
    }
}
