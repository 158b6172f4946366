@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import AIFNetworkingTesting
import DemoServer
import Foundation
import Logging
import Testing
@_spi(CrossModule) import AIFTransport

/// A service with one environment, for recording synthetic responses.
private struct RecordedService: Service {
    var name: ServiceName
    var environments: [ServiceEnvironment.Name: ServiceEnvironment]

    static func resolved(_ name: ServiceName, _ environment: ServiceEnvironment) throws -> ServiceRegistry.ResolvedService {
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(RecordedService(name: name, environments: [.online: environment]))
        return try registry.resolve(name)
    }
}

/// Recording responses of the demo shop as fixtures, then replaying them through the shop's
/// mock environment.
@Suite("Record and replay: responses written as fixtures, secrets left out")
struct FixtureRecordingTests {
    /// A folder holding `shop.json` (the repository's, its mock environment without latency or
    /// failures) and the recorder writing into `fixtures/`, where that environment reads.
    struct Recording {
        let folder: URL
        let recorder: FixtureTransport.Recorder

        init(secretFields: Set<String> = []) throws {
            folder = try makeTestFolder("record")
            recorder = FixtureTransport.Recorder(directory: folder.appending(path: "fixtures"), secretFields: secretFields)
        }

        /// A registry whose `shop` is the mock environment, answering from what was recorded.
        func replayRegistry() throws -> ServiceRegistry {
            var text = try String(contentsOf: ShopServers.configs.appending(path: "shop.json"), encoding: .utf8)
            text = text.replacingOccurrences(of: #""failureRate": 0.05"#, with: #""failureRate": 0"#)
                .replacingOccurrences(of: #""latencyMs": [5, 40]"#, with: #""latencyMs": 0"#)
            let registry = ServiceRegistry(processEnvironment: ["AIF_ENVIRONMENT": "mock"])
            registry.register(try ServiceRegistry.ConfiguredService.parse(Data(text.utf8), file: folder.appending(path: "shop.json").path, environment: [
                "SHOP_ONLINE_URL": "http://127.0.0.1:9", "SHOP_OFFLINE_URL": "http://127.0.0.1:9",
                "SHOP_PUBLIC_KEY": ShopRoutes.publicKey, "SHOP_PRIVATE_KEY": ShopRoutes.privateKey,
            ]))
            return registry
        }

        /// Every file written, with its text.
        func files() throws -> [(path: String, text: String)] {
            let root = folder.appending(path: "fixtures")
            let paths = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []
            return try paths.sorted().compactMap { path in
                guard path.hasSuffix(".json") else { return nil }
                return (path, try String(contentsOf: root.appending(path: path), encoding: .utf8))
            }
        }
    }

    private static func manager<Content>(
        _ path: String, _ type: Content.Type, method: HTTPMethod = .get, proxy: APIProxy, registry: ServiceRegistry
    ) -> APIManager<Content> {
        let endpoint = Endpoint<Content>(service: "shop", path: path, method: method, retryPolicy: .never, usesAuthenticator: path != "auth/token")
        return APIManager(endpoint, proxy: proxy, registry: registry, cache: ResponseCache())
    }

    @Test func recordedResponsesAreReplayedAsTheServerGaveThem() async throws {
        let recording = try Recording()
        defer { try? FileManager.default.removeItem(at: recording.folder) }
        let stack = try await ShopStack.make(proxy: { APIProxy(transport: $0, recorder: recording.recorder) })

        /// The loads, against the registry and proxy given: pages, a detail, a 404, an order,
        /// a repeated parameter.
        func loads(_ registry: ServiceRegistry, _ proxy: APIProxy) async throws -> [String] {
            var seen: [String] = []
            let list = Self.manager("goods", GoodsPage.self, proxy: proxy, registry: registry)
            for page in 2...3 {
                let response = try await list.load(["page": .integer(page), "page_size": 5])
                seen.append("\(response.statusCode) \(response.content)")
            }
            let tagged = try await list.load(["page": 1, "page_size": 2, "tags": ["new", "sale"]])
            seen.append("\(tagged.statusCode) \(tagged.content)")
            let detail = try await Self.manager("goods/{id}", Goods.self, proxy: proxy, registry: registry).load(["id": 7])
            seen.append("\(detail.statusCode) \(detail.content) \(detail.headers["ETag"] ?? "-") \(detail.headers["Last-Modified"] ?? "-")")
            do {
                _ = try await Self.manager("goods/{id}", Goods.self, proxy: proxy, registry: registry).load(["id": 5000])
                seen.append("goods 5000 was found")
            } catch {
                // JSON bodies are kept as JSON values: the same members, keys in order.
                let body = try JSONDecoder().decode(JSONValue.self, from: error.response?.body ?? Data())
                let encoder = JSONEncoder()
                encoder.outputFormatting = .sortedKeys
                seen.append("\(error.kind) \(error.statusCode ?? 0) \(String(decoding: try encoder.encode(body), as: UTF8.self))")
            }
            let order = try await Self.manager("orders", Order.self, method: .post, proxy: proxy, registry: registry).load(["goods_id": 7, "quantity": 3])
            seen.append("\(order.statusCode) goods \(order.content.goodsId) × \(order.content.quantity) \(order.content.status)")
            return seen
        }

        let recorded = try await loads(stack.registry, stack.proxy)
        #expect(try recording.files().map(\.path) == ["shop/goods.GET.json", "shop/goods/5000.GET.json", "shop/goods/7.GET.json", "shop/orders.POST.json"])

        let replayProxy = APIProxy(transport: CurlTransport.shared)
        let replayRegistry = try recording.replayRegistry()
        let replayed = try await loads(replayRegistry, replayProxy)
        #expect(replayed == recorded)
        #expect(recorded.count == 6)

        // The repeated parameter was recorded with both values: one of them is not enough.
        let partial = await #expect(throws: APIError.self) {
            try await Self.manager("goods", GoodsPage.self, proxy: replayProxy, registry: replayRegistry).load(["page": 1, "page_size": 2, "tags": ["new"]])
        }
        #expect(partial?.message.contains("no answer in") == true, "\(partial?.message ?? "")")
    }

