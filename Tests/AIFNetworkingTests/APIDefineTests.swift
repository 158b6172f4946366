@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import DemoServer
import Foundation
import Testing

/// A define file of the demo shop, as a team would write one: a default, named defines, a group.
private let shopDefines = #"""
    {
      "DEFAULT": {"service": "shop", "headers": {"Accept": "application/json"}, "parameters": {"lang": "en"}},
      "goods.detail": {"path": "goods/{id}", "cache": {"lifetimeSeconds": 60}, "summary": "One article"},
      "goods.firstPage": {"path": "goods", "parameters": {"page_size": 5}, "response": {"dataField": "items", "shape": "list"}},
      "goods.wrongShape": {"path": "goods", "response": {"shape": "list"}},
      "@orders": {
        "DEFAULT": {"pathPrefix": "orders", "headers": {"X-Client": "defines"}, "timeoutSeconds": 20},
        "place": {"path": "", "method": "post", "retry": false, "response": {"shape": "object"}},
        "detail": {"path": "{id}", "authorization": false}
      }
    }
    """#

private func parse(_ json: String, environment: [String: String] = [:]) throws(ServiceRegistry.ConfigurationError) -> [APIDefine] {
    try APIDefineFile.parse(Data(json.utf8), file: "shop.apis.json", environment: environment).map(\.define)
}

@Suite("APIs defined by name: the file format", .timeLimit(.minutes(2)))
struct APIDefineFileTests {
    @Test func definesInheritTheirDefaultAndGroupsNameThem() throws {
        let defines = try parse(shopDefines)
        #expect(defines.map(\.name) == ["orders.detail", "orders.place", "goods.detail", "goods.firstPage", "goods.wrongShape"])
        let byName = Dictionary(uniqueKeysWithValues: defines.map { ($0.name, $0) })

        let detail = try #require(byName["goods.detail"])
        #expect(detail.service == "shop")
        #expect(detail.method == .get)
        #expect(detail.path == "goods/{id}")
        #expect(detail.placeholders == ["id"])
        #expect(detail.headers["Accept"] == "application/json")
        #expect(detail.parameters == ["lang": "en"])
        #expect(detail.needsAuthorization)
        #expect(detail.cache == APIDefine.Cache(lifetime: .seconds(60)))
        #expect(detail.summary == "One article")
        #expect(detail.group == nil, "a top-level dotted name is not in a group")
        #expect(detail.file == "shop.apis.json")

        let page = try #require(byName["goods.firstPage"])
        #expect(page.parameters == ["lang": "en", "page_size": 5])
        #expect(page.response == APIDefine.Response(dataField: "items", shape: .list))

        // The group's default over the file's: a path prefix, merged headers, a timeout.
        let place = try #require(byName["orders.place"])
        #expect(place.path == "orders")
        #expect(place.method == .post)
        #expect(place.headers["Accept"] == "application/json")
        #expect(place.headers["X-Client"] == "defines")
        #expect(place.retryPolicy == .never)
        #expect(place.timeout == .seconds(20))
        #expect(place.group == "orders")
        let order = try #require(byName["orders.detail"])
        #expect(order.path == "orders/{id}")
        #expect(!order.needsAuthorization)
        #expect(order.retryPolicy == nil)
    }

    @Test(arguments: [
        (#"{"DEFAULT": {"service": "shop"}, "a": {"path": "x", "verb": "GET"}}"#, "a.verb",
         "is not a known key; expected one of: authorization, cache, graphql, headers, method, paging, parameters, path, pathPrefix, placement, response, retry, service, summary, timeoutSeconds"),
        (#"{"a": {"service": "shop", "path": 3}}"#, "a.path", "must be a string"),
        (#"{"a": {"path": "x"}}"#, "a", "names no service: give a \"service\" here or in a DEFAULT above it"),
        (#"{"a": {"service": "shop"}}"#, "a", "has no path"),
        (#"{"a": {"service": "shop", "path": "x", "method": "G T"}}"#, "a.method", "must be a method name"),
        (#"{"a": {"service": "shop", "path": "x", "response": {"shape": "array"}}}"#, "a.response.shape", "must be one of: any, object, list"),
        (#"{"a": {"service": "shop", "path": "x", "response": {"field": "data"}}}"#, "a.response.field", "expected one of: dataField, shape"),
        (#"{"a": {"service": "shop", "path": "x", "cache": {"staleWhileRevalidateSeconds": 5}}}"#, "a.cache.lifetimeSeconds", "is missing"),
        (#"{"a": {"service": "shop", "path": "x", "cache": {"lifetimeSeconds": -1}}}"#, "a.cache.lifetimeSeconds", "must be a number of seconds"),
        (#"{"a": {"service": "shop", "path": "x", "retry": {"maxRetries": 11}}}"#, "a.retry.maxRetries", "must be a whole number from 0 to 10"),
        (#"{"a": {"service": "shop", "path": "x", "retry": {"tries": 2}}}"#, "a.retry.tries", "is not a known key"),
        (#"{"a": {"service": "shop", "path": "x", "timeoutSeconds": 0}}"#, "a.timeoutSeconds", "must be a number of seconds above 0"),
        (#"{"a": {"service": "shop", "path": "x", "authorization": "yes"}}"#, "a.authorization", "must be true or false"),
        (#"{"a": {"service": "shop", "path": "x", "headers": {"X-Key": "${NOT_SET}"}}}"#, "a.headers.X-Key",
         "refers to the environment variable NOT_SET, which is not set"),
        (#"{"a": {"service": "shop", "path": "x", "paging": {"style": "pages"}}}"#, "a.paging.style", "\"pages\" is not one of: page, offset, afterLastItem, link"),
        (#"{"a": {"service": "shop", "path": "x", "paging": {"parameter": "p"}}}"#, "a.paging.style", "is missing"),
        (#"{"a": {"service": "shop", "path": "x", "paging": {"style": "link", "parameter": "p"}}}"#, "a.paging.parameter", "has no use with the link style"),
        (#"{"a": {"service": "shop", "path": "x", "paging": {"style": "page", "first": 0}}}"#, "a.paging.first", "is not a known key; expected one of: firstPage"),
        (#"{"a": {"service": "shop", "path": "x", "placement": "query"}}"#, "a.placement", "must be an object: where each parameter goes"),
        (#"{"a": {"service": "shop", "path": "x", "placement": {"k": "cookie"}}}"#, "a.placement.k", "\"cookie\" is not one of path, query, header, body"),
        (#"{"a": {"service": "shop", "path": "x", "placement": {"k": {"in": "query", "arrays": "tabs"}}}}"#, "a.placement.k.arrays",
         "must be one of brackets, indexed, repeated, comma, pipes, spaces"),
        (#"{"DEFAULT": {"service": "shop", "placement": {"id": "path"}}, "a": {"path": "goods"}}"#, "DEFAULT.placement.id",
         "places id in the path, and the path of a (goods) has no {id}"),
        (#"{"a b": {"service": "shop", "path": "x"}}"#, "a b", "is not a define name"),
        (#"{"@g": 3}"#, "@g", "must be an object (a group of defines)"),
        (#"{"@": {}}"#, "@", "is not a group name"),
        (#"{"@g": {"DEFAULT": {"path": 1}}}"#, "@g.DEFAULT.path", "must be a string"),
        (#"{"DEFAULT": {"service": "shop"}, "g.a": {"path": "x"}, "@g": {"a": {"path": "y"}}}"#, "g.a", "defines g.a, which @g.a defines too"),
        (#"{"a": {"service": "hub", "graphql": "query { a }"}}"#, "a.graphql", "must be an object: {\"query\": DOCUMENT} or {\"mutation\": DOCUMENT}"),
        (#"{"a": {"service": "hub", "graphql": {}}}"#, "a.graphql", "has no document: give \"query\" or \"mutation\""),
        (#"{"a": {"service": "hub", "graphql": {"query": " "}}}"#, "a.graphql.query", "is empty"),
        (#"{"a": {"service": "hub", "graphql": {"query": "{ a }", "mutation": "mutation { b }"}}}"#, "a.graphql.mutation", "cannot stand beside \"query\""),
        (#"{"a": {"service": "hub", "graphql": {"query": "{ a }", "name": "A"}}}"#, "a.graphql.name",
         "is not a known key; expected one of: connectionAt, mutation, operationName, query, serverHonoursIdempotencyKeys"),
        (#"{"a": {"service": "hub", "graphql": {"mutation": "mutation { a }", "connectionAt": "a.b"}}}"#, "a.graphql.connectionAt", "is a query's"),
        (#"{"a": {"service": "hub", "graphql": {"query": "{ a }", "connectionAt": "a..b"}}}"#, "a.graphql.connectionAt", "must be fields separated by dots"),
        (#"{"a": {"service": "hub", "graphql": {"query": "{ a }", "serverHonoursIdempotencyKeys": true}}}"#, "a.graphql.serverHonoursIdempotencyKeys",
         "is a mutation's: a query needs no key"),
        (#"{"a": {"service": "hub", "method": "GET", "graphql": {"mutation": "mutation { a }"}}}"#, "a.graphql",
         "is a mutation, which is sent with POST, and a has the method GET"),
        (#"{"a": {"service": "hub", "graphql": {"query": "{ a }"}, "response": {"dataField": "data.a"}}}"#, "a.graphql", "give \"connectionAt\" inside \"graphql\""),
        (#"{"a": {"service": "hub", "graphql": {"mutation": "mutation { a }"}, "cache": {"lifetimeSeconds": 5}}}"#, "a.graphql", "whose answers are not cached"),
        (#"{"DEFAULT": {"service": "hub", "placement": {"id": "header"}}, "a": {"graphql": {"query": "{ a }"}}}"#, "DEFAULT.placement.id",
         "places id, and the parameters of a, a GraphQL operation, are its variables"),
        (#"{"DEFAULT": {"service": "hub", "graphql": {"query": "{ a }"}}, "a": {}}"#, "DEFAULT.graphql", "cannot be a DEFAULT's"),
    ])
    func eachMistakeIsNamedByItsKeyPath(json: String, key: String, problem: String) {
        #expect {
            _ = try parse(json)
        } throws: { error in
            guard let error = error as? ServiceRegistry.ConfigurationError else { return false }
            return error.file == "shop.apis.json" && error.key == key && error.problem.contains(problem)
        }
    }

    @Test func aDefineSaysHowItsListingIsPaged() throws {
        let defines = try parse(#"""
            {"customers.list": {"service": "pay", "path": "customers",
              "paging": {"style": "afterLastItem", "parameter": "starting_after", "sizeParameter": "limit", "itemsField": "data", "idField": "id"}},
             "goods.list": {"service": "shop", "path": "goods", "paging": {"style": "page", "firstPage": 0}}}
            """#)
        let byName = Dictionary(uniqueKeysWithValues: defines.map { ($0.name, $0) })
        #expect(byName["customers.list"]?.paging == PagingRule(style: .afterLastItem, parameter: "starting_after", sizeParameter: "limit", itemsField: "data"))
        #expect(byName["goods.list"]?.paging == PagingRule(style: .page, parameter: "page", firstPage: 0))
    }

    @Test func aDefineSaysWhereEachParameterGoes() throws {
        let defines = try parse(#"""
            {"DEFAULT": {"service": "pets", "placement": {"api_key": "header"}},
             "updatePetWithForm": {"path": "pet/{petId}", "method": "POST", "placement": {"name": "query", "status": "query", "petId": "path"}},
             "findByTags": {"path": "pet/findByTags", "placement": {"tags": {"in": "query", "arrays": "repeated"}, "requestID": {"in": "header", "name": "X-Request-ID"}}}}
            """#)
        let byName = Dictionary(uniqueKeysWithValues: defines.map { ($0.name, $0) })
        #expect(byName["updatePetWithForm"]?.parameterPlacements == ["api_key": .header(), "name": .query, "status": .query, "petId": .path])
        #expect(byName["findByTags"]?.parameterPlacements == [
            "api_key": .header(), "tags": .query(arrays: .repeatedKeys), "requestID": .header("X-Request-ID"),
        ])
    }

    @Test func aDefineRunsAGraphQLOperationAtTheServicesGraphQLPathWithPOST() throws {
        let defines = try parse(#"""
            {"DEFAULT": {"service": "hub"},
             "viewer": {"graphql": {"query": "query Viewer { viewer { login } }", "operationName": "Viewer"}, "cache": {"lifetimeSeconds": 30}},
             "repositories": {"method": "GET", "path": "api/graphql", "graphql": {"query": "query { viewer { repositories { nodes { name } } } }", "connectionAt": "viewer.repositories"}},
             "pay": {"graphql": {"mutation": "mutation { pay { id } }", "serverHonoursIdempotencyKeys": true}}}
            """#)
        let byName = Dictionary(uniqueKeysWithValues: defines.map { ($0.name, $0) })
        let viewer = try #require(byName["viewer"])
        #expect(viewer.path == "graphql")
        #expect(viewer.method == .post)
        #expect(viewer.graphQL == APIDefine.GraphQL(.query, document: "query Viewer { viewer { login } }", operationName: "Viewer"))
        #expect(viewer.cache?.lifetime == .seconds(30))
        let repositories = try #require(byName["repositories"])
        #expect(repositories.path == "api/graphql")
        #expect(repositories.method == .get)
        #expect(repositories.graphQL?.connectionAt == "viewer.repositories")
        #expect(byName["pay"]?.graphQL == APIDefine.GraphQL(.mutation, document: "mutation { pay { id } }", serverHonoursIdempotencyKeys: true))
        #expect(byName["pay"]?.method == .post)
    }

    @Test func eachMistakeIsLocatedAtItsKey() {
        let json = "{\n  \"DEFAULT\": {\"service\": \"shop\"},\n  \"a\": {\n    \"path\": \"x\",\n    \"verb\": \"GET\"\n  },\n  \"b\": {\"service\": 7}\n}"
        #expect {
            _ = try parse(json)
        } throws: { error in
            guard let error = error as? ServiceRegistry.ConfigurationError else { return false }
            return error.key == "a.verb" && error.line == 5 && error.column == 5 && error.description.hasPrefix("shop.apis.json:5:5: a.verb is not a known key")
        }
        // Characters, not bytes: the column after a name in Greek.
        #expect {
            _ = try parse("{\"α\": {\"service\": \"shop\", \"path\": \"x\"}, \"b\": {\"path\": 1}}")
        } throws: { error in
            guard let error = error as? ServiceRegistry.ConfigurationError else { return false }
            return error.key == "b.path" && error.line == 1 && error.column == 47
        }
    }

    @Test func aFileThatIsNotJSONIsLocated() {
        #expect {
            _ = try parse("{\n  \"a\": {\"path\": }\n}")
        } throws: { error in
            guard let error = error as? ServiceRegistry.ConfigurationError else { return false }
            return error.key == nil && error.problem.contains("is not valid JSON") && error.problem.contains("line 2, column")
        }
        #expect {
            _ = try parse("[]")
        } throws: { error in
            (error as? ServiceRegistry.ConfigurationError)?.problem == "must be an object of defines"
        }
    }

    @Test func aJSONValueIsReadByMemberAndIndex() throws {
        let value = try FastJSONDecoder().decode(JSONValue.self, from: Data(#"{"a": [1, 2.5, "x", true, null, {"b": "c"}]}"#.utf8))
        let list = try #require(value["a"]?.arrayValue)
        #expect(list.count == 6)
        #expect(value["a"]?[0]?.intValue == 1)
        #expect(value["a"]?[0]?.doubleValue == 1)
        #expect(value["a"]?[1]?.doubleValue == 2.5)
        #expect(value["a"]?[1]?.intValue == nil)
        #expect(value["a"]?[2]?.stringValue == "x")
        #expect(value["a"]?[3]?.boolValue == true)
        #expect(value["a"]?[4] == .null)
        #expect(value["a"]?[5]?["b"]?.stringValue == "c")
        #expect(value["a"]?[6] == nil)
        #expect(value["z"] == nil)
        #expect(value[0] == nil)
    }

    @Test func valuesReadTheEnvironment() throws {
        let defines = try parse(#"{"a": {"service": "${SERVICE}", "path": "x", "headers": {"X-Key": "${KEY}"}}}"#, environment: ["SERVICE": "shop", "KEY": "k1"])
        #expect(defines.first?.service == "shop")
        #expect(defines.first?.headers["X-Key"] == "k1")
    }
}

@Suite("APIs defined by name: the registry", .timeLimit(.minutes(2)))
struct APIDefineRegistryTests {
    /// A folder with the shop's service file and `files` beside it.
    private func folder(_ files: [String: String]) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appending(path: "defines-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let service = #"{"name": "shop", "environments": {"online": {"baseURL": "http://127.0.0.1:9"}}}"#
        try Data(service.utf8).write(to: folder.appending(path: "shop.json"))
        for (name, text) in files { try Data(text.utf8).write(to: folder.appending(path: name)) }
        return folder
    }

    /// A registry with the services of `configs`.
    private func servicesRegistered(from configs: URL) throws -> ServiceRegistry {
        let registry = ServiceRegistry(processEnvironment: [:])
        try registry.registerServices(inDirectory: configs, environment: [:])
        return registry
    }

    @Test func aFolderRegistersItsServicesThenItsDefines() throws {
        let configs = try folder(["shop.apis.json": shopDefines])
        defer { try? FileManager.default.removeItem(at: configs) }
        let registry = ServiceRegistry(processEnvironment: [:])
        // The services' reading skips the define files.
        #expect(try registry.registerServices(inDirectory: configs, environment: [:]) == ["shop"])
        let names = try registry.registerAPIs(inDirectory: configs, environment: [:])
        #expect(names == ["goods.detail", "goods.firstPage", "goods.wrongShape", "orders.detail", "orders.place"])
        #expect(registry.apis.map(\.name) == names)
        #expect(try registry.api(named: "orders.place").path == "orders")
        // Read again, a file replaces its own defines.
        #expect(try registry.registerAPIs(inDirectory: configs, environment: [:]).count == 5)
    }

    @Test func aDefineNamingAServiceNotRegisteredIsRefused() throws {
        let configs = try folder([
            "x.apis.json": "{\"@goods\": {\"detail\": {\"service\": \"shopp\", \"path\": \"goods/{id}\"}}}",
            "y.apis.json": "{\n  \"DEFAULT\": {\"service\": \"shap\"},\n  \"list\": {\"path\": \"goods\"}\n}",
        ])
        defer { try? FileManager.default.removeItem(at: configs) }
        let registry = try servicesRegistered(from: configs)
        let error = #expect(throws: ServiceRegistry.ConfigurationError.self) { try registry.registerAPIs(from: [configs.appending(path: "x.apis.json")], environment: [:]) }
        #expect(error?.file.hasSuffix("x.apis.json") == true)
        #expect(error?.key == "@goods.detail.service")
        #expect(error?.problem == "names the service \"shopp\" (for goods.detail), which is not registered (registered: shop); register the services before the APIs")
        #expect(error?.line == 1 && error?.column == 24, "\(String(describing: error))")
        // Named in a DEFAULT: the DEFAULT's key, where it is.
        let inherited = #expect(throws: ServiceRegistry.ConfigurationError.self) { try registry.registerAPIs(from: [configs.appending(path: "y.apis.json")], environment: [:]) }
        #expect(inherited?.key == "DEFAULT.service")
        #expect(inherited?.line == 2 && inherited?.column == 15, "\(String(describing: inherited))")
        #expect(inherited?.description.contains("y.apis.json:2:15: DEFAULT.service names the service \"shap\" (for list)") == true, "\(String(describing: inherited))")
        #expect(registry.apis.isEmpty)
    }

    @Test func aNameTwoFilesDefineIsRefusedNamingBoth() throws {
        let configs = try folder([
            "a.apis.json": #"{"goods.detail": {"service": "shop", "path": "goods/{id}"}}"#,
            "b.apis.json": #"{"@goods": {"detail": {"service": "shop", "path": "items/{id}"}}}"#,
        ])
        defer { try? FileManager.default.removeItem(at: configs) }
        let registry = try servicesRegistered(from: configs)
        #expect {
            try registry.registerAPIs(inDirectory: configs, environment: [:])
        } throws: { error in
            guard let error = error as? ServiceRegistry.ConfigurationError else { return false }
            return error.file.hasSuffix("b.apis.json") && error.key == "@goods.detail" && error.problem.contains("defines goods.detail, which ")
                && error.problem.hasSuffix("a.apis.json defines too")
        }
        // One file at a time: the second clashes with what the first registered.
        try registry.registerAPIs(from: [configs.appending(path: "a.apis.json")], environment: [:])
        #expect {
            try registry.registerAPIs(from: [configs.appending(path: "b.apis.json")], environment: [:])
        } throws: { error in
            (error as? ServiceRegistry.ConfigurationError)?.problem.hasSuffix("a.apis.json defines too") == true
        }
        #expect(try registry.api(named: "goods.detail").path == "goods/{id}")
    }

    @Test func anUnknownNameListsTheDefinedOnes() throws {
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(ConfiguredServiceStub.shop)
        try registry.register([APIDefine(name: "b", service: "shop", path: "b"), APIDefine(name: "a", service: "shop", path: "a")])
        #expect {
            _ = try registry.api(named: "c")
        } throws: { error in
            "\(error)" == "no API is defined as \"c\"; defined: a, b"
        }
    }
}

/// A registered shop service without a server, for the registry's checks.
private enum ConfiguredServiceStub {
    static let shop: ServiceRegistry.ConfiguredService = {
        let json = #"{"name": "shop", "environments": {"online": {"baseURL": "http://127.0.0.1:9"}}}"#
        return try! ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "shop.json", environment: [:])
    }()
}

@Suite("APIs defined by name: calls against the demo shop", .timeLimit(.minutes(2)))
struct DefinedAPICallTests {
    /// The shop stack with the defines of `shopDefines` registered.
    private func stack() async throws -> ShopStack {
        let stack = try await ShopStack.make()
        try stack.registry.register(try parse(shopDefines))
        return stack
    }

    private func api(_ name: String, _ stack: ShopStack) -> DefinedAPI {
        DefinedAPI(name, registry: stack.registry, proxy: stack.proxy, cache: stack.cache)
    }

    @Test func aDefineIsCalledByNameIntoATypeOrIntoJSON() async throws {
        let stack = try await stack()
        let goods = try await api("goods.detail", stack).load(["id": 42], as: Goods.self)
        #expect(goods.content.id == 42)
        #expect(goods.request.url.query?.contains("lang=en") == true)
        #expect(goods.request.headers["Accept"] == "application/json")
        let json = try await api("goods.detail", stack).load(["id": 42])
        #expect(json.content["title"]?.stringValue == goods.content.title)
        #expect(json.content["price_cents"]?.intValue == goods.content.priceCents)
        // The define's cache, under each content type (a type's shape is part of the key).
        #expect(!json.isFromCache)
        #expect(try await api("goods.detail", stack).load(["id": 42], as: Goods.self).isFromCache)
        #expect(try await api("goods.detail", stack).load(["id": 42]).isFromCache)
        #expect(stack.transport.sent == 2)
    }

    @Test func theDefinesParametersJoinTheCallsAndItsDataFieldIsTheContent() async throws {
        let stack = try await stack()
        let five = try await api("goods.firstPage", stack).load(as: [Goods].self)
        #expect(five.content.map(\.id) == [1, 2, 3, 4, 5])
        let three = try await api("goods.firstPage", stack).load(["page_size": 3, "page": 2], as: [Goods].self)
        #expect(three.content.map(\.id) == [4, 5, 6])
        let json = try await api("goods.firstPage", stack).load()
        #expect(json.content.arrayValue?.count == 5)
    }

    @Test func aPlaceholderNoParameterFillsFailsNamingTheDefine() async throws {
        let stack = try await stack()
        let error = await #expect(throws: APIError.self) { try await api("goods.detail", stack).load([:], as: Goods.self) }
        #expect(error?.kind == .invalidParameters)
        #expect(error?.message.contains("the API goods.detail (shop.apis.json) has {id} in its path goods/{id}, and no parameter fills it") == true)
        #expect(stack.transport.sent == 0)
    }

    @Test func aResponseOfAnotherShapeThanDefinedIsRefused() async throws {
        let stack = try await stack()
        let error = await #expect(throws: APIError.self) { try await api("goods.wrongShape", stack).load() }
        #expect(error?.kind == .invalidResponse)
        #expect(error?.message.contains("the API goods.wrongShape expects a list as the body, and the response has an object") == true)
    }

    @Test func anUnknownDefineFailsTheCallWithTheDefinedNames() async throws {
        let stack = try await stack()
        let error = await #expect(throws: APIError.self) { try await api("goods.detial", stack).load() }
        #expect(error?.kind == .configuration)
        #expect(error?.message.contains("no API is defined as \"goods.detial\"; defined: goods.detail, goods.firstPage") == true)
    }

    @Test func aDefinedPostSendsItsBodyThroughTheSignedPipeline() async throws {
        struct NewOrder: Encodable, Sendable {
            var goodsId: Int
            var quantity: Int
        }
        let stack = try await stack()
        let order = try await api("orders.place", stack).load(body: NewOrder(goodsId: 7, quantity: 2), as: JSONValue.self)
        #expect(order.statusCode == 201)
        #expect(order.request.method == .post)
        #expect(order.request.url.path.hasSuffix("/v1/orders"))
        #expect(order.content["goods_id"]?.intValue == 7)
        #expect(order.request.headers["X-Client"] == "defines")
    }

    @Test func theDelegateFaceRunsADefineToo() async throws {
        let stack = try await stack()
        let manager = try api("goods.detail", stack).manager(as: Goods.self)
        let delegate = HeardGoods()
        manager.delegate = delegate
        manager.callbackExecutor = .immediate
        let id = manager.loadData(with: ["id": 9])
        _ = await delegate.heard.wait(count: 1)
        #expect(delegate.heard.values == ["#\(id.rawValue) goods 9"])
    }
}

/// A delegate that writes down what it heard.
private final class HeardGoods: APIManagerDelegate {
    let heard = Collected<String>()

    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) {
        let goods = response.content as? Goods
        heard.append("#\(response.loadID.rawValue) goods \(goods?.id ?? -1)")
    }

    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) {
        heard.append("#\(error.loadID.rawValue) failed: \(error.message)")
    }
}
