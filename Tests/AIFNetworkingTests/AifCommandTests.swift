@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import AIFNetworkingTesting
import DemoServer
import Foundation
import Testing

/// The `aif` program, built beside the tests, run against the demo shop with the repository's
/// `Configs/shop.json`: its loads go through the manager layer, with the service's retry policy.
@Suite("aif against the demo shop: services, apis, call, api, download")
struct AifCommandTests {
    static var aifPath: String {
        URL(fileURLWithPath: helperPath).deletingLastPathComponent().appending(path: "aif").path
    }

    /// `aif COMMAND shop ARGUMENTS… --config Configs/` with the shop's URLs and keys in the
    /// environment (its online URL replaced by `onlineURL` when given).
    func aif(
        _ arguments: [String], command: String = "call", service: String? = "shop", onlineURL: URL? = nil, environment more: [String: String] = [:]
    ) async throws -> Shell.Run {
        let servers = try await ShopServers.shared()
        let environment = [
            "SHOP_ONLINE_URL": (onlineURL ?? servers.online.baseURL()).absoluteString,
            "SHOP_OFFLINE_URL": servers.offline.baseURL().absoluteString,
            "SHOP_PUBLIC_KEY": ShopRoutes.publicKey,
            "SHOP_PRIVATE_KEY": ShopRoutes.privateKey,
        ].merging(more) { $1 }
        return try await Shell.run(Self.aifPath, [command] + (service.map { [$0] } ?? []) + arguments + ["--config", ShopServers.configs.path], environment: environment)
    }

    @Test func aFlakyEndpointIsRetriedAsTheServiceSaysAndVerboseSaysSo() async throws {
        let run = try await aif(["flaky/aif-\(UUID().uuidString)", "--param", "failures=2", "--verbose"])
        #expect(run.status == 0, "\(run.standardError)")
        let report = try JSONDecoder().decode(FlakyReport.self, from: Data(run.standardOutput.utf8))
        #expect(report.attempts == 3)
        #expect(Set(report.nonces).count == 3)
        #expect(run.standardError.contains("* shop / online: up to 2 retries of DELETE, GET, HEAD, OPTIONS, PUT or a request with Idempotency-Key"))
        #expect(run.standardError.contains("attempt 2 of 3 in "))
        #expect(run.standardError.contains("attempt 3 of 3 in "))
        #expect(run.standardError.contains("the server answered 503"))
        #expect(run.standardError.contains("3 attempts"))
        // Secrets stay out of what it prints.
        #expect(!run.standardError.contains(ShopRoutes.privateKey))
    }

