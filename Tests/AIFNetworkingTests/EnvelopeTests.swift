@testable import AIFNetworking
import AIFNetworkingTesting
import DemoServer
import Foundation
import Testing

/// A backend that wraps every body in `{"code", "message", "data"}`.
private struct EnvelopedShop: Service {
    let name: ServiceName = "enveloped"
    let base: URL
    var environments: [ServiceEnvironment.Name: ServiceEnvironment] { [.online: ServiceEnvironment(baseURL: base)] }
    var signer: (any RequestSigner)? { nil }
    var decoder: (any ContentDecoder)? { FastJSONDecoder(keyDecodingStrategy: .convertFromSnakeCase) }
    var envelope: ResponseEnvelope? { ResponseEnvelope(dataField: "data") }
    func veto(_ response: HTTPResponse) -> ServiceVeto? { ApplicationErrorRule().veto(response) }
}

private final class EnvelopedList: PagedAPIManager<GoodsPage>, @unchecked Sendable {
    // Restated as Swift requires of subclasses; it adds no stored state.
    override var pageSize: Int { 20 }
    override var endOfList: Paging.EndOfList { .hasMoreFlag }
}

@Suite("Envelopes: managers decode the content inside a wrapped body")
struct EnvelopeTests {
    private static func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    @Test func theContentIsCutOutOfTheBody() throws {
        let body = Data(#"{"code": 0, "data": {"id": 1, "name": "a\"b"}, "tail": [1]}"#.utf8)
        #expect(Self.text(try ResponseEnvelope(dataField: "data").content(of: body)) == #"{"id": 1, "name": "a\"b"}"#)
        let nested = Data(#"{"result": {"da\u0074a": "text \"quoted\"", "n": -1.5e3}}"#.utf8)
        #expect(Self.text(try ResponseEnvelope(dataField: "result.data").content(of: nested)) == #""text \"quoted\"""#)
        #expect(Self.text(try ResponseEnvelope(dataField: "result.n").content(of: nested)) == "-1.5e3")
        #expect(Self.text(try ResponseEnvelope(dataField: "data").content(of: Data(#"{"data": null}"#.utf8))) == "null")
    }

    @Test func aMissingFieldIsNamed() {
        let missing = #expect(throws: DecodingError.self) {
            try ResponseEnvelope(dataField: "result.data").content(of: Data(#"{"result": {"other": 1}}"#.utf8))
        }
        #expect(String(describing: missing).contains("result.data"))
        let notObject = #expect(throws: DecodingError.self) {
            try ResponseEnvelope(dataField: "result.data").content(of: Data(#"{"result": [1]}"#.utf8))
        }
        #expect(String(describing: notObject).contains("not an object"))
        #expect(throws: DecodingError.self) { try ResponseEnvelope(dataField: "data").content(of: Data("not json".utf8)) }
    }

    @Test func aConfigFileNamesTheDataField() throws {
        let json = #"{"name": "s", "environments": {"online": {"baseURL": "https://a.test"}}, "envelope": {"dataField": "result.data"}}"#
        let service = try ConfiguredService.parse(Data(json.utf8), file: "test.json", environment: [:])
        #expect(service.envelope == ResponseEnvelope(dataField: "result.data"))
        for (bad, key) in [
            (#""envelope": {"dataField": "a..b"}"#, "envelope.dataField"), (#""envelope": {"field": "data"}"#, "envelope.field"),
            (#""envelope": {}"#, "envelope.dataField"), (#""envelope": "data""#, "envelope"),
        ] {
            let text = #"{"name": "s", "environments": {"online": {"baseURL": "https://a.test"}}, "# + bad + "}"
            let error = #expect(throws: ConfigurationError.self) { try ConfiguredService.parse(Data(text.utf8), file: "test.json", environment: [:]) }
            #expect(error?.key == key, "\(bad): \(String(describing: error))")
        }
    }

    /// Against a real server: the content decodes as `Goods`, an error code in the envelope is
    /// still the service's veto, and paging reads the inner page's `has_more`.
    @Test func managersDecodeAndPageInsideTheEnvelope() async throws {
        let server = try await TestServers.shared().plain
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(EnvelopedShop(base: server.baseURL()))
        let transport = makeTransport()
        defer { transport.shutdown() }
        let proxy = APIProxy(transport: transport)
        let detail = APIManager<Goods>(service: "enveloped", path: "envelope/goods/{id}", proxy: proxy, registry: registry)
        let goods = try await detail.load(["id": 7]).content
        #expect(goods == Goods(id: 7, title: "goods 7", priceCents: 250))

        let expired = APIManager<NoContent>(service: "enveloped", path: "envelope/expired", proxy: proxy, registry: registry)
        let error = await #expect(throws: APIError.self) { try await expired.load() }
        #expect(error?.kind == .serviceVeto)
        #expect(error?.serviceVeto == ServiceVeto(code: "4001", message: "coupon expired"))

        let list = EnvelopedList(service: "enveloped", path: "envelope/goods", proxy: proxy, registry: registry)
        var ids: [Int] = []
        for try await page in list.pages() { ids += page.content.items.map(\.id) }
        #expect(ids == Array(1...45))
    }
}