    /// A load that was redirected is recorded hop by hop, and replayed the same way: the
    /// redirect as it came, then the answer at its target.
    @Test func aRedirectIsRecordedAsItCameAndReplayedThroughTheSameHops() async throws {
        let recording = try Recording()
        defer { try? FileManager.default.removeItem(at: recording.folder) }
        let stack = try await ShopStack.make(proxy: { APIProxy(transport: $0, recorder: recording.recorder) })
        let moved = try await Self.manager("goods/{id}/moved", Goods.self, proxy: stack.proxy, registry: stack.registry).load(["id": 7])
        #expect(moved.content.id == 7)
        #expect(moved.metrics.redirectCount == 1)
        let files = try recording.files()
        #expect(files.map(\.path) == ["shop/goods/7.GET.json", "shop/goods/7/moved.GET.json"])
        let redirect = try #require(files.last?.text)
        #expect(redirect.contains(#""status" : 308"#) && redirect.contains(#""Location" : "../7""#), "\(redirect)")

        let replayed = try await Self.manager("goods/{id}/moved", Goods.self, proxy: APIProxy(transport: CurlTransport.shared), registry: try recording.replayRegistry())
            .load(["id": 7])
        #expect(replayed.content == moved.content)
        #expect(replayed.metrics.redirectCount == 1)
    }

    @Test func noSecretReachesAFixtureFile() async throws {
        let recording = try Recording(secretFields: ["pin"])
        defer { try? FileManager.default.removeItem(at: recording.folder) }
        let tokens = ShopTokens()
        let server = try await DemoShopServer.start(environment: .online, tokens: tokens)
        defer { Task { await server.stop() } }
        let stack = try await ShopStack.make(onlineURL: server.baseURL(), proxy: { APIProxy(transport: $0, recorder: recording.recorder) })
        let issued = Locked<[String]>([])
        let (proxy, registry) = (stack.proxy, stack.registry)
        stack.registry.setAuthenticator(Authenticator {
            let grant = try await Self.manager("auth/token", TokenGrant.self, method: .post, proxy: proxy, registry: registry)
                .load(["username": "demo", "password": "hunter2-password", "client_secret": "client-secret-value"]).content
            issued.withLock { $0.append(grant.accessToken) }
            return Authenticator.Credential(token: grant.accessToken, validFor: .seconds(grant.expiresIn))
        }, for: ["shop"])

        let account = try await APIManager(Endpoint<Account>(service: "shop", path: "account"), proxy: proxy, registry: registry, cache: ResponseCache()).load()
        #expect(account.content.user == "demo")
        _ = try await Self.manager("goods/{id}", Goods.self, proxy: proxy, registry: registry).load(["id": 9, "pin": "pin-98765"])

        let files = try recording.files()
        #expect(files.map(\.path) == ["shop/account.GET.json", "shop/auth/token.POST.json", "shop/goods/9.GET.json"])
        let secrets = [ShopRoutes.privateKey, ShopRoutes.publicKey, "hunter2-password", "client-secret-value", "pin-98765"] + issued.withLock { $0 }
        #expect(issued.withLock { $0.count } == 1)
        for (path, text) in files {
            for secret in secrets {
                #expect(!text.contains(secret), "\(path) holds a secret")
            }
            for field in ["\"sign\"", "\"nonce\"", "\"timestamp\"", "\"api_key\""] {
                #expect(!text.contains(field), "\(path) holds the signature field \(field)")
            }
        }
        // The token's member is there, redacted; the parameters that are not secret stay.
        let grant = try #require(files.first { $0.path == "shop/auth/token.POST.json" }?.text)
        #expect(grant.contains(#""access_token" : "***""#))
        #expect(grant.contains(#""username" : "demo""#))
    }

