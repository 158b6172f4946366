@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import DemoServer
import Foundation
import Testing

private struct InvalidID: Error, CustomStringConvertible {
    var description: String { "id must be a positive number" }
}

/// Endpoints as values, run by plain managers: nothing here subclasses a manager, so nothing
/// restates `@unchecked Sendable` — the compiler checks every part.
extension Endpoint where Content == Goods {
    fileprivate static let goodsDetail = Endpoint(
        service: "shop", path: "goods/{id}", cachePolicy: .lifetime(.seconds(60)),
        reformParameters: { parameters in
            var reformed = parameters
            if let id = reformed.removeValue(forKey: "goodsID") { reformed["id"] = id }
            return reformed
        },
        validateParameters: { parameters in
            guard case .integer(let id)? = parameters["id"], id > 0 else { throw InvalidID() }
        },
        validateResponse: { response in
            guard !response.content.title.isEmpty else { throw InvalidID() }
        })
}

@Suite("Endpoints: managers described as values")
struct EndpointTests {
    @Test func anEndpointRunsThePipelineWithoutASubclass() async throws {
        let stack = try await ShopStack.make()
        let detail = APIManager(.goodsDetail, proxy: stack.proxy, registry: stack.registry, cache: stack.cache)
        #expect(detail.serviceName == "shop")
        #expect(detail.path == "goods/{id}")
        #expect(detail.endpoint.cachePolicy == .lifetime(.seconds(60)))

        // Reformed (goodsID → id), validated, decoded, cached.
        let first = try await detail.load(["goodsID": 3])
        #expect(first.content.id == 3)
        #expect(!first.isFromCache)
        let second = try await detail.load(["goodsID": 3])
        #expect(second.isFromCache)
        #expect(stack.transport.sent == 1)

        let invalid = await #expect(throws: APIError.self) { try await detail.load(["id": -1]) }
        #expect(invalid?.kind == .invalidParameters)
        #expect(invalid?.message.contains("positive number") == true)
        #expect(stack.transport.sent == 1)
    }

    @Test func aPagedEndpointPagesWithoutASubclass() async throws {
        let stack = try await ShopStack.make()
        let list = PagedAPIManager<GoodsPage>(
            Endpoint(service: "shop", path: "goods"), paging: Paging.Settings(size: 100, endOfList: .totalCount),
            proxy: stack.proxy, registry: stack.registry, cache: stack.cache)
        #expect(list.pageSize == 100)
        var count = 0
        for try await page in list.pages() { count += page.content.items.count }
        #expect(count == 1003)
        #expect(stack.transport.sent == 11)
    }

    /// A subclass still overrides what it wants, over the endpoint's values.
    @Test func aSubclassOverridesTheEndpoint() {
        final class Renamed: APIManager<Goods>, @unchecked Sendable {
            // Restated as Swift requires of subclasses; it adds no stored state.
            override var path: String { "goods/{id}/renamed" }
        }
        let manager = Renamed(.goodsDetail)
        #expect(manager.path == "goods/{id}/renamed")
        #expect(manager.serviceName == "shop")
    }
}
