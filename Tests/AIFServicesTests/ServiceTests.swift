@testable import TestSupport
@testable import AIFServices
@_spi(CrossModule) @testable import AIFTransport
import AIFNetworkingTesting
import Foundation
import Testing

private struct ShopService: Service {
    var name: ServiceName = "shop"
    var token = "token-123"
    var environments: [ServiceEnvironment.Name: ServiceEnvironment] = [
        .online: ServiceEnvironment(
            baseURL: URL(string: "https://shop.test/")!, apiVersion: "/v1/",
            credentials: SigningContext.Credentials(publicKey: "pub-key", privateKey: Secret("s3cr3t"))),
        .offline: ServiceEnvironment(baseURL: URL(string: "http://127.0.0.1:9000/api")!, apiVersion: ""),
        "staging": ServiceEnvironment(baseURL: URL(string: "https://staging.shop.test")!, apiVersion: "v2"),
    ]
    func commonHeaders() -> HTTPHeaders { ["Authorization": "Bearer \(token)", "X-Client": "common"] }
    func commonParameters() -> Parameters { ["device": "d-1", "page_size": 20] }
    func extraHeaders(forPath path: String) -> HTTPHeaders {
        path.hasPrefix("orders") ? ["X-Client": "orders", "X-Idempotent": "yes"] : HTTPHeaders()
    }
}

@Suite("Services: registry and request generation")
struct ServiceTests {
    static let context = SigningContext(time: Date(timeIntervalSince1970: 1_700_000_000), nonce: "0123456789abcdef0123456789abcdef")

    @Test func unknownNamesAreNamedWithTheKnownOnes() {
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(ShopService())
        registry.register("weather") { ShopService(name: "weather") }
        let error = #expect(throws: ServiceError.self) { try registry.resolve("payments") }
        #expect(error?.description == "no service is registered as \"payments\"; known services: shop, weather")
    }

    @Test func factoriesRunOnceOnFirstUse() throws {
        let registry = ServiceRegistry(processEnvironment: [:])
        let calls = Locked(0)
        registry.register("lazy") {
            calls.withLock { $0 += 1 }
            return ShopService(name: "lazy")
        }
        #expect(calls.withLock { $0 } == 0)
        _ = try registry.resolve("lazy")
        _ = try registry.resolve("lazy")
        #expect(calls.withLock { $0 } == 1)
    }

    @Test func environmentPrecedence() throws {
        let registry = ServiceRegistry(processEnvironment: ["AIF_ENVIRONMENT": "offline"])
        registry.register(ShopService())
        #expect(try registry.resolve("shop").environmentName == .offline, "from AIF_ENVIRONMENT")
        registry.setEnvironment("staging")
        #expect(try registry.resolve("shop").environmentName == "staging", "global beats the variable")
        let inFlight = try registry.resolve("shop")
        registry.setEnvironment(.online, for: "shop")
        #expect(try registry.resolve("shop").environmentName == .online, "per service beats global")
        #expect(inFlight.environment.baseURL.host == "staging.shop.test", "a snapshot keeps its environment")
        registry.setEnvironment("qa", for: "shop")
        let error = #expect(throws: ServiceError.self) { try registry.resolve("shop") }
        #expect(error?.description == "service \"shop\" has no environment \"qa\"; it has: offline, online, staging")
        #expect(ServiceRegistry(processEnvironment: [:]).activeEnvironment(of: ShopService()) == .online)
    }

