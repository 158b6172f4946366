@testable import TestSupport
import AIFNetworking
import AIFNetworkingTesting
import DemoServer
import Foundation
import Testing

/// `aif import openapi`, run as a program: the demo shop's document made into defines that then
/// call the demo shop, and a document full of what defines cannot hold.
@Suite("aif import openapi")
struct AifImportTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A fresh folder, removed by the caller.
    func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appending(path: "aif-import-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func theShopsDocumentBecomesDefinesThatCallTheShop() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appending(path: "shop.apis.json").path
        let run = try await Shell.run(AifCommandTests.aifPath, [
            "import", "openapi", Self.repository.appending(path: "Samples/OpenAPISample/openapi.yaml").path, "--service", "shop", "--output", output,
        ])
        #expect(run.status == 0, "\(run.standardOutput)\n\(run.standardError)")
        #expect(run.standardOutput.contains("Wrote 8 defines of service \"shop\" to \(output)."))
        #expect(run.standardOutput.contains("Note: the document's server is http://127.0.0.1:8080/v1"))
        #expect(run.standardOutput.contains("paths./exports/{name}.get.responses.200: answers text/csv: a define decodes JSON"))
        let defines = Dictionary(uniqueKeysWithValues: try APIDefine.defines(in: URL(fileURLWithPath: output)).map { ($0.name, $0) })
        #expect(defines.keys.sorted() == ["cancelOrder", "changeOrder", "exportCatalogue", "getGoods", "getOrder", "listGoods", "placeOrder", "sleep"])
        #expect(defines["getGoods"]?.path == "goods/{id}")
        #expect(defines["getGoods"]?.method == .get)
        #expect(defines["getGoods"]?.headers["Accept"] == "application/json")
        #expect(defines["placeOrder"]?.method == .post)
        #expect(defines["cancelOrder"]?.method == .delete)
        #expect(defines["listGoods"]?.summary == "One page of the goods. (page, page_size)")
        #expect(defines["getGoods"]?.service == "shop")

        // The defines call the demo shop, signed by the shop's service.
        try FileManager.default.copyItem(at: ShopServers.configs.appending(path: "shop.json"), to: folder.appending(path: "shop.json"))
        let servers = try await ShopServers.shared()
        let call = try await Shell.run(AifCommandTests.aifPath, ["api", "getGoods", "id=42", "--config", folder.path], environment: [
            "SHOP_ONLINE_URL": servers.online.baseURL().absoluteString, "SHOP_OFFLINE_URL": servers.offline.baseURL().absoluteString,
            "SHOP_PUBLIC_KEY": ShopRoutes.publicKey, "SHOP_PRIVATE_KEY": ShopRoutes.privateKey,
        ])
        #expect(call.status == 0, "\(call.standardOutput)\n\(call.standardError)")
        #expect(call.standardOutput.contains("Milk frother no. 6"))
    }

    @Test func whatDefinesCannotHoldIsListedWhereItIs() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let document = folder.appending(path: "odd.yaml")
        try Data("""
            openapi: 3.0.3
            info: { title: Odd, version: "1" }
            servers:
              - url: https://{region}.api.example/v2
                variables: { region: { default: eu } }
              - url: https://backup.api.example/v2
            security: [{ token: [] }]
            paths:
              /files:
                post:
                  operationId: uploadFile
                  parameters:
                    - { name: session, in: cookie, schema: { type: string } }
                    - { name: filter, in: query, style: deepObject, schema: { type: object } }
                    - { name: X-Client, in: header, schema: { type: string, enum: [odd-cli] } }
                  requestBody:
                    content:
                      multipart/form-data: { schema: { type: object } }
                  callbacks:
                    done: { "{$request.body#/callback}": { post: { responses: { "200": { description: ok } } } } }
                  responses:
                    "201": { description: stored }
              /files/{id}:
                get:
                  security: []
                  parameters:
                    - { name: id, in: path, required: true, schema: { type: string } }
                    - $ref: "common.yaml#/components/parameters/Page"
                  responses:
                    "200":
                      description: the files
                      content:
                        application/json: { schema: { type: array, items: { type: string } } }
                  deprecated: true
            webhooks:
              fileChanged: { post: { responses: { "200": { description: ok } } } }
            """.utf8).write(to: document)
        let output = folder.appending(path: "odd.apis.json").path
        let run = try await Shell.run(AifCommandTests.aifPath, ["import", "openapi", document.path, "--service", "odd", "--output", output])
        #expect(run.status == 0, "\(run.standardOutput)\n\(run.standardError)")
        for line in [
            "  webhooks: webhooks are requests the server sends; defines describe requests to it",
            "  servers: 2 servers: one service environment each, in the service's config",
            "  servers[0].variables: server variables: write the URL into the environment, or read it with ${NAME}",
            "  paths./files.post.parameters.session: a cookie parameter: defines send path, query and header parameters",
            "  paths./files.post.requestBody: a body of multipart/form-data: defines send parameters as JSON or a form (send others with a manager's upload)",
            "  paths./files.post.callbacks: callbacks are requests the server sends",
            "  paths./files/{id}.get: has no operationId: defined as \"get.files.id\"",
            "  paths./files/{id}.get.parameters[1]: the reference common.yaml#/components/parameters/Page is not to this document's components",
            "  paths./files/{id}.get: deprecated: defined all the same",
        ] {
            #expect(run.standardOutput.contains(line), "\(line)\nin\n\(run.standardOutput)")
        }
        let defines = Dictionary(uniqueKeysWithValues: try APIDefine.defines(in: URL(fileURLWithPath: output)).map { ($0.name, $0) })
        #expect(defines["uploadFile"]?.method == .post)
        #expect(defines["uploadFile"]?.headers["X-Client"] == "odd-cli")
        #expect(defines["uploadFile"]?.needsAuthorization == true)
        #expect(defines["uploadFile"]?.summary == "(filter)")
        #expect(defines["uploadFile"]?.parameterPlacements == ["filter": .query], "a query parameter of a POST goes in the query")
        #expect(defines["get.files.id"]?.needsAuthorization == false)
        #expect(defines["get.files.id"]?.response.shape == .list)
    }

    /// Every parameter location and style of OpenAPI 3.1 ("Style Examples"): imported, each
    /// operation called with `aif api`, and each request checked as the server received it
    /// against the specification's serialization — or listed as what a define cannot send.
    @Test func eachLocationAndStyleGoesOnTheWireAsTheDocumentSays() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let document = folder.appending(path: "styles.yaml")
        try Data("""
            openapi: 3.1.0
            info: { title: Styles, version: "1" }
            paths:
              /pet/findByTags:
                get:
                  operationId: findPetsByTags
                  parameters:
                    - { name: tags, in: query, schema: { type: array, items: { type: string } } }
                  responses: { "200": { description: ok } }
              /colors/form:
                get:
                  operationId: formNoExplode
                  parameters:
                    - { name: color, in: query, explode: false, schema: { type: array, items: { type: string } } }
                  responses: { "200": { description: ok } }
              /colors/spaces:
                get:
                  operationId: spaceDelimited
                  parameters:
                    - { name: color, in: query, style: spaceDelimited, schema: { type: array, items: { type: string } } }
                  responses: { "200": { description: ok } }
              /colors/pipes:
                get:
                  operationId: pipeDelimited
                  parameters:
                    - { name: color, in: query, style: pipeDelimited, explode: false, schema: { type: array, items: { type: string } } }
                  responses: { "200": { description: ok } }
              /colors/deep:
                get:
                  operationId: deepObject
                  parameters:
                    - { name: color, in: query, style: deepObject, explode: true, schema: { type: object } }
                  responses: { "200": { description: ok } }
              /pet/{petId}:
                parameters:
                  - { name: petId, in: path, required: true, schema: { type: integer } }
                post:
                  operationId: updatePetWithForm
                  parameters:
                    - { name: name, in: query, schema: { type: string } }
                    - { name: status, in: query, schema: { type: string } }
                  responses: { "200": { description: ok } }
                delete:
                  operationId: deletePet
                  security: []
                  parameters:
                    - { name: api_key, in: header, schema: { type: string } }
                  responses: { "200": { description: ok } }
              /pets/{ids}:
                get:
                  operationId: petsByIds
                  parameters:
                    - { name: ids, in: path, required: true, schema: { type: array, items: { type: integer } } }
                    - { name: X-Colors, in: header, schema: { type: array, items: { type: string } } }
                  responses: { "200": { description: ok } }
              /pet:
                put:
                  operationId: updatePet
                  parameters:
                    - { name: dryRun, in: query, schema: { type: boolean } }
                  requestBody:
                    content:
                      application/json: { schema: { type: object, properties: { name: { type: string } } } }
                  responses: { "200": { description: ok } }
              /odd/{label}/{matrix}:
                get:
                  operationId: oddStyles
                  parameters:
                    - { name: label, in: path, required: true, style: label, schema: { type: string } }
                    - { name: matrix, in: path, required: true, style: matrix, schema: { type: string } }
                    - { name: point, in: query, schema: { type: object } }
                    - { name: box, in: query, explode: false, schema: { type: object } }
                    - { name: X-Point, in: header, schema: { type: object } }
                    - { name: session, in: cookie, schema: { type: string } }
                    - { name: where, in: query, content: { application/json: { schema: { type: object } } } }
                  responses: { "200": { description: ok } }
            """.utf8).write(to: document)
        let output = folder.appending(path: "styles.apis.json").path
        let run = try await Shell.run(AifCommandTests.aifPath, ["import", "openapi", document.path, "--service", "styles", "--output", output])
        #expect(run.status == 0, "\(run.standardOutput)\n\(run.standardError)")
        // What a define cannot send as the document says is listed, parameter by parameter.
        let odd = "  paths./odd/{label}/{matrix}.get.parameters."
        for line in [
            odd + "label: style label without explode: defines fill a path placeholder in the simple style (a list as a,b,c)",
            odd + "matrix: style matrix without explode: defines fill a path placeholder in the simple style (a list as a,b,c)",
            odd + "point: an object in style form with explode: defines send a query object as name[key]=value (deepObject)",
            odd + "box: an object in style form without explode: defines send a query object as name[key]=value (deepObject)",
            odd + "X-Point: an object in a header: defines send a header's value as text or a list (a,b,c)",
            odd + "session: a cookie parameter: defines send path, query and header parameters",
            odd + "where: content (a parameter serialized as a media type): sent as its value's text",
        ] {
            #expect(run.standardOutput.contains(line), "\(line)\nin\n\(run.standardOutput)")
        }
        #expect(!run.standardOutput.contains("findPetsByTags") && !run.standardOutput.contains("/pet/{petId}"), "\(run.standardOutput)")
        let defines = Dictionary(uniqueKeysWithValues: try APIDefine.defines(in: URL(fileURLWithPath: output)).map { ($0.name, $0) })
        #expect(defines["deletePet"]?.needsAuthorization == false)
        #expect(defines["updatePetWithForm"]?.needsAuthorization == true)

        // Each operation called, and its request compared with the specification's.
        try Data(#"{"name": "styles", "signing": {"scheme": "none"}, "environments": {"online": {"baseURL": "${STYLES_URL}", "apiVersion": "v1"}}}"#.utf8)
            .write(to: folder.appending(path: "styles.json"))
        let mirror = try await RequestMirror.start()
        func call(_ arguments: [String]) async throws -> RequestMirror.Mirrored? {
            let before = mirror.requests.count
            let run = try await Shell.run(
                AifCommandTests.aifPath, ["api"] + arguments + ["--config", folder.path], environment: ["STYLES_URL": mirror.server.baseURL().absoluteString])
            #expect(run.status == 0, "\(arguments): \(run.standardError)")
            return mirror.requests.count == before + 1 ? mirror.requests.last : nil
        }
        /// The query as name=value pairs, percent-decoded: as the table writes them.
        func decoded(_ query: String) -> String {
            query.split(separator: "&").map { pair in
                pair.split(separator: "=", omittingEmptySubsequences: false).map { String($0).removingPercentEncoding ?? "?" }.joined(separator: "=")
            }.joined(separator: "&")
        }
        let colors = ["color=blue", "color=black", "color=brown"]

        let tags = try #require(try await call(["findPetsByTags", "tags=a", "tags=b"]))
        #expect(tags.query == "tags=a&tags=b")
        #expect(decoded(try #require(try await call(["formNoExplode"] + colors)).query) == "color=blue,black,brown")
        #expect(decoded(try #require(try await call(["spaceDelimited"] + colors)).query) == "color=blue black brown")
        #expect(decoded(try #require(try await call(["pipeDelimited"] + colors)).query) == "color=blue|black|brown")
        let deep = try #require(try await call(["deepObject", "--json", #"{"color": {"R": 100, "G": 200, "B": 150}}"#]))
        #expect(decoded(deep.query) == "color[B]=150&color[G]=200&color[R]=100")

        let update = try #require(try await call(["updatePetWithForm", "petId=7", "name=Rex", "status=sold"]))
        #expect(update.method == "POST" && update.path == "/v1/pet/7")
        #expect(update.query == "name=Rex&status=sold")
        #expect(update.body.isEmpty && update.headers["content-type"] == nil)

        let delete = try #require(try await call(["deletePet", "petId=7", "api_key=k-1"]))
        #expect(delete.method == "DELETE" && delete.query.isEmpty)
        #expect(delete.headers["api_key"] == "k-1")

        let byIDs = try #require(try await call(["petsByIds", "ids=3", "ids=4", "ids=5", "X-Colors=blue", "X-Colors=black"]))
        #expect(byIDs.path == "/v1/pets/3,4,5")
        #expect(byIDs.headers["x-colors"] == "blue,black")
        #expect(byIDs.query.isEmpty)

        let put = try #require(try await call(["updatePet", "dryRun=true", "name=Rex"]))
        #expect(put.method == "PUT" && put.query == "dryRun=true")
        #expect(put.body == #"{"name":"Rex"}"#)
        await mirror.stop()
    }

    @Test func whatIsNotAnOpenAPIDocumentIsRefused() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let swagger = folder.appending(path: "old.json")
        try Data(#"{"swagger": "2.0", "paths": {}}"#.utf8).write(to: swagger)
        let run = try await Shell.run(AifCommandTests.aifPath, ["import", "openapi", swagger.path, "--service", "old", "--output", folder.appending(path: "old.apis.json").path])
        #expect(run.status == 2)
        #expect(run.standardError.contains("has no \"openapi\": \"3.x\" version (a Swagger 2.0 document: convert it to OpenAPI 3 first)"))

        let broken = folder.appending(path: "broken.yaml")
        try Data("openapi: 3.1.0\npaths: [\n".utf8).write(to: broken)
        let syntax = try await Shell.run(AifCommandTests.aifPath, ["import", "openapi", broken.path, "--service", "x", "--output", folder.appending(path: "x.apis.json").path])
        #expect(syntax.status == 2)
        #expect(syntax.standardError.contains(broken.path))
    }

    @Test func anExistingFileIsReplacedOnlyWhenAsked() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appending(path: "shop.apis.json")
        try Data("{}".utf8).write(to: output)
        let document = Self.repository.appending(path: "Samples/OpenAPISample/openapi.yaml").path
        let refused = try await Shell.run(AifCommandTests.aifPath, ["import", "openapi", document, "--service", "shop", "--output", output.path])
        #expect(refused.status == 2)
        #expect(refused.standardError.contains("exists: pass --force to replace it"))
        #expect(try String(contentsOf: output, encoding: .utf8) == "{}")
        let replaced = try await Shell.run(AifCommandTests.aifPath, ["import", "openapi", document, "--service", "shop", "--output", output.path, "--force"])
        #expect(replaced.status == 0)
    }
}
