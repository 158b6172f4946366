@testable import AIFServices
@testable import AIFTransport
import Foundation
import Testing

private struct PetService: Service {
    var name: ServiceName = "pets"
    var environments: [ServiceEnvironment.Name: ServiceEnvironment] = [
        .online: ServiceEnvironment(baseURL: URL(string: "https://pets.test")!, apiVersion: "v3")
    ]
    func commonParameters() -> Parameters { ["client": "cli"] }
}

/// Parameters placed in the path, the query, a header or the body, as an OpenAPI document's
/// `in`, `style` and `explode` say (OpenAPI 3.1, "Style Examples"), and what cannot be placed.
@Suite("Parameter placement")
struct ParameterPlacementTests {
    private let resolved: ServiceRegistry.ResolvedService = {
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(PetService())
        return try! registry.resolve("pets")
    }()

    private func request(
        _ method: HTTPMethod, _ path: String, _ parameters: Parameters, _ placements: [String: Parameters.Placement], rawBody: HTTPRequest.Body? = nil
    ) throws(ServiceError) -> HTTPRequest {
        try resolved.makeRequest(path: path, method: method, parameters: parameters, rawBody: rawBody, placements: placements)
    }

    private func text(of body: HTTPRequest.Body) -> String? {
        if case .bytes(let data) = body { String(decoding: data, as: UTF8.self) } else { nil }
    }

    @Test func aPOSTWhoseParametersAllGoInTheQuerySendsNoBody() throws {
        let request = try request(.post, "pet/{petId}", ["petId": 7, "name": "Rex", "status": "sold"], ["name": .query, "status": .query, "client": .query])
        #expect(request.url.absoluteString == "https://pets.test/v3/pet/7?client=cli&name=Rex&status=sold")
        #expect(text(of: request.body) == nil)
        guard case .empty = request.body else { Issue.record("a body was sent: \(request.body)"); return }
        #expect(request.headers["Content-Type"] == nil)
        // Without placements, a POST's parameters are its body, as before.
        let plain = try self.request(.post, "pet/{petId}", ["petId": 7, "name": "Rex"], [:])
        #expect(text(of: plain.body) == #"{"client":"cli","name":"Rex"}"#)
        #expect(plain.headers["Content-Type"] == "application/json")
    }

    @Test func placedAndUnplacedParametersShareARequest() throws {
        let request = try request(.post, "pet", ["dryRun": true, "name": "Rex", "tags": ["a", "b"]], ["dryRun": .query])
        #expect(request.url.absoluteString == "https://pets.test/v3/pet?dryRun=true")
        #expect(text(of: request.body) == #"{"client":"cli","name":"Rex","tags":["a","b"]}"#)
        // A GET may place one in the body (a search API's filter), encoded as the service says.
        let search = try self.request(.get, "search", ["q": "rex", "filter": ["age": 3]], ["filter": .body])
        #expect(search.url.absoluteString == "https://pets.test/v3/search?client=cli&q=rex")
        #expect(text(of: search.body) == #"{"filter":{"age":3}}"#)
    }

    @Test func headersCarryTextOrAListUnderAnyName() throws {
        let request = try request(
            .delete, "pet/{petId}", ["petId": 7, "api_key": "k-1", "requestID": "r-9", "colors": ["blue", "black"], "absent": nil],
            ["api_key": .header(), "requestID": .header("X-Request-ID"), "colors": .header("X-Colors"), "absent": .header()])
        #expect(request.url.absoluteString == "https://pets.test/v3/pet/7?client=cli")
        #expect(request.headers["api_key"] == "k-1")
        #expect(request.headers["X-Request-ID"] == "r-9")
        #expect(request.headers["X-Colors"] == "blue,black")
        #expect(request.headers["absent"] == nil)
    }

    /// Each row of the specification's table for a query list, and deepObject for an object.
    @Test func eachQueryStyleOfTheSpecification() throws {
        let colors: JSONValue = ["blue", "black", "brown"]
        let rows: [(Parameters.ArrayEncoding, String)] = [
            (.repeatedKeys, "color=blue&color=black&color=brown"),  // form, explode
            (.commaSeparated, "color=blue%2Cblack%2Cbrown"),  // form, no explode: color=blue,black,brown
            (.spaceSeparated, "color=blue%20black%20brown"),  // spaceDelimited
            (.pipeSeparated, "color=blue%7Cblack%7Cbrown"),  // pipeDelimited: color=blue|black|brown
        ]
        for (arrays, expected) in rows {
            let request = try request(.get, "items", ["color": colors, "client": nil], ["color": .query(arrays: arrays)])
            #expect(request.url.query == expected, "\(arrays)")
        }
        let deep = try request(.get, "items", ["color": ["R": 100, "G": 200, "B": 150], "client": nil], [:])
        #expect(deep.url.query == "color%5BB%5D=150&color%5BG%5D=200&color%5BR%5D=100")
        // One parameter's encoding leaves the others' as the service says.
        let mixed = try request(.get, "items", ["a": ["1", "2"], "b": ["3", "4"], "client": nil], ["a": .query(arrays: .repeatedKeys)])
        #expect(mixed.url.query == "a=1&a=2&b%5B%5D=3&b%5B%5D=4")
    }