    @Test func withoutVerboseOnlyTheBodyIsPrinted() async throws {
        let run = try await aif(["flaky/aif-\(UUID().uuidString)", "--param", "failures=1"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardError.isEmpty)
        #expect(try JSONDecoder().decode(FlakyReport.self, from: Data(run.standardOutput.utf8)).attempts == 2)
    }

    @Test func aWaitTheServerNamesIsAnnounced() async throws {
        let run = try await aif(["flaky/aif-\(UUID().uuidString)", "--param", "failures=1", "--param", "status=429", "--param", "retry_after=1"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardError == "aif: waiting 1 s (Retry-After) before attempt 2 of 3: the server answered 429 and asked to wait 1 s\n")
    }

    @Test func exhaustedRetriesPrintTheLastAnswerAndFail() async throws {
        let run = try await aif(["flaky/aif-\(UUID().uuidString)", "--param", "failures=5", "--verbose"])
        #expect(run.status == 7)
        #expect(run.standardOutput.contains(#""code": 5031"#))
        #expect(run.standardError.contains("3 attempts"))
        #expect(run.standardError.contains("aif: "))
        #expect(run.standardError.contains("503"))
    }

    @Test func aPostWithoutAnIdempotencyKeyIsNotRetried() async throws {
        // A POST's parameters go in its body, where the route does not look: it fails twice.
        let run = try await aif(["flaky/aif-\(UUID().uuidString)", "--method", "POST", "--verbose"])
        #expect(run.status == 7)
        #expect(run.standardError.contains("POST is not retried without an Idempotency-Key header"))
        #expect(run.standardError.contains("; 1 attempt\n"))
        let keyed = try await aif(["flaky/aif-\(UUID().uuidString)", "--method", "POST", "--header", "Idempotency-Key: k-\(UUID().uuidString)"])
        #expect(keyed.status == 0, "\(keyed.standardError)")
        #expect(try JSONDecoder().decode(FlakyReport.self, from: Data(keyed.standardOutput.utf8)).attempts == 3)
    }

    @Test func dataFromAFileIsSentSignedOverItsDigest() async throws {
        let folder = try makeTestFolder("cli")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appending(path: "order.json").path
        try Data(#"{"goods_id": 5, "quantity": 4}"#.utf8).write(to: URL(fileURLWithPath: path))
        let run = try await aif(["orders", "--method", "POST", "--data", "@" + path, "--header", "Content-Type: application/json"])
        #expect(run.status == 0, "\(run.standardError)")
        let order = try JSONDecoder().decode([String: ParameterLike].self, from: Data(run.standardOutput.utf8))
        #expect(order["goods_id"] == .integer(5) && order["quantity"] == .integer(4))
    }

    @Test func aFormTheSchemeCannotSignFailsSayingWhy() async throws {
        let run = try await aif(["orders", "--method", "POST", "--form", "goods_id=5", "--form", "photo=@/etc/hostname"])
        #expect(run.status == 2)
        #expect(run.standardError.contains("multipart/form-data body cannot be signed over its bytes"), "\(run.standardError)")
    }

    @Test func aBodyOnAGetIsRefusedNotIgnored() async throws {
        let run = try await aif(["goods", "--data", "x"])
        #expect(run.status != 0)
        #expect(run.status == 64)
        #expect(run.standardError.contains("--data sends a body, which this command does not send with GET: add -X POST"), "\(run.standardError)")
        let form = try await aif(["orders/{id}", "--param", "id=1", "-X", "DELETE", "--urlencoded"])
        #expect(form.status == 64)
        #expect(form.standardError.contains("--urlencoded makes the parameters a form body, but those of a DELETE go in the query"), "\(form.standardError)")
        let both = try await aif(["orders", "--method", "POST", "--data", "x", "--form", "a=b"])
        #expect(both.standardError.contains("--data and --form cannot be combined"), "\(both.standardError)")
    }

    @Test func recordWritesTheResponseAsAFixtureTheMockEnvironmentServes() async throws {
        let folder = try makeTestFolder("cli-record")
        defer { try? FileManager.default.removeItem(at: folder) }
        let fixtures = folder.appending(path: "fixtures")
        let run = try await aif(["goods/{id}", "--param", "id=31", "--record", fixtures.path])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardError.isEmpty, "\(run.standardError)")
        let text = try String(contentsOf: fixtures.appending(path: "shop/goods/31.GET.json"), encoding: .utf8)
        #expect(!text.contains(ShopRoutes.privateKey) && !text.contains(ShopRoutes.publicKey) && !text.contains("\"sign\""))

        // The mock environment of a config beside the fixtures answers the same.
        let config = try String(contentsOf: ShopServers.configs.appending(path: "shop.json"), encoding: .utf8)
            .replacingOccurrences(of: #""failureRate": 0.05"#, with: #""failureRate": 0"#)
        try config.write(to: folder.appending(path: "shop.json"), atomically: true, encoding: .utf8)
        let servers = try await ShopServers.shared()
        let replay = try await Shell.run(Self.aifPath, ["call", "shop", "goods/{id}", "--param", "id=31", "--env", "mock", "--config", folder.path], environment: [
            "SHOP_ONLINE_URL": "http://127.0.0.1:9", "SHOP_OFFLINE_URL": servers.offline.baseURL().absoluteString,
            "SHOP_PUBLIC_KEY": ShopRoutes.publicKey, "SHOP_PRIVATE_KEY": ShopRoutes.privateKey,
        ])
        #expect(replay.status == 0, "\(replay.standardError)")
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let recorded = try decoder.decode(Goods.self, from: Data(run.standardOutput.utf8))
        #expect(try decoder.decode(Goods.self, from: Data(replay.standardOutput.utf8)) == recorded)
        #expect(recorded.id == 31)

        let download = try await aif(["exports/{name}", "--param", "name=catalogue.csv", "-o", folder.appending(path: "c.csv").path, "--record", fixtures.path], command: "download")
        #expect(download.status != 0)
        #expect(download.standardError.contains("--record writes a response as a fixture; a download's body goes to its file and is not recorded"))
    }

    @Test func servicesAreListedWithTheirEnvironmentsAndSigningButNoKey() async throws {
        let run = try await aif([], command: "services", service: nil)
        #expect(run.status == 0, "\(run.standardError)")
        let servers = try await ShopServers.shared()
        for line in [
            "shop (\(ShopServers.configs.path)/shop.json)",
            "  retries: up to 2 retries of DELETE, GET, HEAD, OPTIONS, PUT or a request with Idempotency-Key",
            "  * online   \(servers.online.baseURL().absoluteString)/v1  [AIF-HMAC, fields in the query, covering every parameter]",
            "    offline  \(servers.offline.baseURL().absoluteString)/v1  [AIF-HMAC, fields in the query, covering every parameter]",
            "    mock     fixtures \(ShopServers.configs.path)/fixtures/shop; 5–40 ms, 5% failures, seed 7  [AIF-HMAC",
        ] {
            #expect(run.standardOutput.contains(line), "missing: \(line)\n\(run.standardOutput)")
        }
        #expect(!run.standardOutput.contains(ShopRoutes.privateKey) && !run.standardOutput.contains(ShopRoutes.publicKey))
        // Without the variables its file needs, the file is named with the one it lacks, and the
        // status says a configuration error (2).
        let bare = try await Shell.run(Self.aifPath, ["services", "--config", ShopServers.configs.path])
        #expect(bare.status == 2)
        #expect(bare.standardOutput.contains("refers to the environment variable"), "\(bare.standardOutput)")
    }

    @Test func theExitStatusTellsTheFailureClass() async throws {
        #expect(try await aif(["goods/{id}", "--param", "id=5000"]).status == 6)
        #expect(try await aif(["flaky/aif-\(UUID().uuidString)", "--param", "failures=5"]).status == 7)
        #expect(try await aif(["coupons/{code}", "--param", "code=SPRING"]).status == 8)
        #expect(try await aif(["goods"], onlineURL: URL(string: "http://127.0.0.1:9")!).status == 3)
        let slow = try await aif(["slow", "--param", "ms=5000", "--timeout", "0.5"])
        #expect(slow.status == 4, "\(slow.standardError)")
        let mistyped = try await aif(["goods"], service: "shp")
        #expect(mistyped.status == 2)
        #expect(mistyped.standardError.contains("no service is called \"shp\"; did you mean \"shop\"?"), "\(mistyped.standardError)")
        let environment = try await aif(["goods", "--env", "onlin"])
        #expect(environment.status == 2)
        #expect(environment.standardError.contains("did you mean \"online\"?"), "\(environment.standardError)")
        #expect(try await aif(["goods", "--timeout", "0"]).status == 64)
        let noConfig = try await Shell.run(Self.aifPath, ["call", "shop", "goods", "--config", "/nonexistent/Configs"])
        #expect(noConfig.status == 2)
        #expect(noConfig.standardError.contains("no config file or folder at /nonexistent/Configs"), "\(noConfig.standardError)")

        // TLS: a service whose server's certificate nobody here trusts.
        let tls = try await TestServers.shared().tls
        let folder = try makeTestFolder("cli-tls")
        defer { try? FileManager.default.removeItem(at: folder) }
        try #"{"name": "secure", "environments": {"online": {"baseURL": "\#(tls.baseURL(secure: true).absoluteString)"}}}"#
            .write(to: folder.appending(path: "secure.json"), atomically: true, encoding: .utf8)
        let untrusted = try await Shell.run(Self.aifPath, ["call", "secure", "hello", "--config", folder.path])
        #expect(untrusted.status == 5, "\(untrusted.standardError)")
        // Its private CA given on the command line, as curl's --cacert.
        let certificates = try TestCertificates.processCertificates.get()
        let trusted = try await Shell.run(Self.aifPath, ["call", "secure", "authority", "--raw", "--config", folder.path, "--cacert", certificates.caPath])
        #expect(trusted.status == 0, "\(trusted.standardError)")
        #expect(trusted.standardOutput.hasPrefix("127.0.0.1"), "\(trusted.standardOutput)")
        let unreadable = try await Shell.run(Self.aifPath, ["call", "secure", "hello", "--config", folder.path, "--cacert", "/nonexistent/ca.pem"])
        #expect(unreadable.status == 64)
        #expect(unreadable.standardError.contains("--cacert /nonexistent/ca.pem cannot be read"), "\(unreadable.standardError)")
    }

    @Test func repeatedParametersSendEveryValueAndIncludeShowsTheHead() async throws {
        let curl = try await aif(["goods", "--param", "tag=new", "--param", "tag=sale", "--param", "page=2", "--curl"])
        #expect(curl.standardOutput.contains("tag%5B%5D=new&tag%5B%5D=sale") || curl.standardOutput.contains("tag[]=new&tag[]=sale"), "\(curl.standardOutput)")
        let run = try await aif(["goods/{id}", "--param", "id=42", "-i"])
        #expect(run.status == 0)
        #expect(run.standardOutput.hasPrefix("HTTP/1.1 200 OK\n"), "\(run.standardOutput)")
        #expect(run.standardOutput.contains("\nETag: \"goods-online-42\"\n"))
        // The body indented two spaces, its members in the order they came, ending with a newline.
        let body = try #require(run.standardOutput.components(separatedBy: "\n\n").last)
        #expect(body.hasPrefix("{\n  \"") && body.hasSuffix("\n}\n"), "\(body)")
        for member in [#"  "id": 42"#, #"  "title": "Milk frother no. 6""#, #"  "price_cents": 2544"#] { #expect(body.contains(member), "\(body)") }
        let head = try await aif(["goods/{id}", "--param", "id=42", "-X", "HEAD"])
        #expect(head.status == 0)
        #expect(head.standardOutput.hasPrefix("HTTP/1.1 200 OK\n") && head.standardOutput.contains("ETag:"), "\(head.standardOutput)")
    }

    @Test func rawKeepsTheBytesAsTheyCame() async throws {
        let run = try await aif(["goods/{id}", "--param", "id=42", "--raw"])
        #expect(!run.standardOutput.contains("\n") && !run.standardOutput.contains(" \""), "\(run.standardOutput)")
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try decoder.decode(Goods.self, from: Data(run.standardOutput.utf8)) == Goods(id: 42, title: "Milk frother no. 6", priceCents: 2544))
    }

    @Test func theCurlCommandIsAcceptedByTheShopAsItStands() async throws {
        let curl = try await aif(["goods/{id}", "--param", "id=42", "--curl"])
        #expect(curl.status == 0)
        #expect(!curl.standardOutput.contains(ShopRoutes.privateKey))
        let sent = try await Shell.run("/bin/sh", ["-c", curl.standardOutput.replacingOccurrences(of: "curl", with: "curl -sS", options: .anchored)])
        #expect(sent.status == 0, "\(sent.standardError)")
        #expect(sent.standardOutput.contains(#""title":"Milk frother no. 6""#), "\(sent.standardOutput)")
        let redacted = try await aif(["goods/{id}", "--param", "id=42", "--curl", "--redact"])
        #expect(redacted.standardOutput.contains("sign=***"), "\(redacted.standardOutput)")
        #expect(try await aif(["goods", "--redact"]).status == 64)
        #expect(try await aif(["goods", "--curl", "-i"]).status == 64)
    }

    /// A bearer token stays off the screen, and the command still works: it refers to the
    /// variable that holds the token; a token in no variable is `***`, printed when asked.
    @Test func theCurlCommandRefersToTheVariableHoldingTheToken() async throws {
        let grant = try await aif(["auth/token", "-X", "POST", "--raw"])
        #expect(grant.status == 0, "\(grant.standardError)")
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let token = try decoder.decode(TokenGrant.self, from: Data(grant.standardOutput.utf8)).accessToken
        let call = ["account", "-H", "Authorization: Bearer \(token)", "--curl"]

        let curl = try await aif(call, environment: ["SHOP_TOKEN": token])
        #expect(curl.status == 0, "\(curl.standardError)")
        #expect(!curl.standardOutput.contains(token), "\(curl.standardOutput)")
        #expect(curl.standardOutput.contains(#"-H "Authorization: Bearer ${SHOP_TOKEN}""#), "\(curl.standardOutput)")
        #expect(curl.standardError.isEmpty)
        let command = curl.standardOutput.replacingOccurrences(of: "curl", with: "curl -sS", options: .anchored)
        let sent = try await Shell.run("/bin/sh", ["-c", command], environment: ["SHOP_TOKEN": token])
        #expect(sent.status == 0, "\(sent.standardError)")
        #expect(sent.standardOutput.contains(#""user":"demo""#), "\(sent.standardOutput)")

        let hidden = try await aif(call)
        #expect(hidden.standardOutput.contains("'Authorization: ***'"), "\(hidden.standardOutput)")
        #expect(!hidden.standardOutput.contains(token))
        #expect(hidden.standardError.contains("--show-secrets"), "\(hidden.standardError)")
        let shown = try await aif(call + ["--show-secrets"])
        #expect(shown.standardOutput.contains("'Authorization: Bearer \(token)'"), "\(shown.standardOutput)")
        #expect(try await aif(call + ["--show-secrets", "--redact"]).status == 64)
    }

    @Test func allPagesPrintsEveryItemOfEveryPageAsALine() async throws {
        let run = try await aif(["goods", "--param", "page_size=100", "--param", "sort=id", "--all-pages", "-v"])
        #expect(run.status == 0, "\(run.standardError)")
        let lines = run.standardOutput.split(separator: "\n")
        #expect(lines.count == 1003)
        let ids = try lines.map { try JSONDecoder().decode([String: ParameterLike].self, from: Data($0.utf8))["id"] }
        #expect(ids == (1...1003).map { .integer($0) })
        #expect(run.standardError.components(separatedBy: "< 200").count - 1 == 11, "11 pages")
        let fromTen = try await aif(["goods", "--param", "page_size=100", "--param", "page=10", "--all-pages"])
        #expect(fromTen.standardOutput.split(separator: "\n").count == 103)
        let capped = try await aif(["goods", "--param", "page_size=10", "--all-pages", "--max-pages", "2"])
        #expect(capped.standardOutput.split(separator: "\n").count == 20)
        #expect(capped.status == 9, "stopping with more to load is not a success")
        #expect(capped.standardError.contains("stopped after 2 pages (--max-pages) with more to load: 20 items printed"), "\(capped.standardError)")
        // The shop caps its pages at 100: asked for 500, page 1 is a full page of the cap, not
        // the end of the list.
        let overAsked = try await aif(["goods", "--param", "page_size=500", "--all-pages", "-v"])
        #expect(overAsked.status == 0, "\(overAsked.standardError)")
        #expect(overAsked.standardOutput.split(separator: "\n").count == 1003)
        #expect(overAsked.standardError.components(separatedBy: "< 200").count - 1 == 11, "11 pages")
        let exactly = try await aif(["goods", "--param", "page_size=500", "--all-pages", "--max-pages", "3"])
        #expect(exactly.status == 9)
        #expect(exactly.standardOutput.split(separator: "\n").count == 300)
        let wrongKey = try await aif(["goods", "--all-pages", "--items-key", "goods"])
        #expect(wrongKey.status == 8)
        #expect(wrongKey.standardError.contains("page 1 has no array \"goods\""), "\(wrongKey.standardError)")
        #expect(try await aif(["goods", "--items-key", "items"]).status == 64)
    }

    @Test func theQuickStartsDemoShopServesTheShopAsItsConfigSays() async throws {
        // `make demo-shop` on ports of the system's choosing, then the quick start's load, by aif.
        let shop = Process()
        shop.executableURL = URL(fileURLWithPath: Self.aifPath).deletingLastPathComponent().appending(path: "DemoShop")
        shop.arguments = ["0", "0"]
        let output = Pipe()
        shop.standardOutput = output
        try shop.run()
        defer { shop.terminate() }
        var announced = ""
        while !announced.contains("Stop it with Ctrl-C.") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            announced += String(decoding: chunk, as: UTF8.self)
        }
        var variables: [String: String] = [:]
        for word in announced.split(whereSeparator: \.isWhitespace) where word.hasPrefix("SHOP_") {
            let parts = word.split(separator: "=", maxSplits: 1)
            variables[String(parts[0])] = String(parts[1])
        }
        #expect(variables.keys.sorted() == ["SHOP_OFFLINE_URL", "SHOP_ONLINE_URL", "SHOP_PRIVATE_KEY", "SHOP_PUBLIC_KEY"], "\(announced)")
        let run = try await Shell.run(Self.aifPath, ["call", "shop", "goods/{id}", "--param", "id=42", "--raw", "--config", ShopServers.configs.path], environment: variables)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains(#""title":"Milk frother no. 6""#))
    }

    @Test func apisListsTheDefinesOfTheConfigFolder() async throws {
        let run = try await aif([], command: "apis", service: nil)
        #expect(run.status == 0, "\(run.standardError)")
        let rows = run.standardOutput.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(rows.first == ["NAME", "METHOD", "PATH", "SERVICE", "GROUP", "SUMMARY"])
        // A dotted name at a file's top level is in no group; @orders's defines are in orders.
        #expect(rows.contains(["goods.detail", "GET", "goods/{id}", "shop", "-", "One", "article", "of", "the", "catalogue"]), "\(run.standardOutput)")
        #expect(rows.contains { $0.starts(with: ["orders.place", "POST", "orders", "shop", "orders"]) }, "\(run.standardOutput)")
        #expect(rows.count == 6)
    }

    @Test func apisReadsYAMLDefinesAndLocatesTheirMistakes() async throws {
        let folder = try makeTestFolder("cli")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.copyItem(at: ShopServers.configs.appending(path: "shop.json"), to: folder.appending(path: "shop.json"))
        try Data("DEFAULT: {service: shop}\ngoods.byTag:\n  path: goods\n  summary: Goods with a tag\n".utf8).write(to: folder.appending(path: "more.apis.yaml"))
        let run = try await Shell.run(Self.aifPath, ["apis", "--config", folder.path])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("goods.byTag"), "\(run.standardOutput)")
        try Data("goods.byTag:\n  service: shop\n  path: goods\n  verb: GET\n".utf8).write(to: folder.appending(path: "more.apis.yaml"))
        let wrong = try await Shell.run(Self.aifPath, ["apis", "--config", folder.path])
        #expect(wrong.status == 2)
        #expect(wrong.standardError.contains("more.apis.yaml:4:3: goods.byTag.verb is not a known key"), "\(wrong.standardError)")
    }

    @Test func aDefineOfAServiceNoConfigDefinesIsRefusedWhereItIs() async throws {
        let folder = try makeTestFolder("cli")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.copyItem(at: ShopServers.configs.appending(path: "shop.json"), to: folder.appending(path: "shop.json"))
        try Data("{\n  \"goods.detail\": {\"service\": \"shop\", \"path\": \"goods/{id}\"},\n  \"carts.mine\": {\"service\": \"cart\", \"path\": \"mine\"}\n}\n".utf8)
            .write(to: folder.appending(path: "mixed.apis.json"))
        try Data(#"{"orders.detail": {"service": "shop", "path": "orders/{id}"}}"#.utf8).write(to: folder.appending(path: "shop.apis.json"))
        let listed = try await Shell.run(Self.aifPath, ["apis", "--config", folder.path])
        #expect(listed.status == 2)
        #expect(listed.standardOutput.contains("orders.detail") && !listed.standardOutput.contains("carts.mine"), "\(listed.standardOutput)")
        #expect(listed.standardError.contains("mixed.apis.json:3:18: carts.mine.service names the service \"cart\" (for carts.mine), which is not registered"), "\(listed.standardError)")
        let called = try await Shell.run(Self.aifPath, ["api", "carts.mine", "--config", folder.path])
        #expect(called.status == 2)
        #expect(called.standardError.contains("mixed.apis.json:3:18: carts.mine.service"), "\(called.standardError)")
    }

    /// A page of the demo shop's goods, as far as the tests read it.
    struct GoodsPage: Decodable {
        struct Item: Decodable { let id: Int }
        let items: [Item]
    }

    @Test func apiCallsADefineWithItsPathMethodAndDefaults() async throws {
        let run = try await aif(["id=42", "--raw"], command: "api", service: "goods.detail")
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains(#""title":"Milk frother no. 6""#), "\(run.standardOutput)")
        // The define's default page size, overridden by the call.
        let page = try await aif(["page=2", "page_size=3", "--raw"], command: "api", service: "goods.list")
        #expect(page.status == 0, "\(page.standardError)")
        #expect(page.standardOutput.contains(#""page_size":3"#), "\(page.standardOutput)")
        // The second page of three starts at item 4, whatever order the server writes keys in.
        let items = try JSONDecoder().decode(GoodsPage.self, from: Data(page.standardOutput.utf8)).items
        #expect(items.map(\.id) == [4, 5, 6], "\(page.standardOutput)")
        // As a curl command: the define's path and header.
        let curl = try await aif(["id=42", "--curl"], command: "api", service: "goods.detail")
        #expect(curl.status == 0, "\(curl.standardError)")
        #expect(curl.standardOutput.contains("/v1/goods/42?"), "\(curl.standardOutput)")
        #expect(curl.standardOutput.contains("Accept: application/json"), "\(curl.standardOutput)")
    }

    @Test func apiWithAllPagesReadsTheItemsFromTheDataField() async throws {
        let run = try await aif(["--all-pages"], command: "api", service: "goods.list")
        #expect(run.status == 0, "\(run.standardError)")
        let lines = run.standardOutput.split(separator: "\n")
        #expect(lines.count == 1003)
        #expect(lines.last?.contains(#""id":1003"#) == true)
    }

    @Test func apiPostsTheBodyItIsGiven() async throws {
        let run = try await aif(["--json", #"{"goods_id": 7, "quantity": 3}"#, "--raw"], command: "api", service: "orders.place")
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains(#""goods_id":7"#) && run.standardOutput.contains(#""quantity":3"#), "\(run.standardOutput)")
    }

    @Test func apiNamesAPlaceholderNoParameterFillsAndAMistypedName() async throws {
        let bare = try await aif([], command: "api", service: "orders.detail")
        #expect(bare.status == 2)
        #expect(bare.standardError.contains("has {id} in its path orders/{id}, and no parameter fills it: add id=VALUE"), "\(bare.standardError)")
        #expect(bare.standardError.contains("Configs/shop-orders.apis.yaml"), "\(bare.standardError)")
        let typo = try await aif(["id=1"], command: "api", service: "goods.detial")
        #expect(typo.status == 2)
        #expect(typo.standardError.contains("no API is defined as \"goods.detial\"; did you mean \"goods.detail\"?"), "\(typo.standardError)")
        let misplaced = try await aif(["-i", "id=1"], command: "api", service: "goods.detail")
        #expect(misplaced.status != 0)
    }

    @Test func versionCompletionAndAMistypedCommand() async throws {
        let version = try await Shell.run(Self.aifPath, ["--version"])
        #expect(version.status == 0)
        #expect(version.standardOutput.hasPrefix("aif \(aifNetworkingVersion) (libcurl "), "\(version.standardOutput)")
        for shell in ["bash", "zsh", "fish"] {
            let script = try await Shell.run(Self.aifPath, ["--generate-completion-script", shell])
            #expect(script.status == 0)
            #expect(script.standardOutput.contains("download") && script.standardOutput.contains("services"), "\(shell)")
            #expect(script.standardOutput.contains("apis") && script.standardOutput.contains("---completion api"), "\(shell)")
        }
        // The names `aif api` completes: those of Configs/ in the working folder.
        let repository = ShopServers.configs.deletingLastPathComponent().path
        let names = try Shell.run("cd '\(repository)' && '\(Self.aifPath)' ---completion api -- positional@0 2 0 aif api")
        #expect(names.split(separator: "\n") == ["goods.detail", "goods.list", "orders.cancel", "orders.detail", "orders.place"], "\(names)")
        let typo = try await Shell.run(Self.aifPath, ["cal", "shop", "goods"])
        #expect(typo.status == 64)
        #expect(typo.standardError.contains("aif: \"cal\" is not a command; did you mean \"call\"?"), "\(typo.standardError)")
    }

    @Test func aDownloadResumesWithinARunAndLandsWhole() async throws {
        // The shop's online environment is a raw file server that cuts its first answer short;
        // the service's retry asks for the rest.
        let content = Digest.randomBytes(300_000)
        let resource = RangedResource(.init(content: content, cutNextAfter: 120_000))
        let server = try RawServer(.resource(resource))
        defer { server.stop() }
        let folder = try makeTestFolder("cli")
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appending(path: "export.bin").path
        let run = try await aif(
            ["files/{name}", "--param", "name=export.bin", "-o", output, "--sha256", Digest.hex(Digest.hash(content))], command: "download",
            onlineURL: URL(string: "http://127.0.0.1:\(server.port)")!)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("\(output) 300000 bytes (120000 from an earlier attempt) sha256 \(Digest.hex(Digest.hash(content)))"), "\(run.standardOutput)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == Data(content))
        #expect(resource.receivedRanges == ["-", "bytes=120000-"])
    }
}

/// A JSON scalar, enough to read an order back.
private enum ParameterLike: Decodable, Equatable {
    case integer(Int)
    case text(String)

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int.self) { self = .integer(number) } else { self = .text(try container.decode(String.self)) }
    }
}

/// `aif` against the demo pay (a Stripe-shaped API): its config folder holds the pay service —
/// form bodies, lists paged after their last item — and an API defined by name.
@Suite("aif against the demo pay: paging, forms, failed pages")
struct AifPayTests {
    /// A folder with `pay.json` (paging as `paging` says, `nil` for none) and `pay.apis.json`.
    private static func configs(paging: String?) throws -> URL {
        let folder = try makeTestFolder("aif-pay")
        let service = """
            {"name": "pay", "defaultEnvironment": "test", "bodyEncoding": "form", "arrayEncoding": "indexed", "signing": {"scheme": "none"},
             \(paging.map { "\"paging\": \($0)," } ?? "")
             "errorBody": {"messageField": "error.message", "codeField": "error.code"},
             "environments": {"test": {"baseURL": "${PAY_URL}", "apiVersion": "v1", "authorization": {"bearer": "${PAY_TEST_KEY}"}}}}
            """
        try Data(service.utf8).write(to: folder.appending(path: "pay.json"))
        let defines = #"""
            {"@customers": {"DEFAULT": {"service": "pay", "pathPrefix": "customers"},
               "list": {"path": "", "parameters": {"limit": 7},
                        "paging": {"style": "afterLastItem", "parameter": "starting_after", "sizeParameter": "limit", "itemsField": "data"}}}}
            """#
        try Data(defines.utf8).write(to: folder.appending(path: "pay.apis.json"))
        return folder
    }

    private static let afterLastItem = #"{"style": "afterLastItem", "sizeParameter": "limit", "itemsField": "data"}"#

    private func aif(_ arguments: [String], command: String = "call", paging: String? = afterLastItem, server: LocalServer) async throws -> Shell.Run {
        let folder = try Self.configs(paging: paging)
        defer { try? FileManager.default.removeItem(at: folder) }
        let environment = ["PAY_URL": server.baseURL().absoluteString, "PAY_TEST_KEY": PayRoutes.testKey]
        return try await Shell.run(AifCommandTests.aifPath, [command] + arguments + ["--config", folder.path], environment: environment)
    }

    /// The IDs of the items printed, one JSON line each.
    private func ids(_ output: String) throws -> [String] {
        try output.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["id"] as? String ?? "?"
        }
    }

    @Test func allPagesFollowsTheServicesPagingAfterTheLastItem() async throws {
        let server = try await DemoPayServer.start()
        let run = try await aif(["pay", "customers", "--param", "limit=10", "--all-pages", "--verbose"], server: server)
        await server.stop()
        #expect(run.status == 0, "\(run.standardError)")
        let ids = try ids(run.standardOutput)
        #expect(ids.count == 25 && Set(ids).count == 25, "\(ids)")
        #expect(run.standardError.contains("starting_after=cus_T016"))
    }

    @Test func apiPagesAsTheDefineSays() async throws {
        let server = try await DemoPayServer.start()
        // The service says nothing of paging: the define does.
        let run = try await aif(["customers.list", "--all-pages"], command: "api", paging: nil, server: server)
        await server.stop()
        #expect(run.status == 0, "\(run.standardError)")
        #expect(try ids(run.standardOutput).count == 25)
    }

    @Test func aPageThatRepeatsTheOneBeforeStopsTheListingWithAnError() async throws {
        let server = try await DemoPayServer.start()
        // Numbered pages, which the demo pay does not know: it answers the first page each time.
        let run = try await aif(["pay", "customers", "--param", "limit=10", "--all-pages", "--paging", "page"], server: server)
        await server.stop()
        #expect(run.status == 8, "\(run.standardError)")
        #expect(try ids(run.standardOutput).count == 10, "the first page once, not the same items up to the page cap")
        #expect(run.standardError.contains("page 2 repeats page 1 (the same 10 items): the server seems to ignore page; stopped after 10 items"), "\(run.standardError)")
    }

    @Test func aFailedPageIsPrintedAsASingleCallsAnswer() async throws {
        let server = try await DemoPayServer.start()
        let run = try await aif(["pay", "customers", "--param", "limit=500", "--all-pages"], server: server)
        await server.stop()
        #expect(run.status == 6, "\(run.standardError)")
        #expect(run.standardOutput.contains(#""code": "parameter_invalid_integer""#), "\(run.standardOutput)")
        #expect(run.standardError.contains("Invalid integer: limit must be from 1 to 100."))
    }

    @Test func jsonParametersGoAsTheServiceEncodesBodies() async throws {
        let ledger = PayLedger()
        let server = try await DemoPayServer.start(ledger: ledger)
        let run = try await aif(
            ["pay", "payment_intents", "-X", "POST", "--json", #"{"amount": 1500, "currency": "usd", "metadata": {"order": "7"}}"#], server: server)
        await server.stop()
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains(#""amount": 1500"#))
        #expect(ledger.requests.first?.body == "amount=1500&currency=usd&metadata%5Border%5D=7")
    }
}
