@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import DemoServer
import Foundation
import Testing

/// Hears every response with where it came from.
private final class OriginRecorder: APIManagerDelegate {
    struct Heard: Sendable {
        let id: LoadID
        let origin: HTTPResponse.Origin?
        let refreshes: LoadID?
        let error: APIError.Kind?
    }

    let heard = Collected<Heard>()

    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) {
        heard.append(Heard(id: response.loadID, origin: response.origin, refreshes: response.refreshes, error: nil))
    }

    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) {
        heard.append(Heard(id: error.loadID, origin: nil, refreshes: nil, error: error.kind))
    }
}

@Suite("Cache policies: stale-while-revalidate, revalidation, offline fallback, Cache-Control, versions", .timeLimit(.minutes(2)))
struct CachePolicyTests {
    private func manager(
        _ stack: ShopStack, _ policy: ResponseCache.Policy, path: String = "goods/{id}"
    ) -> ShopManager<Goods> {
        stack.manager(path, Goods.self) { var s = $0; s.cache = true; s.cachePolicy = policy; return s }
    }

    @Test func aStaleResponseIsDeliveredAtOnceAndThenTheRefreshedOne() async throws {
        let clock = ManualClock()
        let stack = try await ShopStack.make(cache: ResponseCache(now: { clock.date }))
        let detail = manager(stack, ResponseCache.Policy(lifetime: .seconds(30), staleWhileRevalidate: .seconds(60), revalidationWindow: nil))
        let recorder = OriginRecorder()
        detail.delegate = recorder
        detail.callbackExecutor = .immediate
        detail.loadData(with: ["id": 3])
        _ = await recorder.heard.wait(count: 1)

        clock.advance(by: .seconds(45))
        let staleID = detail.loadData(with: ["id": 3])
        _ = await recorder.heard.wait(count: 3)
        let heard = recorder.heard.values
        #expect(heard[1].id == staleID)
        #expect(heard[1].origin == .staleCache(age: .seconds(45)))
        #expect(heard[2].origin == .network)
        #expect(heard[2].refreshes == staleID)
        #expect(heard[2].id != staleID)
        #expect(stack.transport.sent == 2)
        #expect(stack.cache.statistics.staleServed == 1)

        // The refresh stored a new lifetime: the next load is a fresh hit.
        clock.advance(by: .seconds(10))
        #expect(try await detail.load(["id": 3]).origin == .cache(age: .seconds(10)))
        #expect(!detail.isLoading)
    }

    @Test func theAsyncFaceYieldsTheStaleResponseThenTheRefreshedOne() async throws {
        let clock = ManualClock()
        let stack = try await ShopStack.make(cache: ResponseCache(now: { clock.date }))
        let detail = manager(stack, ResponseCache.Policy(lifetime: .seconds(30), staleWhileRevalidate: .seconds(60), revalidationWindow: nil))
        var first: [HTTPResponse.Origin] = []
        for try await response in detail.responses(["id": 4]) { first.append(response.origin) }
        #expect(first == [.network])

        clock.advance(by: .seconds(31))
        var responses: [APIResponse<Goods>] = []
        for try await response in detail.responses(["id": 4]) { responses.append(response) }
        #expect(responses.map(\.origin) == [.staleCache(age: .seconds(31)), .network])
        #expect(responses[1].refreshes == responses[0].loadID)
        #expect(responses[0].content == responses[1].content)
        #expect(stack.transport.sent == 2)

        // `load()` answers stale and refreshes in the background.
        let changes = ChangeSignal()
        detail.plugins.append(SignalsEnd(changes: changes))
        clock.advance(by: .seconds(31))
        let stale = try await detail.load(["id": 4])
        #expect(stale.isStale)
        await changes.wait { stack.transport.sent == 3 && !detail.isLoading }
        #expect(try await detail.load(["id": 4]).origin == .cache(age: .zero))
    }

    @Test func pastTheStaleWindowTheLoadWaitsForTheNetwork() async throws {
        let clock = ManualClock()
        let stack = try await ShopStack.make(cache: ResponseCache(now: { clock.date }))
        let detail = manager(stack, ResponseCache.Policy(lifetime: .seconds(30), staleWhileRevalidate: .seconds(60), revalidationWindow: nil))
        _ = try await detail.load(["id": 5])
        clock.advance(by: .seconds(91))
        #expect(try await detail.load(["id": 5]).origin == .network)
        #expect(stack.transport.sent == 2)
    }

