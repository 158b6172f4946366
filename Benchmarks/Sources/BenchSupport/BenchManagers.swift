import AIFNetworking
import Foundation

// What the manager clients of TransportBench and TransportProfile share.

/// The benchmark's small JSON, decoded.
public struct BenchCatalogue: Decodable, Sendable {
    public struct Item: Decodable, Sendable {
        public var id: Int
        public var title: String
        public var priceCents: Int
        public var inStock: Bool

        /// Creates an item.
        public init(id: Int, title: String, priceCents: Int, inStock: Bool) {
            self.id = id
            self.title = title
            self.priceCents = priceCents
            self.inStock = inStock
        }
    }

    public var page: Int
    public var pageSize: Int
    public var total: Int
    public var items: [Item]

    /// Creates a catalogue.
    public init(page: Int, pageSize: Int, total: Int, items: [Item]) {
        self.page = page
        self.pageSize = pageSize
        self.total = total
        self.items = items
    }
}

/// The benchmark server as a service: AIF-HMAC signed (the server ignores the signature; the
/// cost of making it is what is measured), snake_case keys.
public struct BenchService: Service {
    public let environments: [ServiceEnvironment.Name: ServiceEnvironment]

    /// A service at `baseURL`.
    public init(baseURL: URL) {
        environments = [
            .online: ServiceEnvironment(baseURL: baseURL, credentials: SigningContext.Credentials(publicKey: "bench-public", privateKey: Secret("bench-private-key")))
        ]
    }

    public var name: ServiceName { "bench" }
    public var decoder: (any ContentDecoder)? { FastJSONDecoder(keyDecodingStrategy: .convertFromSnakeCase) }
}

/// One endpoint: a signed GET of the small JSON.
public final class BenchCatalogueManager: APIManager<BenchCatalogue>, @unchecked Sendable {
    // Restated as Swift requires of subclasses; it adds no stored state.
    override public var serviceName: ServiceName { "bench" }
    override public var path: String { "small.json" }
}

/// One endpoint: a signed POST of an order (``BenchPayload/order`` as parameters, sent as its
/// JSON body), answered with the small JSON.
public final class BenchOrderManager: APIManager<BenchCatalogue>, @unchecked Sendable {
    // Restated as Swift requires of subclasses; it adds no stored state.
    override public var serviceName: ServiceName { "bench" }
    override public var path: String { "orders" }
    override public var requestMethod: HTTPMethod { .post }
}

/// The small JSON every client fetches (about 600 bytes), the same file nginx serves.
public enum BenchPayload {
    /// The document.
    public static let json: String = {
        let items = (1...6).map { index in
            #"{"id":\#(index),"title":"Article number \#(index) of the benchmark catalogue","price_cents":\#(990 + index * 125),"in_stock":true}"#
        }
        return #"{"page":1,"page_size":6,"total":6,"items":["# + items.joined(separator: ",") + "]}\n"
    }()
}

extension BenchPayload {
    /// The order the POST scenario sends, as parameters (the manager clients)…
    public static let order: Parameters = ["goods_id": 42, "quantity": 1]
    /// …and as the JSON body they become (the other clients), byte for byte.
    public static let orderJSON = #"{"goods_id":42,"quantity":1}"#
}

/// ``BenchCatalogue`` decoded with explicit coding keys instead of a key strategy.
public struct ExplicitCatalogue: Decodable, Sendable {
    /// The catalogue.
    public let catalogue: BenchCatalogue

    private enum Keys: String, CodingKey { case page, pageSize = "page_size", total, items }
    private enum ItemKeys: String, CodingKey { case id, title, priceCents = "price_cents", inStock = "in_stock" }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        var itemsContainer = try container.nestedUnkeyedContainer(forKey: .items)
        var items: [BenchCatalogue.Item] = []
        while !itemsContainer.isAtEnd {
            let item = try itemsContainer.nestedContainer(keyedBy: ItemKeys.self)
            items.append(BenchCatalogue.Item(
                id: try item.decode(Int.self, forKey: .id), title: try item.decode(String.self, forKey: .title),
                priceCents: try item.decode(Int.self, forKey: .priceCents), inStock: try item.decode(Bool.self, forKey: .inStock)))
        }
        catalogue = BenchCatalogue(
            page: try container.decode(Int.self, forKey: .page), pageSize: try container.decode(Int.self, forKey: .pageSize),
            total: try container.decode(Int.self, forKey: .total), items: items)
    }
}
