import AIFNetworking
import AIFNetworkingOpenAPI
import AIFNetworkingTesting
import DemoServer
import Foundation
import OpenAPIRuntime

/// The OpenAPI sample: the demo shop described by an OpenAPI 3.1 document
/// (`Samples/OpenAPISample/openapi.yaml`), a client swift-openapi-generator wrote from it, and
/// that client on this library's two OpenAPI transports — through the registered `shop` service
/// (signed, retried, observed as any load of it), and on libcurl alone against a shop that
/// checks no signature.
@main
struct OpenAPISample {
    static func main() async throws {
        let signed = try await DemoShopServer.start(environment: .online)
        let unsigned = try await DemoShopServer.start(environment: .online, verifiesSignatures: false)
        try register(onlineURL: signed.baseURL())
        print("Demo shop at \(signed.baseURL()) (signed) and \(unsigned.baseURL()) (unsigned)\n")

        try await throughTheService()
        try await onLibcurlAlone(unsigned.baseURL().appending(path: "v1"))
        await signed.stop()
        await unsigned.stop()
    }

    /// The generated client through the `shop` service: the environment's base URL, signing,
    /// retries; a documented 404 decoded as the document says.
    static func throughTheService() async throws {
        print("— The generated client through the shop service")
        let client = Client(serverURL: try Servers.Server1.url(), transport: ServiceClientTransport(service: "shop"))

        let page = try await client.listGoods(query: .init(page: 2, pageSize: 3)).ok.body.json
        print("page \(page.page): \(page.items.map(\.title).joined(separator: ", ")) (of \(page.total))")

        let goods = try await client.getGoods(path: .init(id: 42)).ok.body.json
        print("goods 42: \(goods.title), \(goods.priceCents) cents")

        switch try await client.getGoods(path: .init(id: 99_999)) {
        case .notFound(let notFound): print("goods 99999: 404, the shop says \"\(try notFound.body.json.message)\"")
        default: throw SampleFailure("goods 99999 should be a 404")
        }

        let order = try await client.placeOrder(body: .json(.init(goodsId: 42, quantity: 2))).created.body.json
        let changed = try await client.changeOrder(path: .init(id: order.id), body: .json(.init(quantity: 5))).ok.body.json
        guard case .noContent = try await client.cancelOrder(path: .init(id: order.id)) else { throw SampleFailure("the order should be cancelled") }
        print("order \(order.id): placed for \(order.quantity), changed to \(changed.quantity) (\(changed.status)), cancelled")

        // The export (about 3 MiB) read as it arrives, never whole in memory.
        let export = try await client.exportCatalogue(path: .init(name: .catalogue_csv)).ok.body.csv
        var bytes = 0
        var lines = 0
        for try await chunk in export {
            bytes += chunk.count
            lines += chunk.reduce(0) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
        }
        print("catalogue.csv: \(bytes) bytes, \(lines) lines, read as they came\n")
    }

    /// The same client on libcurl alone: no service, the document's paths under a server URL.
    static func onLibcurlAlone(_ serverURL: URL) async throws {
        print("— The generated client on libcurl alone")
        let client = Client(serverURL: serverURL, transport: CurlClientTransport(operationTimeouts: ["exportCatalogue": HTTPRequest.Timeouts(total: .seconds(120))]))
        let goods = try await client.getGoods(path: .init(id: 7)).ok.body.json
        print("goods 7: \(goods.title)")
        do {
            _ = try await CurlClientTransport.withTimeouts(HTTPRequest.Timeouts(total: .milliseconds(300))) {
                try await client.sleep(query: .init(ms: 2_000))
            }
            throw SampleFailure("a 300 ms total timeout should have run out")
        } catch let error as ClientError {
            guard let transport = error.underlyingError as? TransportError, transport.code == .totalTimeout else { throw error }
            print("sleep 2 s with a call's own 300 ms timeout: \(transport.code)")
        }
    }

    /// Registers the `shop` service from `Configs/shop.json`, its online environment at the
    /// demo shop started here.
    static func register(onlineURL: URL) throws {
        let configs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appending(path: "Configs")
        let variables = [
            "SHOP_ONLINE_URL": onlineURL.absoluteString, "SHOP_OFFLINE_URL": onlineURL.absoluteString,
            "SHOP_PUBLIC_KEY": ShopRoutes.publicKey, "SHOP_PRIVATE_KEY": ShopRoutes.privateKey,
        ]
        ServiceRegistry.shared.register(try ServiceRegistry.ConfiguredService.load(from: configs.appending(path: "shop.json"), environment: variables))
    }
}

/// A step of the sample that did not go as it should.
struct SampleFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
