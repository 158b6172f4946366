import AIFNetworking
import DemoServer
import Foundation

// Every manager below restates `@unchecked Sendable`: Swift requires a subclass to restate the
// unchecked conformance it inherits from `APIManager`. It is safe because these subclasses add
// no stored state; their overrides return constants.

/// The service every manager here calls; defined in `Configs/shop.json`.
extension ServiceName {
    static let shop: ServiceName = "shop"
}

/// The shop's environment answered from fixtures; defined in `Configs/shop.json`.
extension ServiceEnvironment.Name {
    static let mock: ServiceEnvironment.Name = "mock"
}

/// The listing pages say how many goods there are in all, so the last page is known exactly.
extension GoodsPage: Paging.PageContent {
    public var pageItemCount: Int { items.count }
    public var pageTotalCount: Int? { total }
    public var pageHasMore: Bool? { hasMore }
}

/// `GET goods?page=&page_size=`, 50 to a page.
final class GoodsListManager: PagedAPIManager<GoodsPage>, @unchecked Sendable {
    // @unchecked is safe: no stored state added (see the note at the top of the file).
    override var serviceName: ServiceName { .shop }
    override var path: String { "goods" }
    override var pageSize: Int { 50 }
    override var endOfList: Paging.EndOfList { .totalCount }
}

/// `GET goods/{id}`, cached for a minute; the id must be positive.
final class GoodsDetailManager: APIManager<Goods>, @unchecked Sendable {
    // @unchecked is safe: no stored state added (see the note at the top of the file).
    convenience init() {
        self.init(Endpoint(service: .shop, path: "goods/{id}", cachePolicy: .lifetime(.seconds(60))))
        plugins = [PositiveID()]
    }
}

/// Refuses a load whose `id` is not a positive integer: nothing is sent.
struct PositiveID: LoadPlugin {
    func loadWillStart(_ load: ObservedLoad, parameters: Parameters) throws {
        guard case .integer(let id)? = parameters["id"], id > 0 else { throw SampleError("\"id\" must be a positive integer") }
    }
}

/// `POST orders` with a JSON body; the manager renames the caller's `goods` to the API's `goods_id`.
final class CreateOrderManager: APIManager<Order>, @unchecked Sendable {
    // @unchecked is safe: no stored state added (see the note at the top of the file).
    override var serviceName: ServiceName { .shop }
    override var path: String { "orders" }
    override var requestMethod: HTTPMethod { .post }

    convenience init() {
        self.init(service: .shop)
        plugins = [NewOrderIsPlaced()]
    }

    override func reformParameters(_ parameters: Parameters) -> Parameters {
        var reformed = parameters
        reformed["goods_id"] = reformed.removeValue(forKey: "goods")
        return reformed
    }
}

/// Rejects a new order's response unless the order is placed (the load then fails, nothing cached).
struct NewOrderIsPlaced: LoadPlugin {
    func loadDidReceive<Content>(_ response: APIResponse<Content>, of load: ObservedLoad) throws {
        guard let order = response.content as? Order else { return }
        guard order.status == "placed" else { throw SampleError("a new order should be placed, not \(order.status)") }
    }
}

/// `PUT orders/{id}`.
final class UpdateOrderManager: APIManager<Order>, @unchecked Sendable {
    // @unchecked is safe: no stored state added (see the note at the top of the file).
    override var serviceName: ServiceName { .shop }
    override var path: String { "orders/{id}" }
    override var requestMethod: HTTPMethod { .put }
}

/// `DELETE orders/{id}`, answered with 204 and no body.
final class DeleteOrderManager: APIManager<NoContent>, @unchecked Sendable {
    // @unchecked is safe: no stored state added (see the note at the top of the file).
    override var serviceName: ServiceName { .shop }
    override var path: String { "orders/{id}" }
    override var requestMethod: HTTPMethod { .delete }
}

/// `GET slow?ms=`: takes as long as asked.
final class SlowManager: APIManager<Slept>, @unchecked Sendable {
    // @unchecked is safe: no stored state added (see the note at the top of the file).
    override var serviceName: ServiceName { .shop }
    override var path: String { "slow" }
}

/// The slow endpoint's answer.
struct Slept: Decodable, Sendable {
    var sleptMs: Int
}

/// `GET coupons/{code}`: answers 200 even for an expired coupon, with an error code in the
/// body that the service's `applicationErrors` rule turns into a veto.
final class CouponManager: APIManager<Coupon>, @unchecked Sendable {
    // @unchecked is safe: no stored state added (see the note at the top of the file).
    override var serviceName: ServiceName { .shop }
    override var path: String { "coupons/{code}" }
}

/// A valid coupon.
struct Coupon: Decodable, Sendable {
    var coupon: String
    var discountPercent: Int
}

/// A validation message.
struct SampleError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Shows an article as one line of a catalogue: title and price in euros.
struct GoodsCardReformer: DataReformer {
    func reform(_ response: APIResponse<Goods>) -> String {
        let goods = response.content
        let price = "€\(goods.priceCents / 100).\(String(format: "%02d", goods.priceCents % 100))"
        return "[\(goods.id)] \(goods.title) — \(price)" + (response.isFromCache ? " (from cache)" : "")
    }

    func reform(failure: APIError) -> String? {
        "unavailable: \(failure.message)"
    }
}