    /// A server that echoes the signed, token-carrying requests it gets, in JSON, text, bytes
    /// and gzip-encoded text, every piece as it came, percent-encoded and in base64: no recorded
    /// file holds any of those forms of any credential, in its text or in the bytes of a body it
    /// holds as base64.
    @Test func noFormOfACredentialReachesAFixtureFromAServerThatEchoesTheRequest() async throws {
        let recording = try Recording()
        defer { try? FileManager.default.removeItem(at: recording.folder) }
        let echo = try await EchoingServer()
        let stack = try await ShopStack.make(onlineURL: echo.server.baseURL(), proxy: { APIProxy(transport: $0, recorder: recording.recorder) })
        let token = "tok-echo-0001"
        stack.registry.setAuthenticator(Authenticator(credential: Authenticator.Credential(token: token, validFor: .seconds(3_600))) {
            Authenticator.Credential(token: "tok-echo-0002", validFor: .seconds(3_600))
        }, for: ["shop"])
        let echoing = APIManager(
            Endpoint<NoContent>(service: "shop", path: "echo/{form}", retryPolicy: .never), proxy: stack.proxy, registry: stack.registry,
            cache: ResponseCache())
        for form in ["json", "text", "binary", "gzip"] {
            let response = try await echoing.load(["form": .string(form)])
            #expect(response.statusCode == 200)
        }
        await echo.stop()

        let files = try recording.files()
        #expect(files.map(\.path) == ["shop/echo/binary.GET.json", "shop/echo/gzip.GET.json", "shop/echo/json.GET.json", "shop/echo/text.GET.json"])
        let signatures = echo.signaturesSeen
        #expect(signatures.count == 4)
        let secrets = [ShopRoutes.privateKey, ShopRoutes.publicKey, token, "Bearer \(token)"] + signatures
        let forms = secrets.flatMap { secret in
            [secret, secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? secret, Data(secret.utf8).base64EncodedString()]
        }
        for (path, text) in files {
            var contents = [text]
            if case .object(let answer)? = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)),
                case .string(let base64)? = answer["bodyBase64"], let bytes = Data(base64Encoded: base64)
            {
                contents.append(String(decoding: bytes, as: UTF8.self))
            }
            for content in contents {
                for form in forms {
                    #expect(!content.contains(form), "\(path) holds \(form)")
                }
            }
        }
        // The binary answer is still there, bytes and all, its credentials reading ***.
        let binary = try #require(files.first { $0.path == "shop/echo/binary.GET.json" }?.text)
        #expect(binary.contains("bodyBase64"))
        let text = try #require(files.first { $0.path == "shop/echo/gzip.GET.json" }?.text)
        #expect(text.contains("bodyText") && text.contains("***"))
    }

    @Test func credentialHeadersAndSecretMembersOfAResponseAreNotWritten() throws {
        let recording = try Recording()
        defer { try? FileManager.default.removeItem(at: recording.folder) }
        let environment = ServiceEnvironment(
            baseURL: URL(string: "https://api.example.com")!, apiVersion: "v2",
            credentials: SigningContext.Credentials(publicKey: "public-key-1234", privateKey: Secret("private-key-5678")))
        let resolved = try RecordedService.resolved("bank", environment)
        var request = HTTPRequest(method: .get, url: URL(string: "https://api.example.com/v2/me?sign=abcdef123456&timestamp=1&nonce=n&api_key=public-key-1234&page=2")!)
        request.headers.add(name: "Authorization", value: "Bearer bearer-token-0001")
        let body = #"{"user": {"name": "ada", "refresh_token": "refresh-0002", "sessions": 3}, "note": "echo bearer-token-0001", "signature": "s-0003"}"#
        let response = HTTPResponse(
            statusCode: 200,
            headers: ["Content-Type": "application/json", "Set-Cookie": "sid=cookie-0004", "X-Request-ID": "r1", "Date": "Mon, 23 Nov 2026 10:00:00 GMT", "Content-Length": "120"],
            body: Data(body.utf8), url: request.url)
        recording.recorder.record(request, response, for: resolved, logger: Logger(label: "test"))

        let text = try String(contentsOf: recording.folder.appending(path: "fixtures/bank/me.GET.json"), encoding: .utf8)
        for secret in ["abcdef123456", "public-key-1234", "private-key-5678", "bearer-token-0001", "refresh-0002", "s-0003", "cookie-0004", "Set-Cookie", "Date", "Content-Length"] {
            #expect(!text.contains(secret), "\(secret) was written:\n\(text)")
        }
        let answer = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(answer == .object([
            "status": .integer(200),
            "parameters": .object(["page": .string("2")]),
            "headers": .object(["Content-Type": .string("application/json"), "X-Request-ID": .string("r1")]),
            "body": .object([
                "user": .object(["name": .string("ada"), "refresh_token": .string("***"), "sessions": .integer(3)]),
                "note": .string("echo ***"), "signature": .string("***"),
            ]),
        ]))
    }

    @Test func aResponseRecordedAgainReplacesItsAnswerAndKeepsTheDelayAddedByHand() throws {
        let recording = try Recording()
        defer { try? FileManager.default.removeItem(at: recording.folder) }
        let resolved = try RecordedService.resolved("shop", ServiceEnvironment(baseURL: URL(string: "http://shop.test")!))
        func record(_ query: String, _ title: String) {
            let request = HTTPRequest(method: .get, url: URL(string: "http://shop.test/search\(query)")!)
            let response = HTTPResponse(statusCode: 200, headers: ["Content-Type": "application/json"], body: Data(#"{"title": "\#(title)"}"#.utf8), url: request.url)
            recording.recorder.record(request, response, for: resolved, logger: Logger(label: "test"))
        }
        let file = recording.folder.appending(path: "fixtures/shop/search.GET.json")
        record("", "all")
        record("?q=cup", "cups")
        var answers = try JSONDecoder().decode([JSONValue].self, from: Data(contentsOf: file))
        // The more specific answer comes first, so that the one without parameters does not
        // take its requests.
        #expect(answers.map(Self.title) == ["cups", "all"])
        guard case .object(var first) = answers[0] else { Issue.record("not an object"); return }
        first["delayMs"] = .integer(250)
        answers[0] = .object(first)
        try JSONEncoder().encode(answers).write(to: file)
        record("?q=cup", "cups again")
        let rewritten = try JSONDecoder().decode([JSONValue].self, from: Data(contentsOf: file))
        #expect(rewritten.map(Self.title) == ["cups again", "all"])
        guard case .object(let replaced) = rewritten[0] else { Issue.record("not an object"); return }
        #expect(replaced["delayMs"] == .integer(250))

        // A file that is not JSON is left as it was.
        try Data("not json".utf8).write(to: file)
        record("?q=pot", "pots")
        #expect(try String(contentsOf: file, encoding: .utf8) == "not json")
    }

    private static func title(_ answer: JSONValue) -> String? {
        guard case .object(let members) = answer, case .object(let body)? = members["body"], case .string(let title)? = body["title"] else { return nil }
        return title
    }

    @Test func theShopSampleRunsFromItsFixturesAlone() async throws {
        let sample = URL(fileURLWithPath: helperPath).deletingLastPathComponent().appending(path: "ShopSample").path
        let run = try await Shell.run(sample, ["--mock"])
        #expect(run.status == 0, "\(run.standardError)")
        for line in [
            "21 pages, 1003 goods, last page reached: true",
            "[42] Milk frother no. 6 — €25.44 (from cache)",
            "goods 12: Ceramic cup no. 2, 1434 cents",
            "POST orders → 201: order 1, goods 7 × 2, placed",
            "DELETE orders/1 → 204, no content",
            "the plugin saw cancelled, the delegate heard nothing",
            "service veto: service veto 4001",
            "not found: HTTP status 404",
            "60 loads of goods 42, all answered",
        ] {
            #expect(run.standardOutput.contains(line), "missing: \(line)\n\(run.standardOutput)")
        }
    }
}
