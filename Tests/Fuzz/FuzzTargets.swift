@testable import AIFNetworking
@testable import AIFServices
@testable import AIFTransport
import Foundation
#if YAML
import AIFNetworkingYAML
#endif

/// The parsers `aif-fuzz` feeds with arbitrary bytes, by name. Each must end with a value or an
/// error for any input — never a crash, a hang or a sanitizer report.
enum FuzzTarget: String, CaseIterable {
    /// `FastJSONDecoder` into a few representative `Decodable` types (nesting, optionals,
    /// arrays, dictionaries, numbers of each width, dates, snake-case keys).
    case json
    /// A service's JSON config file, with `${VARIABLES}` to expand.
    case config
    /// A response's raw header block, and what is read from it: `Cache-Control`, `Retry-After`
    /// in both forms, `Date`.
    case headers
    /// A response envelope's content member, and the paging state fed the page it decodes to.
    case envelope
    /// An API define file in JSON (`*.apis.json`), with `${VARIABLES}` to expand.
    case defines
    /// An API define file in YAML (`*.apis.yaml`; with the `YAML` trait, else nothing is read).
    case yamlDefines = "yaml-defines"

    func run(_ bytes: UnsafeRawBufferPointer) {
        let data = Data(bytes)
        switch self {
        case .json: fuzzJSON(data)
        case .config: fuzzConfig(data)
        case .headers: fuzzHeaders(Array(bytes))
        case .envelope: fuzzEnvelope(data)
        case .defines: fuzzDefines(try? APIDefine.JSONFormat().read(data, file: "fuzz.apis.json"))
        case .yamlDefines:
            #if YAML
            fuzzDefines(try? YAMLDefineFormat().read(data, file: "fuzz.apis.yaml"))
            #endif
        }
    }
}

private struct Catalogue: Decodable {
    struct Item: Decodable {
        enum Kind: String, Decodable { case book, food, tool }
        var id: Int
        var title: String
        var price: Double?
        var stock: UInt8?
        var kind: Kind?
        var tags: [String]?
        var ratings: [Int32]?
        var attributes: [String: String]?
        var addedAt: Date?
        var nested: [[Int]]?
    }
    var items: [Item]
    var page: Int
    var totalCount: Int64?
    var hasMore: Bool?
    var nextCursor: String?
}

private enum Shape: Decodable {
    case number(Double), text(String), flag(Bool), list([Shape]), object([String: Shape]), none

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .none }
        else if let flag = try? container.decode(Bool.self) { self = .flag(flag) }
        else if let number = try? container.decode(Double.self) { self = .number(number) }
        else if let text = try? container.decode(String.self) { self = .text(text) }
        else if let list = try? container.decode([Shape].self) { self = .list(list) }
        else { self = .object(try container.decode([String: Shape].self)) }
    }
}

private let snakeCase = FastJSONDecoder(keyDecodingStrategy: .convertFromSnakeCase, dateDecodingStrategy: .secondsSince1970)
private let plain = FastJSONDecoder()

private func fuzzJSON(_ data: Data) {
    _ = try? snakeCase.decode(Catalogue.self, from: data)
    _ = try? plain.decode(Shape.self, from: data)
    _ = try? plain.decode([String: Int].self, from: data)
    _ = try? plain.decode([UInt64?].self, from: data)
}

private func fuzzConfig(_ data: Data) {
    let environment = ["HOST": "https://api.example", "KEY": "k", "SECRET": "s", "EMPTY": ""]
    guard let service = try? ServiceRegistry.ConfiguredService.parse(data, file: "fuzz.json", environment: environment) else { return }
    // What a registry reads of a parsed service.
    for (name, environment) in service.environments {
        _ = name.rawValue
        _ = environment.baseURL.absoluteString
    }
    _ = service.retryPolicy
    _ = service.errorPolicies
}

/// What a registry reads of a define file's defines: each is read, and what a call makes of it
/// is made (its method, path and headers as a request would carry them).
private func fuzzDefines(_ document: APIDefine.Document?) {
    guard let document else { return }
    let environment = ["HOST": "https://api.example", "KEY": "k", "EMPTY": ""]
    guard let defines = try? APIDefineFile.parse(document, file: "fuzz.apis.json", environment: environment) else { return }
    for read in defines {
        let define = read.define
        _ = (define.name, define.method.rawValue, define.path, define.summary)
        for field in define.headers { _ = (field.name, field.value) }
        _ = define.parameters.dictionary.count
    }
}

private func fuzzHeaders(_ bytes: [UInt8]) {
    let headers = HTTPHeaders(rawBlock: bytes)
    for field in headers { _ = (field.name, field.value) }
    _ = headers["Content-Type"]
    _ = headers.values(for: "Set-Cookie")
    _ = CacheControl(headers)
    let response = HTTPResponse(statusCode: 503, headers: headers, url: URL(string: "https://api.example/x")!)
    _ = RetryPolicy.serverWait(in: response, clockOffset: 0, now: Date(timeIntervalSince1970: 1_700_000_000))
    if let date = headers["Date"] { _ = ServiceRegistry.ClockSkew.parseHTTPDate(date) }
}

private struct Page: Decodable, Paging.PageContent {
    var items: [Shape]
    var total: Int?
    var hasMore: Bool?
    var next: String?
    var pageItemCount: Int { items.count }
    var pageTotalCount: Int? { total }
    var pageHasMore: Bool? { hasMore }
    var pageNextCursor: String? { next }
}

private func fuzzEnvelope(_ data: Data) {
    // The application-error rule reads the same bodies: codes and messages of any shape.
    let response = HTTPResponse(statusCode: 200, body: data, url: URL(string: "https://fuzz.test")!)
    for rule in [ServiceVeto.Rule(), ServiceVeto.Rule(codeField: "a", messageField: "b", successCodes: ["1", "x"])] {
        _ = rule.veto(response)?.description
    }
    for field in ["data", "result.page", "a.b.c"] {
        guard let content = try? ResponseEnvelope(dataField: field).content(of: data) else { continue }
        guard let page = try? plain.decode(Page.self, from: content) else { continue }
        for style in [Paging.Style.pageNumber(), .offset(), .cursor()] {
            for end in [Paging.EndOfList.shortPage, .totalCount, .hasMoreFlag, .nextCursor] {
                var state = Paging.State(style: style, pageSize: 20, pageSizeParameter: "page_size", endOfList: end)
                _ = state.startFirstPage()
                state.pageLoaded(page)
                _ = state.startNextPage()
                state.pageLoaded(page)
                _ = state.startNextPage()
            }
        }
    }
}
