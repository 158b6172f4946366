@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
@_spi(CrossModule) @testable import AIFTransport
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
    var applicationErrors: ServiceVeto.Rule? { ServiceVeto.Rule() }
}

/// The same backend, told in each of the ways a service reads wrapped bodies: its rule
/// declared or applied by its own veto, error policies (so the engine judges the answer),
/// Foundation's decoder, no rule at all.
private struct WrappedShop: Service {
    enum Reading: CaseIterable { case declaredRule, ownVeto, withErrorPolicies, foundationDecoder, envelopeOnly }
    let name: ServiceName = "wrapped"
    let base: URL
    let reading: Reading
    var environments: [ServiceEnvironment.Name: ServiceEnvironment] { [.online: ServiceEnvironment(baseURL: base)] }
    var signer: (any RequestSigner)? { nil }
    var decoder: (any ContentDecoder)? {
        if reading == .foundationDecoder {
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            return decoder
        }
        return FastJSONDecoder(keyDecodingStrategy: .convertFromSnakeCase)
    }
    var envelope: ResponseEnvelope? { ResponseEnvelope(dataField: "data") }
    var applicationErrors: ServiceVeto.Rule? { reading == .envelopeOnly || reading == .ownVeto ? nil : ServiceVeto.Rule() }
    var errorPolicies: ErrorPolicies? { reading == .withErrorPolicies ? ErrorPolicies(codes: ["4002": .surface]) : nil }
    func veto(_ response: HTTPResponse) -> ServiceVeto? { reading == .ownVeto ? ServiceVeto.Rule().veto(response) : nil }
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
        let service = try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "test.json", environment: [:])
        #expect(service.envelope == ResponseEnvelope(dataField: "result.data"))
        for (bad, key) in [
            (#""envelope": {"dataField": "a..b"}"#, "envelope.dataField"), (#""envelope": {"field": "data"}"#, "envelope.field"),
            (#""envelope": {}"#, "envelope.dataField"), (#""envelope": "data""#, "envelope"),
        ] {
            let text = #"{"name": "s", "environments": {"online": {"baseURL": "https://a.test"}}, "# + bad + "}"
            let error = #expect(throws: ServiceRegistry.ConfigurationError.self) { try ServiceRegistry.ConfiguredService.parse(Data(text.utf8), file: "test.json", environment: [:]) }
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

    /// A wrapped body is parsed once for the service's rule, its envelope and the decoder —
    /// whether the engine judged it (error policies) or the manager did, and for a decoder of
    /// another kind too (which reads the content cut out of the one parse). A service that
    /// applies the rule in its own veto parses twice: the rule there cannot share.
    @Test(arguments: WrappedShop.Reading.allCases)
    fileprivate func aWrappedBodyIsParsedOnce(_ reading: WrappedShop.Reading) async throws {
        let server = try await TestServers.shared().plain
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(WrappedShop(base: server.baseURL(), reading: reading))
        let transport = makeTransport()
        defer { transport.shutdown() }
        let proxy = APIProxy(transport: transport)
        // Counts the parses of the bodies that name this test's goods, whoever else parses.
        let parses = Locked(0)
        let marker = Array(#""title": "goods 7314159""#.utf8)
        JSONTape.parseWatcher.withLock { watcher in
            watcher = { bytes in if bytes.firstRange(of: marker) != nil { parses.withLock { $0 += 1 } } }
        }
        defer { JSONTape.parseWatcher.withLock { $0 = nil } }

        let detail = APIManager<Goods>(service: "wrapped", path: "envelope/goods/{id}", proxy: proxy, registry: registry)
        #expect(try await detail.load(["id": 7_314_159]).content == Goods(id: 7_314_159, title: "goods 7314159", priceCents: 250))
        #expect(parses.withLock { $0 } == (reading == .ownVeto ? 2 : 1), "\(reading)")
    }

    /// The rule reads codes and messages as the server wrote them: numbers and strings alike,
    /// an integral number with a fraction as the integer, a `null` message as none.
    @Test func theRuleReadsCodesOfEveryShape() {
        func veto(_ body: String, _ rule: ServiceVeto.Rule = ServiceVeto.Rule()) -> ServiceVeto? {
            rule.veto(HTTPResponse(statusCode: 200, body: Data(body.utf8), url: URL(string: "https://a.test")!))
        }
        #expect(veto(#"{"code": 4001, "message": "coupon expired"}"#) == ServiceVeto(code: "4001", message: "coupon expired"))
        #expect(veto(#"{"code": "E1", "message": "café"}"#) == ServiceVeto(code: "E1", message: "café"))
        #expect(veto(#"{"code": 4001.0, "message": null}"#) == ServiceVeto(code: "4001", message: "no message"))
        #expect(veto(#"{"code": 1e3}"#) == ServiceVeto(code: "1000", message: "no message"))
        #expect(veto(#"{"code": 2.5, "message": {"text": "nested"}}"#) == ServiceVeto(code: "2.5", message: #"{"text": "nested"}"#))
        #expect(veto(#"{"code": 0, "message": "ok"}"#) == nil)
        #expect(veto(#"{"code": "0"}"#) == nil)
        #expect(veto(#"{"code": 0.0}"#) == nil)
        #expect(veto(#"{"code": null}"#) == nil)
        #expect(veto(#"{"message": "no code"}"#) == nil)
        #expect(veto(#"[{"code": 1}]"#) == nil)
        #expect(veto(#"{"code": 1, "#) == nil)
        #expect(veto(#"{"status": true, "msg": "done"}"#, ServiceVeto.Rule(codeField: "status", messageField: "msg", successCodes: ["1"])) == nil)
        #expect(
            veto(#"{"status": false, "msg": "failed"}"#, ServiceVeto.Rule(codeField: "status", messageField: "msg", successCodes: ["1"]))
                == ServiceVeto(code: "false", message: "failed"))
        #expect(ServiceVeto.Rule().veto(HTTPResponse(statusCode: 500, body: Data(#"{"code": 1}"#.utf8), url: URL(string: "https://a.test")!)) == nil)
    }
}
