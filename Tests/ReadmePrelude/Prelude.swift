// What the Swift blocks of README.md and of the DocC articles take as given. A module of its own,
// which every file scripts/extract-readme-snippets.sh writes into Tests/ReadmeSnippets/Generated/
// imports: a document may then declare a `Goods` of its own, which shadows this one.
import AIFNetworking
import Foundation

/// An article of the shop, as a user's model would be.
public struct Goods: Codable, Sendable, Hashable {
    public var id: Int
    public var title: String
    public var priceCents: Int

    public init(id: Int, title: String, priceCents: Int) {
        self.id = id
        self.title = title
        self.priceCents = priceCents
    }
}

/// A page of the listing.
public struct GoodsPage: Codable, Sendable, Hashable, Paging.PageContent {
    public var items: [Goods]
    public var total: Int
    public var pageItemCount: Int { items.count }
    public var pageTotalCount: Int? { total }

    public init(items: [Goods], total: Int) {
        self.items = items
        self.total = total
    }
}

/// A validation error of the user's.
public struct InvalidID: Error {
    public init() {}
}

/// Shows goods on screen.
public func show(_ items: [Goods]) {}

/// A private key, read from somewhere safe.
public let privateKey = "private key"

/// What a token endpoint answers, OAuth-style.
public struct TokenGrant: Codable, Sendable {
    public var accessToken: String
    public var expiresIn: Int

    public init(accessToken: String, expiresIn: Int) {
        self.accessToken = accessToken
        self.expiresIn = expiresIn
    }
}

/// An order the shop placed.
public struct PlacedOrder: Codable, Sendable {
    public var id: Int
    public var goodsId: Int
    public var quantity: Int

    public init(id: Int, goodsId: Int, quantity: Int) {
        self.id = id
        self.goodsId = goodsId
        self.quantity = quantity
    }
}

extension Endpoint where Content == PlacedOrder {
    /// `POST orders`, its JSON body given by the caller.
    public static let placeOrder = Endpoint(service: "shop", path: "orders", method: .post, headers: ["Content-Type": "application/json"])
}

/// Where an app keeps its caches.
public let cachesFolder = FileManager.default.temporaryDirectory
