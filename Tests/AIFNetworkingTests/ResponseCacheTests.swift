@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import DemoServer
import Foundation
import Testing
@_spi(CrossModule) import AIFTransport

@Suite("Cache: LRU storage, lifetimes, coalescing", .timeLimit(.minutes(2)))
struct ResponseCacheTests {
    @Test func lruStorageEvictsTheLeastRecentlyUsed() {
        var storage = LRUStorage<String, Int>(capacity: 3)
        storage.set(1, for: "a")
        storage.set(2, for: "b")
        storage.set(3, for: "c")
        #expect(storage.value(for: "a") == 1)
        let evicted = storage.set(4, for: "d")
        #expect(evicted?.key == "b")
        #expect(storage.keysByRecency == ["d", "a", "c"])
        storage.set(5, for: "c")
        #expect(storage.keysByRecency == ["c", "d", "a"])
        #expect(storage.removeValue(for: "d") == 4)
        storage.set(6, for: "e")
        storage.set(7, for: "f")
        #expect(storage.keysByRecency == ["f", "e", "c"])
        storage.removeAll { $0 == "e" || $0 == "f" }
        #expect(storage.keysByRecency == ["c"])
        #expect(storage.count == 1)
    }

    @Test func lruStorageMatchesAReferenceModelOverRandomOperations() {
        var storage = LRUStorage<Int, Int>(capacity: 8)
        var model: [(key: Int, value: Int)] = []  // most recent first
        var generator = SystemRandomNumberGenerator()
        for step in 0..<5000 {
            let key = Int.random(in: 0..<20, using: &generator)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0:
                storage.set(step, for: key)
                model.removeAll { $0.key == key }
                model.insert((key, step), at: 0)
                if model.count > 8 { model.removeLast() }
            case 1:
                let expected = model.first { $0.key == key }
                #expect(storage.value(for: key) == expected?.value)
                if let expected {
                    model.removeAll { $0.key == key }
                    model.insert(expected, at: 0)
                }
            default:
                #expect(storage.removeValue(for: key) == model.first { $0.key == key }?.value)
                model.removeAll { $0.key == key }
            }
            #expect(storage.keysByRecency == model.map(\.key))
        }
    }

    @Test func keysIgnoreParameterOrderButNotValues() {
        let one = ResponseCache.Key(service: "shop", environment: .online, method: .get, path: "goods", parameters: ["page": 1, "sort": "id"])
        let same = ResponseCache.Key(service: "shop", environment: .online, method: .get, path: "goods", parameters: ["sort": "id", "page": 1])
        let other = ResponseCache.Key(service: "shop", environment: .online, method: .get, path: "goods", parameters: ["page": 2, "sort": "id"])
        let offline = ResponseCache.Key(service: "shop", environment: .offline, method: .get, path: "goods", parameters: ["page": 1, "sort": "id"])
        #expect(one == same)
        #expect(one != other)
        #expect(one != offline)
        #expect(one.description == "shop/online GET goods?page=1&sort=id")
    }

    @Test func aSecondLoadIsServedFromTheCache() async throws {
        let stack = try await ShopStack.make()
        let manager = stack.manager("goods/{id}", Goods.self) { var s = $0; s.cache = true; return s }
        let first = try await manager.load(["id": 5])
        let second = try await manager.load(["id": 5])
        #expect(!first.isFromCache)
        #expect(second.isFromCache)
        #expect(second.content == first.content)
        #expect(second.loadID != first.loadID)
        #expect(stack.transport.sent == 1)
        // Both loads start; only the first sends an attempt.
        #expect(manager.events.withLock { $0.filter { $0 == "manager.loadWillStart" }.count } == 2)
        #expect(manager.events.withLock { $0.filter { $0.hasPrefix("manager.attemptWillBeSigned") }.count } == 1)
        _ = try await manager.load(["id": 6])
        #expect(stack.transport.sent == 2)
    }

    @Test func theDelegateFaceIsServedFromTheCacheToo() async throws {
        let stack = try await ShopStack.make()
        let manager = stack.manager("goods/{id}", Goods.self) { var s = $0; s.cache = true; return s }
        let recorder = Recorder()
        manager.delegate = recorder
        manager.callbackExecutor = .immediate
        manager.loadData(with: ["id": 8])
        await recorder.wait(for: "delegate.", count: 1)
        #expect(recorder.deliveries == 1)
        manager.loadData(with: ["id": 8])
        await recorder.wait(for: "delegate.", count: 2)
        #expect(recorder.deliveries == 2)
        #expect((try? manager.lastOutcome?.get())?.isFromCache == true)
        #expect(stack.transport.sent == 1)
    }

    @Test func entriesExpire() async throws {
        let clock = ManualClock()
        let stack = try await ShopStack.make(cache: ResponseCache(now: { clock.date }))
        let manager = stack.manager("goods/{id}", Goods.self) { var s = $0; s.cache = true; s.lifetime = .seconds(30); return s }
        _ = try await manager.load(["id": 5])
        clock.advance(by: .seconds(29))
        #expect(try await manager.load(["id": 5]).isFromCache)
        clock.advance(by: .seconds(2))
        // Expired: asked again, conditionally (the shop's goods carry an ETag).
        #expect(try await manager.load(["id": 5]).origin == .revalidated)
        #expect(stack.transport.sent == 2)
    }

    @Test func theCapacityEvictsTheLeastRecentlyUsed() async throws {
        let stack = try await ShopStack.make(cache: ResponseCache(capacity: 2))
        let manager = stack.manager("goods/{id}", Goods.self) { var s = $0; s.cache = true; return s }
        for id in [1, 2, 1, 3] { _ = try await manager.load(["id": .integer(id)]) }
        #expect(stack.transport.sent == 3)
        #expect(try await manager.load(["id": 1]).isFromCache)
        #expect(try await !manager.load(["id": 2]).isFromCache)
        #expect(stack.cache.count == 2)
    }

    @Test func failuresAreNotCached() async throws {
        let stack = try await ShopStack.make()
        let manager = stack.manager("goods/{id}", Goods.self) { var s = $0; s.cache = true; return s }
        _ = try? await manager.load(["id": 9999])
        _ = try? await manager.load(["id": 9999])
        #expect(stack.transport.sent == 2)
        #expect(stack.cache.count == 0)
    }

    @Test func invalidationByManagerServiceOrAll() async throws {
        let stack = try await ShopStack.make()
        let detail = stack.manager("goods/{id}", Goods.self) { var s = $0; s.cache = true; return s }
        let list = stack.manager("goods", GoodsPage.self) { var s = $0; s.cache = true; return s }
        _ = try await detail.load(["id": 1])
        _ = try await list.load()
        #expect(stack.cache.count == 2)
        detail.invalidateCache()
        #expect(stack.cache.count == 1)
        #expect(try await list.load().isFromCache)
        _ = try await detail.load(["id": 1])
        stack.cache.removeAll(.service("other"))
        #expect(stack.cache.count == 2)
        stack.cache.removeAll(.environment("shop", .offline))
        #expect(stack.cache.count == 2)
        stack.cache.removeAll(.service("shop"))
        #expect(stack.cache.count == 0)
        _ = try await detail.load(["id": 1])
        stack.cache.removeAll()
        #expect(stack.cache.count == 0)
    }

    @Test func identicalLoadsInFlightShareOneTransfer() async throws {
        let stack = try await ShopStack.make()
        let manager = stack.manager("slow", Slept.self) { var s = $0; s.coalesce = true; return s }
        let recorder = Recorder()
        manager.delegate = recorder
        manager.callbackExecutor = .immediate
        let ids = (0..<10).map { _ in manager.loadData(with: ["ms": 300]) }
        #expect(Set(ids).count == 10)
        await recorder.wait(for: "delegate.", count: 10)
        #expect(recorder.deliveries == 10)
        #expect(stack.transport.sent == 1)
        for id in ids {
            guard case .success(let text)? = recorder.outcome(id).first else {
                Issue.record("request \(id) did not succeed")
                continue
            }
            #expect(text.contains("300"))
        }
        // Different parameters are a different transfer.
        _ = try await manager.load(["ms": 10])
        #expect(stack.transport.sent == 2)
    }
}

/// The slow endpoint's answer.
struct Slept: Decodable, Sendable {
    var sleptMs: Int
}