    @Test func anExpiredResponseIsRevalidatedAndA304ServesItsBody() async throws {
        let faults = ShopFaults()
        let clock = ManualClock()
        let stack = try await ShopStack.make(faults: faults, cache: ResponseCache(now: { clock.date }))
        let detail = manager(stack, .lifetime(.seconds(30)))
        let first = try await detail.load(["id": 6])
        #expect(first.headers["ETag"] == "\"goods-online-6\"")

        clock.advance(by: .seconds(31))
        let revalidated = try await detail.load(["id": 6])
        #expect(revalidated.origin == .revalidated)
        #expect(revalidated.isFromCache)
        #expect(revalidated.statusCode == 200)
        #expect(revalidated.content == first.content)
        #expect(revalidated.data == first.data)
        #expect(faults.notModifiedAnswers == 1)
        #expect(stack.transport.sent == 2)
        #expect(stack.cache.statistics.revalidations == 1)

        // The 304 started a new lifetime.
        clock.advance(by: .seconds(20))
        #expect(try await detail.load(["id": 6]).origin == .cache(age: .seconds(20)))
        #expect(stack.transport.sent == 2)

        // Without a revalidation window the request is unconditional.
        let plain = manager(stack, ResponseCache.Policy(lifetime: .seconds(30), revalidationWindow: nil), path: "goods/{id}")
        _ = try await plain.load(["id": 7])
        clock.advance(by: .seconds(31))
        #expect(try await plain.load(["id": 7]).origin == .network)
        #expect(faults.notModifiedAnswers == 1)
    }

