/// One article for sale.
public struct Goods: Codable, Sendable, Hashable {
    /// The identifier.
    public var id: Int
    /// The title.
    public var title: String
    /// The price in cents.
    public var priceCents: Int

    /// Creates an article.
    public init(id: Int, title: String, priceCents: Int) {
        self.id = id
        self.title = title
        self.priceCents = priceCents
    }
}

/// One page of the goods listing.
public struct GoodsPage: Codable, Sendable, Hashable {
    /// The goods on this page.
    public var items: [Goods]
    /// The 1-based page number.
    public var page: Int
    /// The page size asked for.
    public var pageSize: Int
    /// The number of goods in all.
    public var total: Int
    /// Whether pages follow this one.
    public var hasMore: Bool

    /// Creates a page.
    public init(items: [Goods], page: Int, pageSize: Int, total: Int, hasMore: Bool) {
        self.items = items
        self.page = page
        self.pageSize = pageSize
        self.total = total
        self.hasMore = hasMore
    }
}

/// An order.
public struct Order: Codable, Sendable, Hashable {
    /// The identifier.
    public var id: Int
    /// What was ordered.
    public var goodsId: Int
    /// How many.
    public var quantity: Int
    /// `placed`, or `updated` after a change.
    public var status: String

    /// Creates an order.
    public init(id: Int, goodsId: Int, quantity: Int, status: String) {
        self.id = id
        self.goodsId = goodsId
        self.quantity = quantity
        self.status = status
    }
}

/// What `flaky/{key}` answers once it lets a request through: how many requests for the key
/// it received, and the signing nonce of each (all different when every attempt was signed
/// afresh).
public struct FlakyReport: Codable, Sendable, Hashable {
    /// Requests received for the key, the successful one included.
    public var attempts: Int
    /// The `nonce` query parameter of each, in order of arrival.
    public var nonces: [String]

    /// Creates a report.
    public init(attempts: Int, nonces: [String]) {
        self.attempts = attempts
        self.nonces = nonces
    }
}

/// The body of an error answer (also the application-level error in a `200`).
public struct ShopError: Codable, Sendable, Hashable {
    /// The application code; `0` means success.
    public var code: Int
    /// What went wrong.
    public var message: String

    /// Creates an error body.
    public init(code: Int, message: String) {
        self.code = code
        self.message = message
    }
}
