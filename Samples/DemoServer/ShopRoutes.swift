import Foundation
import Hummingbird

/// One of the demo shop's environments: the online and offline instances serve different data.
public enum ShopEnvironment: String, Sendable, CaseIterable {
    /// The "production" data.
    case online
    /// The test data.
    case offline
}

/// A small shop API: goods listing with paging, and a goods detail.
public enum ShopRoutes {
    /// One article for sale.
    public struct Goods: Codable, Sendable {
        /// The identifier.
        public var id: Int
        /// The title.
        public var title: String
        /// The price in cents.
        public var priceCents: Int
    }

    /// One page of the listing.
    public struct GoodsPage: Codable, Sendable {
        /// The goods on this page.
        public var items: [Goods]
        /// The 1-based page number.
        public var page: Int
        /// The number of goods in all.
        public var total: Int
    }

    /// The catalogue of an environment.
    public static func catalogue(_ environment: ShopEnvironment) -> [Goods] {
        switch environment {
        case .online:
            let names = ["Espresso beans", "Milk frother", "Pour-over kettle", "Ceramic cup", "Burr grinder", "Paper filters", "Scale", "Tamper"]
            return names.enumerated().map { Goods(id: $0.offset + 1, title: $0.element, priceCents: 990 + $0.offset * 250) }
        case .offline:
            return (1...3).map { Goods(id: $0, title: "Test article \($0)", priceCents: 100 * $0) }
        }
    }

    /// Adds the shop's routes under `/v1`.
    ///
    /// - Parameters:
    ///   - router: The router to add to.
    ///   - environment: Which catalogue to serve.
    public static func add<Context: RequestContext>(to router: Router<Context>, environment: ShopEnvironment) {
        let goods = catalogue(environment)
        let group = router.group("v1")
        group.get("goods") { request, _ -> Response in
            let page = max(1, request.uri.queryParameters.get("page", as: Int.self) ?? 1)
            let size = min(50, max(1, request.uri.queryParameters.get("page_size", as: Int.self) ?? 3))
            let start = min(goods.count, (page - 1) * size)
            let items = Array(goods[start..<min(goods.count, start + size)])
            return try json(GoodsPage(items: items, page: page, total: goods.count))
        }
        group.get("goods/:id") { _, context -> Response in
            guard let id = context.parameters.get("id", as: Int.self), let item = goods.first(where: { $0.id == id }) else {
                return Response(status: .notFound, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: #"{"error":"no such goods"}"#)))
            }
            return try json(item)
        }
    }

    private static func json<Value: Encodable>(_ value: Value) throws -> Response {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let data = try encoder.encode(value)
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// The demo shop as a running server.
public enum DemoShopServer {
    /// Starts the shop for `environment` on 127.0.0.1 with a port the system picks.
    ///
    /// - Parameter environment: Which catalogue to serve.
    /// - Returns: The running server; call ``LocalServer/stop()`` when done.
    /// - Throws: When the server cannot bind.
    public static func start(environment: ShopEnvironment = .online) async throws -> LocalServer {
        let router = Router()
        ShopRoutes.add(to: router, environment: environment)
        return try await LocalServer.start(router: router)
    }
}
