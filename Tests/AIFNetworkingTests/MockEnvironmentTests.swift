@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import DemoServer
import Foundation
import Testing
@_spi(CrossModule) import AIFTransport

@Suite("Mock environments: fixtures, latency, injected failures")
struct MockEnvironmentTests {
    /// A service folder with a config file whose `mock` environment has these keys, and
    /// fixtures for goods.
    private static func mockService(_ mockKeys: String, retry: String = "false") throws -> (folder: URL, registry: ServiceRegistry) {
        let folder = try makeTestFolder("mock")
        try """
            {
              "name": "shop", "defaultEnvironment": "online", "signing": { "scheme": "aif-hmac", "placement": "query" },
              "decoding": { "keys": "snakeCase" }, "retry": \(retry),
              "environments": {
                "online": { "baseURL": "http://127.0.0.1:1", "apiVersion": "v1" },
                "mock": { "apiVersion": "v1", "publicKey": "mock-public", "privateKey": "${MOCK_PRIVATE}", \(mockKeys) }
              }
            }
            """.write(to: folder.appending(path: "shop.json"), atomically: true, encoding: .utf8)
        let goods = folder.appending(path: "fixtures/goods")
        try FileManager.default.createDirectory(at: goods, withIntermediateDirectories: true)
        try """
            [
              { "parameters": { "id": 404 }, "status": 404, "body": { "code": 4040, "message": "no such goods" } },
              { "headers": { "ETag": "\\"g\\"" }, "body": { "id": 7, "title": "Scale", "price_cents": 1990 } }
            ]
            """.write(to: goods.appending(path: "{id}.GET.json"), atomically: true, encoding: .utf8)
        try """
            { "body": { "items": [], "page": 1, "page_size": 20, "total": 0, "has_more": false } }
            """.write(to: folder.appending(path: "fixtures/goods.GET.json"), atomically: true, encoding: .utf8)
        let registry = ServiceRegistry(processEnvironment: ["AIF_ENVIRONMENT": "mock", "MOCK_PRIVATE": "mock-private"])
        try registry.registerServices(inDirectory: folder, environment: ["MOCK_PRIVATE": "mock-private"])
        return (folder, registry)
    }

    private static func manager<Content>(_ path: String, _ type: Content.Type, _ registry: ServiceRegistry) -> APIManager<Content> {
        APIManager(Endpoint<Content>(service: "shop", path: path), proxy: APIProxy(transport: CurlTransport.shared), registry: registry, cache: ResponseCache())
    }

