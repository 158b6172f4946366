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
            "  paths./files.post.parameters.filter: style deepObject: defines send arrays as the service's arrayEncoding says, objects as JSON",
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
        #expect(defines["get.files.id"]?.needsAuthorization == false)
        #expect(defines["get.files.id"]?.response.shape == .list)
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
