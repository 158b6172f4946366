@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import AIFNetworkingYAML
import Foundation
import Testing

/// The defines of the JSON tests' shop, written in YAML.
private let shopYAML = """
    DEFAULT:
      service: shop
      headers: {Accept: application/json}
      parameters: {lang: en}
    goods.detail:
      path: goods/{id}
      cache: {lifetimeSeconds: 60}
      summary: One article
    goods.firstPage:
      path: goods
      parameters:
        page_size: 5
        tags: [new, sale]
        strict: true
        ratio: 0.5
        quoted: "20"
        none: null
      response: {dataField: items, shape: list}
    "@orders":
      DEFAULT:
        pathPrefix: orders
        timeoutSeconds: 20
      place:
        path: ""
        method: POST
        retry: false
    """

private func parseYAML(_ yaml: String) throws(ServiceRegistry.ConfigurationError) -> [APIDefine] {
    let document = try YAMLDefineFormat().read(Data(yaml.utf8), file: "shop.apis.yaml")
    return try APIDefineFile.parse(document, file: "shop.apis.yaml", environment: [:]).map(\.define)
}

@Suite("APIs defined by name: YAML files")
struct YAMLDefineTests {
    @Test func aYAMLFileDefinesWhatTheSameJSONDefines() throws {
        let defines = Dictionary(uniqueKeysWithValues: try parseYAML(shopYAML).map { ($0.name, $0) })
        #expect(defines.keys.sorted() == ["goods.detail", "goods.firstPage", "orders.place"])
        let page = try #require(defines["goods.firstPage"])
        #expect(page.parameters == ["lang": "en", "page_size": 5, "tags": ["new", "sale"], "strict": true, "ratio": 0.5, "quoted": "20", "none": .null])
        #expect(page.response == APIDefine.Response(dataField: "items", shape: .list))
        #expect(page.headers["Accept"] == "application/json")
        let place = try #require(defines["orders.place"])
        #expect(place.path == "orders")
        #expect(place.method == .post)
        #expect(place.retryPolicy == .never)
        #expect(place.timeout == .seconds(20))
        #expect(defines["goods.detail"]?.cache == APIDefine.Cache(lifetime: .seconds(60)))
    }

    @Test(arguments: [
        // An unknown key, at its own line and column.
        ("DEFAULT:\n  service: shop\ngoods.detail:\n  path: goods/{id}\n  verb: GET\n", "goods.detail.verb", 5, 3, "is not a known key"),
        // A value of the wrong type: the place of its key.
        ("goods.detail:\n  service: shop\n  path: [goods]\n", "goods.detail.path", 3, 3, "must be a string"),
        // A define with no service: the place of the define.
        ("x: 1\ngoods.detail:\n  path: goods\n", "goods.detail", 2, 1, "names no service"),
        // Inside a group, a retry value out of range.
        ("\"@orders\":\n  place:\n    service: shop\n    path: \"\"\n    retry: {maxRetries: 40}\n", "@orders.place.retry.maxRetries", 5, 13, "must be a whole number from 0 to 10"),
    ])
    func eachMistakeIsNamedByItsKeyPathLineAndColumn(yaml: String, key: String, line: Int, column: Int, problem: String) {
        #expect {
            _ = try parseYAML(yaml)
        } throws: { error in
            guard let error = error as? ServiceRegistry.ConfigurationError else { return false }
            return error.key == key && error.line == line && error.column == column && error.problem.contains(problem)
                && error.description.hasPrefix("shop.apis.yaml:\(line):\(column): \(key) ")
        }
    }

    @Test func scalarsAreTypedAsTheCoreSchemaSays() throws {
        let defines = try parseYAML("""
            a:
              service: shop
              path: x
              parameters: {yes: yes, no: "no", hex: 0x1F, octal: 0o17, tilde: ~, tagged: !!int "7", quoted: "true", half: .5, text: 12abc}
            """)
        #expect(defines.first?.parameters == [
            "yes": "yes", "no": "no", "hex": 31, "octal": 15, "tilde": .null, "tagged": 7, "quoted": "true", "half": 0.5, "text": "12abc",
        ])
    }

    @Test func aKeyGivenTwiceIsLocated() {
        #expect {
            _ = try parseYAML("goods.detail:\n  service: shop\n  path: a\n  path: b\n")
        } throws: { error in
            guard let error = error as? ServiceRegistry.ConfigurationError else { return false }
            return error.key == nil && error.problem == "gives \"path\" twice in one mapping" && error.line == 3 && error.column == 3
                && error.description == "shop.apis.yaml:3:3: gives \"path\" twice in one mapping"
        }
    }

    @Test func invalidYAMLIsLocated() {
        #expect {
            _ = try parseYAML("goods.detail:\n  path: [goods\n  service: shop\n")
        } throws: { error in
            guard let error = error as? ServiceRegistry.ConfigurationError else { return false }
            return error.key == nil && error.problem.hasPrefix("is not valid YAML: ") && error.line != nil && error.column != nil
        }
    }

    @Test func aFolderMixesJSONAndYAMLDefinesAndAYAMLFileIsNeverSkipped() throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "yaml-defines-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(#"{"name": "shop", "environments": {"online": {"baseURL": "http://127.0.0.1:9"}}}"#.utf8).write(to: folder.appending(path: "shop.json"))
        try Data(shopYAML.utf8).write(to: folder.appending(path: "shop.apis.yaml"))
        try Data(#"{"goods.list": {"service": "shop", "path": "goods"}}"#.utf8).write(to: folder.appending(path: "more.apis.json"))
        let registry = ServiceRegistry(processEnvironment: [:])
        try registry.registerServices(inDirectory: folder, environment: [:])
        // Without the YAML format, the YAML file is an error that says what to do.
        #expect {
            try registry.registerAPIs(inDirectory: folder, environment: [:])
        } throws: { error in
            guard let error = error as? ServiceRegistry.ConfigurationError else { return false }
            return error.file.hasSuffix("shop.apis.yaml") && error.problem.contains("YAML defines need the YAML trait: pass formats: [YAMLDefineFormat()]")
        }
        #expect(registry.apis.isEmpty)
        let names = try registry.registerAPIs(inDirectory: folder, environment: [:], formats: [YAMLDefineFormat()])
        #expect(names == ["goods.detail", "goods.firstPage", "goods.list", "orders.place"])
    }
}
