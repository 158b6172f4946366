// What the Swift blocks of README.md and of the reference articles take as given. scripts/extract-readme-snippets.sh writes the
// blocks into Generated/ beside this file, so that `make test` compiles them: the README cannot
// drift from the API.
import AIFNetworking
import Foundation

/// An article of the shop, as a user's model would be.
struct Goods: Codable, Sendable, Hashable {
    var id: Int
    var title: String
    var priceCents: Int
}

/// A page of the listing.
struct GoodsPage: Codable, Sendable, Hashable, PageContent {
    var items: [Goods]
    var total: Int
    var pageItemCount: Int { items.count }
    var pageTotalCount: Int? { total }
}

/// A validation error of the user's.
struct InvalidID: Error {}

/// Shows goods on screen.
func show(_ items: [Goods]) {}

/// A private key, read from somewhere safe.
let privateKey = "private key"

/// What a token endpoint answers, OAuth-style.
struct TokenGrant: Codable, Sendable {
    var accessToken: String
    var expiresIn: Int
}

/// An order the shop placed.
struct PlacedOrder: Codable, Sendable {
    var id: Int
    var goodsId: Int
    var quantity: Int
}

extension Endpoint where Content == PlacedOrder {
    /// `POST orders`, its JSON body given by the caller.
    static let placeOrder = Endpoint(service: "shop", path: "orders", method: .post, headers: ["Content-Type": "application/json"])
}

/// Where an app keeps its caches.
let cachesFolder = FileManager.default.temporaryDirectory