    @Test func loadsAreAnsweredFromFixturesSignedAndDecodedAsUsual() async throws {
        let (folder, registry) = try Self.mockService(#""fixtures": "fixtures""#)
        defer { try? FileManager.default.removeItem(at: folder) }
        let detail = Self.manager("goods/{id}", Goods.self, registry)
        let response = try await detail.load(["id": 7])
        #expect(response.content == Goods(id: 7, title: "Scale", priceCents: 1990))
        #expect(response.headers["ETag"] == "\"g\"")
        #expect(response.request.url.absoluteString.hasPrefix("http://mock.invalid/v1/goods/7?"))
        #expect(response.request.url.query?.contains("sign=") == true)
        let missing = await #expect(throws: APIError.self) { try await detail.load(["id": 404]) }
        #expect(missing?.statusCode == 404)
        #expect(try await Self.manager("goods", GoodsPage.self, registry).load(["page": 1]).content.total == 0)
    }

    @Test func aDownloadWritesTheFixturesBodyToItsFile() async throws {
        let (folder, registry) = try Self.mockService(#""fixtures": "fixtures""#)
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appending(path: "fixtures/exports"), withIntermediateDirectories: true)
        try #"{ "headers": { "Content-Type": "text/csv" }, "bodyText": "id,title\n7,Scale\n" }"#
            .write(to: folder.appending(path: "fixtures/exports/{name}.GET.json"), atomically: true, encoding: .utf8)
        let exports = Self.manager("exports/{name}", NoContent.self, registry)
        let target = folder.appending(path: "catalogue.csv")
        let file = try await exports.download(["name": "catalogue.csv"], to: FileDownload(to: target))
        #expect(try String(contentsOf: target, encoding: .utf8) == "id,title\n7,Scale\n")
        #expect(file.byteCount == 17)
    }

    @Test func aMissingFixtureNamesTheFileItLookedFor() async throws {
        let (folder, registry) = try Self.mockService(#""fixtures": "fixtures""#)
        defer { try? FileManager.default.removeItem(at: folder) }
        let error = await #expect(throws: APIError.self) { try await Self.manager("orders/{id}", Goods.self, registry).load(["id": 3]) }
        let expected = folder.appending(path: "fixtures/orders/3.GET.json").path
        #expect(error?.message.contains("no fixture for GET orders/3: looked for \(expected)") == true, "\(error?.message ?? "")")

        try "{ \"stauts\": 200 }".write(to: folder.appending(path: "fixtures/orders.GET.json"), atomically: true, encoding: .utf8)
        let broken = await #expect(throws: APIError.self) { try await Self.manager("orders", Goods.self, registry).load() }
        #expect(broken?.message.contains("orders.GET.json cannot be used: answer 1 has an unknown key \"stauts\"") == true, "\(broken?.message ?? "")")
    }

    @Test func latencyStaysInsideTheConfiguredRange() async throws {
        let (folder, registry) = try Self.mockService(#""fixtures": "fixtures", "latencyMs": [50, 120]"#)
        defer { try? FileManager.default.removeItem(at: folder) }
        let detail = Self.manager("goods/{id}", Goods.self, registry)
        var elapsed: [Duration] = []
        for _ in 0..<8 {
            let start = ContinuousClock.now
            _ = try await detail.load(["id": 7])
            elapsed.append(ContinuousClock.now - start)
        }
        // Never sooner than the range allows. Later only by what a busy machine adds (the whole
        // suite runs at once, under the sanitizer too), so no load is held to the upper bound
        // but the quickest is, with a margin.
        #expect(elapsed.allSatisfy { $0 >= .milliseconds(50) }, "\(elapsed)")
        #expect(elapsed.min()! < .milliseconds(120 + 100), "\(elapsed)")
    }

    @Test func theFailureRateHoldsOverTwoThousandLoadsAndTheSeedRepeatsThem() async throws {
        let (folder, registry) = try Self.mockService(#""fixtures": "fixtures", "failureRate": 0.1, "seed": 42"#)
        defer { try? FileManager.default.removeItem(at: folder) }
        // The rate, over 2,000 requests straight to the environment's fixture transport (what
        // every load of the environment goes through; cheap enough not to crowd the test pool
        // under the sanitizer).
        let environment = try registry.resolve("shop").environment
        let transport = FixtureTransport(behavior: try #require(environment.mock), environment: environment)
        let request = HTTPRequest(url: URL(string: "http://mock.invalid/v1/goods/7")!)
        let outcomes = Locked<[String]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for _ in 0..<2000 {
                transport.send(request, progress: nil) { result in
                    let outcome = switch result {
                    case .success(let response): "\(response.statusCode)"
                    case .failure(let error): "\(error.code)"
                    }
                    if outcomes.withLock({ $0.append(outcome); return $0.count }) == 2000 { done.resume() }
                }
            }
        }
        let failures = outcomes.withLock { $0 }.filter { $0 != "200" }
        #expect(abs(Double(failures.count) / 2000 - 0.1) <= 0.03, "\(failures.count) failures")
        #expect(Set(failures) == ["500", "503", "total timeout", "connection dropped"], "\(Set(failures))")

        // Through managers, one load after another, with the same seed: the same loads fail the
        // same way.
        func run() async -> [String] {
            let detail = Self.manager("goods/{id}", Goods.self, registry)
            var outcomes: [String] = []
            for _ in 0..<100 {
                do {
                    _ = try await detail.load(["id": 7])
                    outcomes.append("ok")
                } catch {
                    outcomes.append("\(error.kind) \(error.statusCode.map(String.init) ?? "")")
                }
            }
            return outcomes
        }
        // A new proxy per run: each has its own fixture transport, seeded afresh.
        let first = await run()
        #expect(first.contains("ok") && first.contains { $0 != "ok" })
        #expect(await run() == first)
    }

    @Test func mockKeysAreCheckedInTheConfigFile() throws {
        func parse(_ environment: String) throws(ServiceRegistry.ConfigurationError) -> ServiceRegistry.ConfiguredService {
            try ServiceRegistry.ConfiguredService.parse(Data("""
                {"name": "news", "defaultEnvironment": "mock", "environments": {"mock": \(environment)}}
                """.utf8), file: "/configs/news.json", environment: [:])
        }
        let service = try parse(#"{"fixtures": "fixtures/news", "latencyMs": 30, "failureRate": 0.25, "seed": 9}"#)
        let mock = try #require(service.environments["mock"]?.mock)
        #expect(mock.fixtures.path == "/configs/fixtures/news")
        #expect(mock.latency == .milliseconds(30) ... .milliseconds(30))
        #expect(mock.failureRate == 0.25)
        #expect(mock.seed == 9)
        #expect(throws: ServiceRegistry.ConfigurationError.self) { try parse(#"{"fixtures": "f", "latencyMs": [200, 100]}"#) }
        // Past a day (found by `make fuzz`: 4e41 ms overflowed a Duration and crashed).
        let tooLong = #expect(throws: ServiceRegistry.ConfigurationError.self) { try parse(#"{"fixtures": "f", "latencyMs": [6, 4e41]}"#) }
        #expect(tooLong?.description.contains("environments.mock.latencyMs") == true)
        #expect(throws: ServiceRegistry.ConfigurationError.self) { try parse(#"{"fixtures": "f", "latencyMs": 86400001}"#) }
        #expect(try parse(#"{"fixtures": "f", "latencyMs": 86400000}"#).environments["mock"]?.mock?.latency.upperBound == .seconds(86_400))
        #expect(throws: ServiceRegistry.ConfigurationError.self) { try parse(#"{"fixtures": "f", "failureRate": 2}"#) }
        let stray = #expect(throws: ServiceRegistry.ConfigurationError.self) { try parse(#"{"baseURL": "http://h", "failureRate": 0.1}"#) }
        #expect(stray?.description.contains("environments.mock.failureRate") == true)
        #expect(throws: ServiceRegistry.ConfigurationError.self) { try parse(#"{"latencyMs": 5}"#) }
    }
}