    @Test func aListFillsAPathPlaceholderJoinedByCommas() throws {
        let request = try request(.get, "pets/{ids}", ["ids": [3, 4, 5], "client": nil], ["ids": .path])
        #expect(request.url.absoluteString == "https://pets.test/v3/pets/3,4,5")
    }

    @Test func aNameSentUnderAnotherInTheQueryOrTheBody() throws {
        let request = try request(.put, "pet", ["petName": "Rex", "ownerName": "Ann"], ["petName": Parameters.Placement(.query, name: "name"), "ownerName": Parameters.Placement(.body, name: "owner")])
        #expect(request.url.absoluteString == "https://pets.test/v3/pet?name=Rex")
        #expect(text(of: request.body) == #"{"client":"cli","owner":"Ann"}"#)
    }

    @Test func whatCannotBePlacedIsAnErrorNamingTheParameter() {
        func refusal(_ make: () throws -> HTTPRequest) -> String {
            do {
                _ = try make()
                return "sent"
            } catch {
                return (error as? ServiceError)?.description ?? "\(error)"
            }
        }
        #expect(refusal { try request(.get, "pets", ["filter": ["age": 3]], ["filter": .header()]) }
            == #"service "pets", path "pets": the parameters cannot be encoded: the parameter filter goes in a header, which holds text or a list, and it is a dictionary"#)
        #expect(refusal { try request(.get, "pets", ["note": "a\r\nX-Evil: 1"], ["note": .header()]) }
            == #"service "pets", path "pets": the parameters cannot be encoded: the parameter note goes in a header, and its value holds a line break"#)
        #expect(refusal { try request(.get, "pets", ["id": 3], ["id": .path]) }
            == #"service "pets", path "pets": the parameters cannot be encoded: the parameter id goes in the path, which has no {id}"#)
        #expect(refusal { try request(.post, "files", ["meta": "x"], ["meta": .body], rawBody: .bytes(Data("raw".utf8))) }
            == #"service "pets", path "files": the parameters cannot be encoded: the parameter meta goes in the body, and the call sends a body of its own"#)
        #expect(refusal { try request(.get, "pets/{id}", ["id": ["a": 1]], [:]) }
            == #"service "pets", path "pets/{id}": the parameters cannot be encoded: the parameter id fills {id} in the path, which holds text or a list of text, and it is a dictionary or a list of lists"#)
    }

    @Test func aPlacementReadsAsADefineFileWritesIt() {
        func read(_ json: String) -> String {
            let value = try! FastJSONDecoder().decode(JSONValue.self, from: Data(json.utf8))
            switch Parameters.Placement.read(value) {
            case .success(let placement): return placement.description
            case .failure(let failure): return "\(failure.member ?? "-"): \(failure.problem)"
            }
        }
        #expect(read(#""header""#) == "header")
        #expect(read(#"{"in": "header", "name": "X-Request-ID"}"#) == "header X-Request-ID")
        #expect(read(#"{"in": "query", "arrays": "pipes"}"#) == "query (pipes)")
        #expect(read(#""cookie""#) == #"-: "cookie" is not one of path, query, header, body (or an object: in, name, arrays)"#)
        #expect(read(#"{"in": "query", "arrays": "tabs"}"#) == "arrays: must be one of brackets, indexed, repeated, comma, pipes, spaces")
        #expect(read(#"{"in": "header", "arrays": "comma"}"#) == "arrays: says how a query or a form writes an array; in the header, a list is written joined by commas")
        #expect(read(#"{"in": "header", "name": "Bad Name"}"#).hasPrefix("name: must be a name of letters"))
        #expect(read(#"{"where": "query"}"#) == "where: is not a known key; expected one of: arrays, in, name")
        #expect(read("3") == "-: must be one of path, query, header, body, or an object (in, name, arrays)")
    }
}