    @Test func withNoNetworkTheLastStoredResponseAnswersMarkedStale() async throws {
        let clock = ManualClock()
        let cache = ResponseCache(now: { clock.date })
        let online = try await ShopStack.make(cache: cache)
        let policy = ResponseCache.Policy(lifetime: .seconds(30), offlineFallback: .seconds(3600))
        let stored = try await manager(online, policy).load(["id": 8])

        let closed = URL(string: "http://127.0.0.1:\(try RawServer.closedPort())")!
        let offline = try await ShopStack.make(onlineURL: closed, cache: cache)
        clock.advance(by: .seconds(600))
        let fallback = try await manager(offline, policy).load(["id": 8])
        #expect(fallback.origin == .offlineFallback(age: .seconds(600), reason: .noNetwork))
        #expect(fallback.isStale)
        #expect(fallback.content == stored.content)
        #expect(cache.statistics.offlineFallbacks == 1)

        // Too old for the policy, or a policy without fallback: the error.
        clock.advance(by: .seconds(3001))
        await #expect(throws: APIError.self) { try await manager(offline, policy).load(["id": 8]) }
        clock.advance(by: .seconds(-3001))
        let error = await #expect(throws: APIError.self) {
            try await manager(offline, ResponseCache.Policy(lifetime: .seconds(30))).load(["id": 8])
        }
        #expect(error?.kind == .noNetwork)
    }

    @Test func cacheControlHasTheLastWordWhenThePolicyFollowsIt() async throws {
        let clock = ManualClock()
        let stack = try await ShopStack.make(cache: ResponseCache(now: { clock.date }))
        let following = manager(stack, ResponseCache.Policy(lifetime: .seconds(300), revalidationWindow: nil, followsCacheControl: true))
        _ = try await following.load(["id": 9, "cache_control": "no-store"])
        #expect(try await following.load(["id": 9, "cache_control": "no-store"]).origin == .network)
        _ = try await following.load(["id": 9, "cache_control": "max-age=10"])
        clock.advance(by: .seconds(9))
        #expect(try await following.load(["id": 9, "cache_control": "max-age=10"]).isFromCache)
        clock.advance(by: .seconds(2))
        #expect(try await following.load(["id": 9, "cache_control": "max-age=10"]).origin == .network)
        _ = try await following.load(["id": 9, "cache_control": "no-cache"])
        #expect(try await following.load(["id": 9, "cache_control": "no-cache"]).origin == .network)

        // Ignored unless the policy follows it.
        let own = manager(stack, .lifetime(.seconds(300)))
        _ = try await own.load(["id": 10, "cache_control": "no-store"])
        #expect(try await own.load(["id": 10, "cache_control": "no-store"]).isFromCache)
    }

    @Test func cacheControlDirectivesAreReadAsRFC9111Says() {
        let control = CacheControl(["Cache-Control": "public, max-age=\"60\", no-cache", "cache-control": "Private, max-age=30, x-unknown=1"])
        #expect(!control.noStore && control.noCache && control.isPrivate && control.maxAge == 30)
        #expect(CacheControl(["Cache-Control": "max-age=abc"]).maxAge == nil)
        #expect(CacheControl(["Cache-Control": "no-store"]).noStore)
        // Directives without a name (found by `make fuzz`, which crashed on them) are skipped.
        #expect(CacheControl(["Cache-Control": "=, =5, max-age=7,= no-store"]) == CacheControl(["Cache-Control": "max-age=7"]))
        let policy = ResponseCache.Policy(lifetime: .seconds(300), revalidationWindow: nil, followsCacheControl: true)
        let now = Date(timeIntervalSince1970: 1000)
        let aged = HTTPResponse(statusCode: 200, headers: ["Cache-Control": "max-age=100", "Age": "40"], url: URL(string: "http://x")!)
        #expect(policy.retention(of: aged, at: now)?.expires == now.addingTimeInterval(60))
        let secret = HTTPResponse(statusCode: 200, headers: ["Cache-Control": "private"], url: URL(string: "http://x")!)
        #expect(policy.retention(of: secret, at: now)?.persists == false)
    }

    @Test func aVersionBumpMissesWhatTheOldVersionStored() async throws {
        let stack = try await ShopStack.make()
        _ = try await manager(stack, ResponseCache.Policy(lifetime: .seconds(60), version: 1)).load(["id": 11])
        #expect(try await manager(stack, ResponseCache.Policy(lifetime: .seconds(60), version: 1)).load(["id": 11]).isFromCache)
        #expect(try await !manager(stack, ResponseCache.Policy(lifetime: .seconds(60), version: 2)).load(["id": 11]).isFromCache)
        let statistics = stack.cache.statistics
        #expect(statistics.memoryHits == 1)
        #expect(statistics.misses == 2)
        #expect(statistics.hitRate == 1.0 / 3.0)
        #expect(statistics.memory.entries == 2)
    }

    @Test func aServicesCacheVersionComesFromItsConfigFile() throws {
        func parse(_ version: String) throws(ServiceRegistry.ConfigurationError) -> ServiceRegistry.ConfiguredService {
            try ServiceRegistry.ConfiguredService.parse(Data("""
                {"name": "news", "cacheVersion": \(version), "environments": {"online": {"baseURL": "http://127.0.0.1:1", "apiVersion": "v1"}}}
                """.utf8), file: "news.json", environment: [:])
        }
        #expect(try parse("3").cacheVersion == 3)
        let error = #expect(throws: ServiceRegistry.ConfigurationError.self) { try parse("\"3\"") }
        #expect(error?.description.contains("cacheVersion") == true)
        #expect(error?.description.contains("news.json") == true)
    }

    @Test func theFingerprintFollowsTheDecodableShape() {
        struct One: Decodable { let id: Int; let title: String }
        struct Renamed: Decodable { let id: Int; let name: String }
        struct Retyped: Decodable { let id: Int; let title: Int }
        struct Longer: Decodable { let id: Int; let title: String; let tags: [String]? }
        struct Nested: Decodable { let items: [One] }
        struct NestedOther: Decodable { let items: [Renamed] }
        final class Node: Decodable { let children: [Node] }
        enum Kind: String, Decodable { case a, b }
        struct WithEnum: Decodable { let kind: Kind; let after: Int }
        struct WithURL: Decodable { let link: URL; let id: UUID; let at: Date; let after: Int }
        struct WithURLChanged: Decodable { let link: URL; let id: UUID; let at: Date; let after: String }

        let fingerprints = [
            SchemaFingerprint.of(One.self), SchemaFingerprint.of(Renamed.self), SchemaFingerprint.of(Retyped.self),
            SchemaFingerprint.of(Longer.self), SchemaFingerprint.of(Nested.self), SchemaFingerprint.of(NestedOther.self),
            SchemaFingerprint.of(Node.self), SchemaFingerprint.of(WithEnum.self), SchemaFingerprint.of(WithURL.self),
            SchemaFingerprint.of(WithURLChanged.self),
        ]
        #expect(Set(fingerprints).count == fingerprints.count)
        #expect(SchemaFingerprint.of(One.self) == fingerprints[0])
        #expect(fingerprints.allSatisfy { $0.count == 16 })
    }
}
