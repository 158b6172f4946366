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