    @Test func urlsJoinWithExactlyOneSlashAndFillPlaceholders() throws {
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(ShopService())
        registry.setEnvironment("staging")
        let request = try registry.resolve("shop").makeRequest(path: "/goods/{id}/reviews/", method: .get,
            parameters: ["id": "42 & more", "sort": "new"], signingContext: Self.context)
        #expect(request.url.absoluteString == "https://staging.shop.test/v2/goods/42%20%26%20more/reviews?device=d-1&page_size=20&sort=new")
        let missing = #expect(throws: ServiceError.self) {
            try registry.resolve("shop").makeRequest(path: "goods/{id}", method: .get)
        }
        #expect(missing?.description.contains("{id}") == true)
        let absolute = try registry.resolve("shop").makeRequest(path: "https://cdn.shop.test/banner", method: .get, parameters: [:])
        #expect(absolute.url.absoluteString.hasPrefix("https://cdn.shop.test/banner?"))
    }

    /// Base, version and method name join with one slash between parts whatever slashes each
    /// carries; the method name's query follows the path; an empty part adds nothing.
    @Test func urlJoiningTrimsEveryPartsSlashes() throws {
        struct Plain: Service {
            var name: ServiceName = "plain"
            var base: String
            var version: String
            var environments: [ServiceEnvironment.Name: ServiceEnvironment] {
                [.online: ServiceEnvironment(baseURL: URL(string: base)!, apiVersion: version)]
            }
        }
        let cases: [(base: String, version: String, path: String, expected: String)] = [
            ("https://shop.test", "", "goods", "https://shop.test/goods"),
            ("https://shop.test///", "//v1//", "//goods//", "https://shop.test/v1/goods"),
            ("http://127.0.0.1:9000/api/", "", "/goods/?page=2&x=%2F", "http://127.0.0.1:9000/api/goods?page=2&x=%2F"),
            ("http://[::1]:8080/a/b", "v2", "?only=query", "http://[::1]:8080/a/b/v2?only=query"),
            ("https://shop.test", "/", "/", "https://shop.test"),
            ("https://shop.test/base/", "v1", "goods/{id}/reviews", "https://shop.test/base/v1/goods/7/reviews"),
            ("https://shop.test", "v1", "goods?", "https://shop.test/v1/goods"),
            ("https://shop.test", "v1", "caf\u{E9}/\u{2615}", "https://shop.test/v1/caf%C3%A9/%E2%98%95"),
        ]
        for item in cases {
            let registry = ServiceRegistry(processEnvironment: [:])
            registry.register(Plain(base: item.base, version: item.version))
            let request = try registry.resolve("plain").makeRequest(path: item.path, method: .get, parameters: item.path.contains("{id}") ? ["id": 7] : [:])
            #expect(request.url.absoluteString == item.expected, "\(item)")
        }
    }

    @Test func queryEncodingOfNestedParameters() {
        let pairs = RequestGenerator.flatten(["tags": ["a", "b"], "filter": ["min": 10, "max": nil], "q": "x"], arrays: .brackets)
        #expect(pairs.map { "\($0.name)=\($0.value)" } == ["filter[min]=10", "q=x", "tags[]=a", "tags[]=b"])
        let repeated = RequestGenerator.flatten(["tags": ["a", "b"]], arrays: .repeatedKeys)
        #expect(repeated.map { "\($0.name)=\($0.value)" } == ["tags=a", "tags=b"])
    }

    @Test func bodiesHeadersAndSigning() throws {
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(ShopService())
        let resolved = try registry.resolve("shop")
        let json = try resolved.makeRequest(path: "orders", method: .post,
            parameters: ["goods_id": 42, "page_size": 1, "lines": [["sku": "a", "count": 2]]],
            headers: ["X-Client": "call"], signingContext: Self.context)
        guard case .bytes(let data) = json.body else { Issue.record("expected a body"); return }
        #expect(String(decoding: data, as: UTF8.self) == #"{"device":"d-1","goods_id":42,"lines":[{"count":2,"sku":"a"}],"page_size":1}"#)
        #expect(json.headers["Content-Type"] == "application/json")
        #expect(json.headers["X-Client"] == "call", "the call's header beats the method's and the service's")
        #expect(json.headers["X-Idempotent"] == "yes")
        #expect(json.headers["Authorization"] == "Bearer token-123")
        // Signed with AIF-HMAC over the final URL and body (the signature itself is checked
        // against independent vectors in SigningTests).
        let query = PercentEncoding.queryItems(of: json.url)
        #expect(query.map(\.name) == ["api_key", "timestamp", "nonce", "sign"])
        #expect(query[3].value.count == 64)

        let form = try resolved.makeRequest(path: "orders", method: .put, parameters: ["note": "a b&c"], bodyEncoding: .form, signingContext: Self.context)
        guard case .bytes(let formData) = form.body else { Issue.record("expected a body"); return }
        #expect(String(decoding: formData, as: UTF8.self) == "device=d-1&note=a%20b%26c&page_size=20")
        #expect(form.headers["Content-Type"] == "application/x-www-form-urlencoded")
    }

    /// The generator signs the default scheme on the URL's text, without building and parsing
    /// URLs in between; a signer it cannot see through takes the general path (URL, then
    /// `sign`). Both must produce the same request, byte for byte, whatever the URL holds.
    @Test(arguments: [true, false])
    func signingOnTheURLTextMatchesSigningTheParsedURL(signsAllParameters: Bool) throws {
        struct Opaque: RequestSigner {
            // Signs through the plain path (it offers no text fast path, and keeps the default
            // `covering(allParameters:)`), so it is made with the environment's coverage; the
            // bare AIFHMACSigner takes the generator's fast path. Both must give the same URL.
            let inner: AIFHMACSigner
            func sign(_ request: HTTPRequest, credentials: SigningContext.Credentials, context: SigningContext) throws(SigningError) -> HTTPRequest {
                try inner.sign(request, credentials: credentials, context: context)
            }
        }
        struct Signed: Service {
            var name: ServiceName = "signed"
            var base: String
            var opaque: Bool
            var signsAll: Bool
            var environments: [ServiceEnvironment.Name: ServiceEnvironment] {
                [.online: ServiceEnvironment(
                    baseURL: URL(string: base)!, apiVersion: "v1",
                    credentials: SigningContext.Credentials(publicKey: "pub key/+", privateKey: Secret("s3cr3t")), signsAllParameters: signsAll)]
            }
            var signer: (any RequestSigner)? {
                opaque ? Opaque(inner: AIFHMACSigner(coverage: signsAll ? .allParameters : .signatureFieldsOnly)) : AIFHMACSigner()
            }
            func commonParameters() -> Parameters { ["device": "d 1"] }
        }
        let cases: [(base: String, path: String, method: HTTPMethod, parameters: Parameters)] = [
            ("https://shop.test", "goods", .get, [:]),
            ("https://shop.test/", "/goods/{id}/", .get, ["id": "42 & more", "sort": "new"]),
            ("http://127.0.0.1:9000/api/", "goods?fixed=1&sign=old&x=%2F", .get, ["q": "café ☕", "tags": ["a", "b"], "empty": ""]),
            ("http://[::1]:8080", "goods", .delete, ["filter": ["min": 10, "max": nil]]),
            ("https://user:pw@shop.test/base", "orders", .post, ["goods_id": 1, "note": "a&b"]),
            ("https://shop.test", "orders/{id}", .put, ["id": 7, "note": "x"]),
            ("https://shop.test", "goods/a b", .get, ["q": "1"]),  // a space: parsed, not taken as text
            ("https://shop.test", "goods;v=1/@x:y/!$'()*+,=", .head, ["q": "~._-"]),
            ("https://shop.test", "goods#fragment", .get, ["q": "1"]),
            ("https://shop.test", "goods/%zz", .get, [:]),
            ("https://shop.test", "https://cdn.shop.test/banner?x=1", .get, ["q": "1"]),
        ]
        for item in cases {
            var results: [String] = []
            var failures: [String] = []
            for opaque in [false, true] {
                let registry = ServiceRegistry(processEnvironment: [:])
                registry.register(Signed(base: item.base, opaque: opaque, signsAll: signsAllParameters))
                do {
                    let request = try registry.resolve("signed").makeRequest(path: item.path, method: item.method,
                        parameters: item.parameters, signingContext: Self.context)
                    var body = ""
                    if case .bytes(let data) = request.body { body = String(decoding: data, as: UTF8.self) }
                    results.append("\(request.method.rawValue) \(request.url.absoluteString) \(body)")
                    // libcurl is given the text (unparsed on the generator's own path): it must
                    // be what the URL, parsed from it when read, says.
                    #expect(request.location.text == request.url.absoluteString)
                } catch {
                    failures.append("\(error)")
                }
            }
            #expect(failures.isEmpty || failures.count == 2, "\(item.path): \(failures)")
            if results.count == 2 {
                #expect(results[0] == results[1], "\(item.base) \(item.path)")
                #expect(results[0].contains("&sign="), "\(item.path)")
            }
        }
    }

    @Test func curlRenderingHidesCredentials() throws {
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(ShopService())
        let request = try registry.resolve("shop").makeRequest(path: "orders", method: .post, parameters: ["goods_id": 1], signingContext: Self.context)
        let command = request.curlCommand()
        #expect(command.hasPrefix("curl \\\n  -X POST"))
        #expect(command.contains("-H 'Authorization: ***'"))
        #expect(!command.contains("token-123"))
        #expect(!command.contains("s3cr3t"))
        #expect(request.curlCommand(revealingSecrets: true).contains("Bearer token-123"))
    }

    @Test func curlRenderingRefersToTheVariablesHoldingSecrets() {
        let url = URL(string: "https://api.test/v1/me")!
        var request = HTTPRequest(url: url, headers: ["Authorization": "Bearer tok-$`\"-1234567", "Cookie": "a=session-abcdef; b=opaque-0123456789abcdef"])
        let environment = ["API_TOKEN": "tok-$`\"-1234567", "SESSION": "session-abcdef", "SHORT": "1234567", "not a name": "Bearer tok"]
        let command = request.curlCommand(referringTo: environment)
        // Shell-quoted, the value's own characters escaped where it is not the reference.
        #expect(command.contains(#"-H "Authorization: Bearer ${API_TOKEN}""#), "\(command)")
        // A value that is partly in no variable (and looks like a token) stays hidden.
        #expect(command.contains("-H 'Cookie: ***'"), "\(command)")
        request.headers = ["Authorization": "Basic a\"$b-12345678"]
        #expect(request.curlCommand(referringTo: ["PART": "12345678"]).contains(#"-H "Authorization: Basic a\"\$b-${PART}""#))
        #expect(request.curlCommand(referringTo: ["SHORT": "1234567"]).contains("-H 'Authorization: ***'"))
    }

    @Test func generatedRequestsTravelOverTheRealTransport() async throws {
        let server = try await TestServers.shared().plain
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(ShopService(environments: [.online: ServiceEnvironment(baseURL: server.baseURL())]))
        let request = try registry.resolve("shop").makeRequest(path: "echo", method: .post, parameters: ["goods_id": 7])
        let transport = makeTransport()
        defer { transport.shutdown() }
        let response = try await transport.send(request)
        #expect(response.headers["X-Request-Content-Type"] == "application/json")
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"device":"d-1","goods_id":7,"page_size":20}"#)
    }
}
