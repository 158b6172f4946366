import AIFNetworkingInterfaces
import DemoServer

/// An order as the sample writes it; the shop's encoder sends `goods_id`.
struct OrderDraft: Encodable, Sendable {
    var goodsId: Int
    var quantity: Int
}

/// The shop's endpoints declared once, as an interface: `@API` generates `ShopAPIClient`, which
/// calls them through the shop service (its environment, signing, cache), and `ShopAPIMock`
/// for tests.
@API(service: .shop)
protocol ShopAPI: Sendable {
    /// One article of the catalogue, cached for a minute.
    @GET("goods/{id}", cache: .lifetime(.seconds(60)))
    func goods(id: Int) async throws(APIError) -> Goods

    /// A page of the catalogue.
    @GET("goods")
    func goods(page: Int, pageSize page_size: Int) async throws(APIError) -> GoodsPage

    /// Places an order.
    @POST("orders")
    func place(_ order: Body<OrderDraft>) async throws(APIError) -> Order

    /// Cancels an order.
    @DELETE("orders/{id}")
    func cancel(order id: Int) async throws(APIError)
}
