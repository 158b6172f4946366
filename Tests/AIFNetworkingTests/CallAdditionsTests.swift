@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import AIFNetworkingTesting
import Foundation
import Testing

private typealias Mirrored = RequestMirror.Mirrored

/// An issue to create, as a client writes it: camel-case names, a date.
private struct NewIssue: Encodable, Sendable {
    var title: String
    var labels: [String]
    var dueOn: Date?
    var estimate: Double = 1
}

/// The mirror as a service: snake-case names and ISO 8601 dates, as the config would say.
private struct MirrorService: Service {
    var name: ServiceName = "mirror"
    var environments: [ServiceEnvironment.Name: ServiceEnvironment]
    var bodyEncoding: Parameters.BodyEncoding = .json
    var arrayEncoding: Parameters.ArrayEncoding = .brackets
    var errorBody: ErrorBodyRule = .common
    var decoder: (any ContentDecoder)? { FastJSONDecoder(keyDecodingStrategy: .convertFromSnakeCase, dateDecodingStrategy: .iso8601) }
    func commonHeaders() -> HTTPHeaders { ["X-Client": "tests", "X-Trace": "service"] }

    init(_ mirror: RequestMirror) {
        environments = [.online: ServiceEnvironment(baseURL: mirror.server.baseURL(), apiVersion: "v1")]
    }
}

/// What a delegate heard: the mirrored requests of the loads that succeeded, in order.
private final class MirrorDelegate: APIManagerDelegate {
    let heard = Collected<Mirrored>()
    var successes: [Mirrored] { heard.values }

    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) {
        if let mirrored = response.content as? Mirrored { heard.append(mirrored) }
    }

    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) {
        Issue.record("the load failed: \(error)")
    }
}

/// A mirror, a registry with its service, and a transport; `make` a manager of an endpoint.
private struct MirrorStack {
    let mirror: RequestMirror
    let registry: ServiceRegistry
    let transport: CurlTransport
    let proxy: APIProxy

    static func start(_ configure: (inout MirrorService) -> Void = { _ in }) async throws -> MirrorStack {
        let mirror = try await RequestMirror.start()
        var service = MirrorService(mirror)
        configure(&service)
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(service)
        let transport = makeTransport()
        return MirrorStack(mirror: mirror, registry: registry, transport: transport, proxy: APIProxy(transport: transport))
    }

    func manager(_ endpoint: Endpoint<Mirrored>) -> APIManager<Mirrored> {
        APIManager(endpoint, proxy: proxy, registry: registry, cache: ResponseCache())
    }

    func stop() async {
        transport.shutdown()
        await mirror.stop()
    }
}

/// Loads that add to their endpoint: a body from an `Encodable` value, headers and query
/// items of the call's own, arrays written as the endpoint or service says.
@Suite("Calls: Encodable bodies, per-call headers and query items, array encodings", .timeLimit(.minutes(2)))
struct CallAdditionsTests {
    private static let due = Date(timeIntervalSince1970: 1_795_341_600)  // 2026-11-22T10:00:00Z

    @Test func anEncodableBodyGoesOutAsTheServicesJSON() async throws {
        let stack = try await MirrorStack.start()
        let create = stack.manager(Endpoint(service: "mirror", path: "repos/{owner}/issues", method: .post))
        let issue = NewIssue(title: "Cups arrive chipped", labels: ["bug", "shipping"], dueOn: Self.due)
        let sent = try await create.load(["owner": "octo", "draft": true], body: issue).content
        #expect(sent.method == "POST")
        #expect(sent.path == "/v1/repos/octo/issues")
        #expect(sent.query == "draft=true")
        #expect(sent.headers["content-type"] == "application/json")
        // The service's key and date strategies, keys sorted: the same value, the same bytes.
        #expect(sent.body == #"{"due_on":"2026-11-22T10:00:00Z","estimate":1,"labels":["bug","shipping"],"title":"Cups arrive chipped"}"#)
        await stack.stop()
    }

    @Test func aFormBodyWritesTheValuesMembers() async throws {
        let stack = try await MirrorStack.start { $0.arrayEncoding = .commaSeparated }
        let create = stack.manager(Endpoint(service: "mirror", path: "issues", method: .post))
        let sent = try await create.load(body: NewIssue(title: "a&b c", labels: ["bug", "ui"], dueOn: nil), encoding: .form).content
        #expect(sent.headers["content-type"] == "application/x-www-form-urlencoded")
        #expect(sent.body == "estimate=1&labels=bug%2Cui&title=a%26b%20c")
        await stack.stop()
    }

    /// A body that cannot be encoded fails the load before anything is sent, naming its type
    /// and where in it encoding failed; a form of something that has no members says so.
    @Test func aBodyThatCannotBeEncodedFailsBeforeSending() async throws {
        let stack = try await MirrorStack.start()
        let create = stack.manager(Endpoint(service: "mirror", path: "issues", method: .post))
        var issue = NewIssue(title: "t", labels: [], dueOn: nil)
        issue.estimate = .nan
        let refused = await #expect(throws: APIError.self) { try await create.load(body: issue) }
        #expect(refused?.kind == .invalidParameters)
        #expect(refused?.message.contains(#"service "mirror", path "issues": the body (NewIssue) cannot be encoded: "#) == true, "\(refused?.message ?? "")")
        #expect(refused?.message.contains("(at estimate)") == true, "\(refused?.message ?? "")")
        let array = await #expect(throws: APIError.self) { try await create.load(body: ["a", "b"], encoding: .form) }
        #expect(array?.message.hasSuffix("the body (Array<String>) cannot be encoded: a form holds named members, and the value encodes as an array") == true, "\(array?.message ?? "")")
        #expect(stack.mirror.requests.isEmpty)
        await stack.stop()
    }

    /// The call's headers over the endpoint's over the service's; its query items after the
    /// parameters; the delegate face takes them too.
    @Test func headersAndQueryItemsOfOneCall() async throws {
        let stack = try await MirrorStack.start()
        let search = stack.manager(Endpoint(service: "mirror", path: "search", headers: ["X-Trace": "endpoint", "Accept": "application/json"]))
        let sent = try await search.load(
            ["q": "cup"], headers: ["X-Trace": "call", "X-Request-Id": "r-1"], query: [URLQueryItem(name: "sort", value: "new est"), URLQueryItem(name: "flag", value: nil)]
        ).content
        #expect(sent.query == "q=cup&sort=new%20est&flag=")
        #expect(sent.headers["x-trace"] == "call")
        #expect(sent.headers["x-request-id"] == "r-1")
        #expect(sent.headers["x-client"] == "tests")
        #expect(sent.headers["accept"] == "application/json")

        let delegate = MirrorDelegate()
        search.delegate = delegate
        search.loadData(with: ["q": "pot"], headers: ["X-Trace": "delegate"], query: [URLQueryItem(name: "page", value: "2")])
        _ = await delegate.heard.wait(count: 1)
        #expect(delegate.successes.first?.query == "q=pot&page=2")
        #expect(delegate.successes.first?.headers["x-trace"] == "delegate")
        search.loadData(with: ["owner": "o"], body: NewIssue(title: "d", labels: [], dueOn: nil), headers: ["X-Trace": "body"])
        _ = await delegate.heard.wait(count: 2)
        #expect(delegate.successes.last?.body == #"{"estimate":1,"labels":[],"title":"d"}"#)
        await stack.stop()
    }

    /// An endpoint's own body goes with every load; a call's own body wins.
    @Test func anEndpointsBodyAndACallsOwn() async throws {
        let stack = try await MirrorStack.start()
        let ping = stack.manager(Endpoint(service: "mirror", path: "ping", method: .put, body: ["state": "awake"]))
        #expect(try await ping.load().content.body == #"{"state":"awake"}"#)
        #expect(try await ping.load(body: ["state": "asleep"]).content.body == #"{"state":"asleep"}"#)
        await stack.stop()
    }

    /// A call's query items are part of what the cache tells loads apart by.
    @Test func queryItemsKeepCachedAnswersApart() async throws {
        let stack = try await MirrorStack.start()
        let search = stack.manager(Endpoint(service: "mirror", path: "search", cachePolicy: .lifetime(.seconds(60))))
        let first = try await search.load(query: [URLQueryItem(name: "q", value: "cup")]).content
        let second = try await search.load(query: [URLQueryItem(name: "q", value: "pot")]).content
        let again = try await search.load(query: [URLQueryItem(name: "q", value: "cup")])
        #expect(first.query == "q=cup")
        #expect(second.query == "q=pot")
        #expect(again.content.query == "q=cup")
        #expect(stack.mirror.requests.count == 2)
        await stack.stop()
    }

    /// Arrays in the query as the endpoint says, over the service's.
    @Test func anEndpointsArrayEncoding() async throws {
        let stack = try await MirrorStack.start()
        let labels: JSONValue = ["bug", "question"]
        let brackets = stack.manager(Endpoint(service: "mirror", path: "issues"))
        #expect(try await brackets.load(["labels": labels]).content.query == "labels%5B%5D=bug&labels%5B%5D=question")
        let comma = stack.manager(Endpoint(service: "mirror", path: "issues", arrayEncoding: .commaSeparated))
        #expect(try await comma.load(["labels": labels]).content.query == "labels=bug%2Cquestion")
        await stack.stop()
    }

    /// A body signed by each scheme that covers it is accepted by the verifying server.
    @Test(arguments: [AIFHMACSigner.Placement.query, .headers])
    func anEncodableBodyIsSignedAsSent(placement: AIFHMACSigner.Placement) async throws {
        let server = try await SignatureServers.shared().plain
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(SignedEcho(baseURL: server.baseURL(), signer: AIFHMACSigner(placement: placement)))
        let transport = makeTransport()
        defer { transport.shutdown() }
        let manager = APIManager<NoContent>(Endpoint(service: "signed", path: "aif/issues", method: .post), proxy: APIProxy(transport: transport), registry: registry)
        let response = try await manager.load(["owner": "octo"], body: NewIssue(title: "ü & é", labels: ["x"], dueOn: Self.due))
        #expect(response.statusCode == 200)
        #expect(response.headers["X-Verified"] == "yes")
    }
}

/// A service whose requests the signature routes verify.
private struct SignedEcho: Service {
    var name: ServiceName = "signed"
    var environments: [ServiceEnvironment.Name: ServiceEnvironment]
    var signer: (any RequestSigner)?

    init(baseURL: URL, signer: any RequestSigner) {
        environments = [.online: ServiceEnvironment(baseURL: baseURL, apiVersion: "verify", credentials: SignatureRoutes.aifCredentials)]
        self.signer = signer
    }
}

/// Parameters placed where an endpoint or a define says, as the server receives them.
@Suite("Calls: parameters in the path, the query, a header or the body", .timeLimit(.minutes(2)))
struct PlacedParameterTests {
    @Test func aDefinedPOSTWithQueryParametersSendsThemInTheQueryAndNoBody() async throws {
        let stack = try await MirrorStack.start()
        try stack.registry.register([
            APIDefine(
                name: "updatePetWithForm", service: "mirror", method: .post, path: "pet/{petId}",
                parameterPlacements: ["name": .query, "status": .query]),
            APIDefine(name: "deletePet", service: "mirror", method: .delete, path: "pet/{petId}", parameterPlacements: ["api_key": .header()]),
            APIDefine(name: "findByTags", service: "mirror", path: "pet/findByTags", parameterPlacements: ["tags": .query(arrays: .repeatedKeys)]),
        ])
        func api(_ name: String) -> DefinedAPI { DefinedAPI(name, registry: stack.registry, proxy: stack.proxy, cache: ResponseCache()) }

        let updated = try await api("updatePetWithForm").load(["petId": 7, "name": "Rex", "status": "sold"], as: Mirrored.self).content
        #expect(updated.method == "POST")
        #expect(updated.path == "/v1/pet/7")
        #expect(updated.query == "name=Rex&status=sold")
        #expect(updated.body == "")
        #expect(updated.headers["content-type"] == nil)
        #expect(updated.headers["content-length"] == "0")

        let deleted = try await api("deletePet").load(["petId": 7, "api_key": "k-1"], as: Mirrored.self).content
        #expect(deleted.query == "")
        #expect(deleted.headers["api_key"] == "k-1")

        let found = try await api("findByTags").load(["tags": ["a", "b"]], as: Mirrored.self).content
        #expect(found.query == "tags=a&tags=b")
        await stack.stop()
    }

    @Test func anEndpointPlacesParametersUnderTheirOwnNames() async throws {
        let stack = try await MirrorStack.start()
        let endpoint = Endpoint<Mirrored>(
            service: "mirror", path: "items/{ids}", method: .put,
            parameterPlacements: ["ids": .path, "requestID": .header("X-Request-ID"), "dryRun": .query, "colors": .query(arrays: .pipeSeparated)])
        let sent = try await stack.manager(endpoint).load(["ids": [3, 4], "requestID": "r-1", "dryRun": true, "colors": ["blue", "black"], "note": "x"]).content
        #expect(sent.path == "/v1/items/3,4")
        #expect(sent.query == "colors=blue%7Cblack&dryRun=true")
        #expect(sent.headers["x-request-id"] == "r-1")
        #expect(sent.body == #"{"note":"x"}"#)
        await stack.stop()
    }
}

/// Arrays written in queries and forms, each way.
@Suite("Array encodings", .timeLimit(.minutes(2)))
struct ArrayEncodingTests {
    private func flattened(_ parameters: Parameters, _ arrays: Parameters.ArrayEncoding) -> String {
        RequestGenerator.flatten(parameters, arrays: arrays).map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }

    @Test func eachEncoding() {
        let parameters: Parameters = ["labels": ["bug", 2, true, nil], "empty": [], "q": "x"]
        #expect(flattened(parameters, .brackets) == "labels[]=bug&labels[]=2&labels[]=true&q=x")
        #expect(flattened(parameters, .repeatedKeys) == "labels=bug&labels=2&labels=true&q=x")
        #expect(flattened(parameters, .commaSeparated) == "labels=bug,2,true&q=x")
        #expect(flattened(parameters, .pipeSeparated) == "labels=bug|2|true&q=x")
        #expect(flattened(parameters, .spaceSeparated) == "labels=bug 2 true&q=x")
        let indexed = Parameters.ArrayEncoding.custom { name, elements in elements.enumerated().map { ("\(name)[\($0.offset)]", $0.element) } }
        #expect(flattened(parameters, indexed) == "labels[0]=bug&labels[1]=2&labels[2]=true&q=x")
        #expect(indexed == indexed)
        #expect(indexed != .custom { name, elements in [(name, elements.joined())] })
    }

    @Test func indexedArraysOfObjectsAsRackAndStripeReadThem() {
        let parameters: Parameters = [
            "line_items": [["price": "price_cup", "quantity": 2], ["price_data": ["currency": "usd", "unit_amount": 450], "quantity": 1]],
            "tags": ["a", "b"],
        ]
        #expect(flattened(parameters, .indexed) == "line_items[0][price]=price_cup&line_items[0][quantity]=2"
            + "&line_items[1][price_data][currency]=usd&line_items[1][price_data][unit_amount]=450&line_items[1][quantity]=1&tags[0]=a&tags[1]=b")
        // Without indexes, what parsers must guess at.
        #expect(flattened(parameters, .brackets).hasPrefix("line_items[][price]=price_cup&line_items[][quantity]=2&line_items[][price_data][currency]=usd"))
    }

    @Test func keysThatAreIndexesSortAsNumbers() {
        var items: [String: JSONValue] = [:]
        for index in 0...11 { items["\(index)"] = .integer(index) }
        items["note"] = "x"
        items["007"] = "padded"
        let pairs = RequestGenerator.flatten(["items": .object(items)], arrays: .indexed).map(\.name)
        #expect(pairs == ["items[0]", "items[1]", "items[2]", "items[3]", "items[4]", "items[5]", "items[6]", "items[007]", "items[7]", "items[8]", "items[9]",
            "items[10]", "items[11]", "items[note]"])
        // A strict order: every key before or after every other, consistently.
        let keys = ["10", "9", "1a", "2", "b", "007", "7", "0", "00"]
        for one in keys {
            for other in keys where one != other {
                #expect(RequestGenerator.keyOrder(one, other) != RequestGenerator.keyOrder(other, one), "\(one) and \(other)")
            }
        }
    }

    /// Arrays and dictionaries inside an array have no comma form: they are written as brackets.
    @Test func structuredElementsFallBackToBrackets() {
        let parameters: Parameters = ["f": ["a", ["min": 1], ["x", "y"]]]
        #expect(flattened(parameters, .commaSeparated) == "f=a&f[][min]=1&f[]=x,y")
    }

    @Test func theConfigNamesTheEncoding() throws {
        for (name, expected) in [
            ("comma", Parameters.ArrayEncoding.commaSeparated), ("repeated", .repeatedKeys), ("brackets", .brackets), ("indexed", .indexed), ("pipes", .pipeSeparated),
            ("spaces", .spaceSeparated),
        ] {
            let json = #"{"name": "x", "arrayEncoding": "\#(name)", "environments": {"online": {"baseURL": "https://a.test"}}}"#
            #expect(try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "t.json", environment: [:]).arrayEncoding == expected)
        }
        let refused = #expect(throws: ServiceRegistry.ConfigurationError.self) {
            try ServiceRegistry.ConfiguredService.parse(Data(#"{"name": "x", "arrayEncoding": "tabs", "environments": {"online": {"baseURL": "https://a.test"}}}"#.utf8), file: "t.json", environment: [:])
        }
        #expect(refused?.description == #"t.json: arrayEncoding "tabs" is not one of brackets, indexed, repeated, comma, pipes, spaces"#)
    }
}

/// Credentials in one line: a fixed bearer token, Basic authentication.
@Suite("Fixed credentials", .timeLimit(.minutes(2)))
struct FixedCredentialTests {
    @Test func aBearerTokenGoesWithEveryRequestAndARefusalIsTheServers() async throws {
        let stack = try await MirrorStack.start()
        let token = Authenticator.bearer("ghp_first")
        stack.registry.setAuthenticator(token, for: ["mirror"])
        let user = stack.manager(Endpoint(service: "mirror", path: "user"))
        #expect(try await user.load().content.headers["authorization"] == "Bearer ghp_first")

        token.setCredential(Authenticator.Credential(token: "revoked"))
        let refused = await #expect(throws: APIError.self) { try await user.load() }
        #expect(refused?.kind == .httpStatus)
        #expect(refused?.statusCode == 401)
        #expect(refused?.attempts == 1)
        #expect(refused?.message.contains("Bad credentials") == true, "\(refused?.message ?? "")")

        token.setCredential(Authenticator.Credential(token: "ghp_second"))
        #expect(try await user.load().content.headers["authorization"] == "Bearer ghp_second")

        token.setCredential(nil)
        let missing = await #expect(throws: APIError.self) { try await user.load() }
        #expect(missing?.kind == .authenticationFailed)
        #expect(missing?.message.contains("the authenticator holds a fixed token and none is set: give it one with setCredential(_:)") == true, "\(missing?.message ?? "")")
        #expect(stack.mirror.requests.count == 3)
        await stack.stop()
    }

    @Test func basicAuthentication() async throws {
        let stack = try await MirrorStack.start()
        stack.registry.setAuthenticator(.basic(user: "Aladdin", password: "open sesame"), for: ["mirror"])
        let user = stack.manager(Endpoint(service: "mirror", path: "user"))
        // RFC 7617's own example.
        #expect(try await user.load().content.headers["authorization"] == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")

        stack.registry.setAuthenticator(.basic(user: "a:b", password: "p"), for: ["mirror"])
        let refused = await #expect(throws: APIError.self) { try await user.load() }
        #expect(refused?.kind == .authenticationFailed)
        #expect(refused?.message.contains(#"the Basic authenticator's user name "a:b" contains a colon, which the scheme cannot carry (RFC 7617)"#) == true, "\(refused?.message ?? "")")
        #expect(stack.mirror.requests.count == 1)
        await stack.stop()
    }
}

/// GitHub's validation failure.
private struct GitHubError: Decodable, Sendable {
    struct FieldError: Decodable, Sendable {
        var resource: String
        var field: String
        var code: String
    }
    var message: String
    var errors: [FieldError]?
}

/// The errors of failed statuses: the server's message and code read from the body, the body
/// decoded into the declared type, credentials never shown.
@Suite("Error bodies", .timeLimit(.minutes(2)))
struct ErrorBodyTests {
    private static let validation = #"{"message": "Validation Failed", "errors": [{"resource": "Issue", "field": "title", "code": "missing_field"}], "documentation_url": "https://docs.github.com/rest"}"#

    private func failing(_ stack: MirrorStack, status: Int, body: String, errorBody: (any (Decodable & Sendable).Type)? = nil) async -> APIError? {
        let manager = stack.manager(Endpoint(service: "mirror", path: "issues", method: .post, errorBody: errorBody))
        return await #expect(throws: APIError.self) {
            try await manager.load(body: ["title": ""], headers: ["X-Answer-Status": "\(status)", "X-Answer-Body": body])
        }
    }

    @Test func theServersMessageAndTheDeclaredBody() async throws {
        let stack = try await MirrorStack.start()
        let error = await failing(stack, status: 422, body: Self.validation, errorBody: GitHubError.self)
        #expect(error?.kind == .httpStatus)
        #expect(error?.message == "the server answered 422: Validation Failed")
        #expect(error?.serverMessage == "Validation Failed")
        #expect(error?.serverCode == nil)
        let body = error?.errorBody(as: GitHubError.self)
        #expect(body?.errors?.map(\.field) == ["title"])
        #expect(body?.errors?.first?.code == "missing_field")
        // Another type than the one declared is not handed over.
        #expect(error?.errorBody(as: String.self) == nil)
        await stack.stop()
    }

    /// The members most APIs use, nested ones included; a code when the rule names where.
    @Test func commonMembersAndACode() async throws {
        let stack = try await MirrorStack.start()
        let nested = #"{"error": {"code": 403, "message": "Rate limit exceeded", "status": "PERMISSION_DENIED"}}"#
        #expect(await failing(stack, status: 403, body: nested)?.message == "the server answered 403: Rate limit exceeded")
        let oauth = #"{"error": "invalid_grant", "error_description": "The refresh token expired"}"#
        #expect(await failing(stack, status: 400, body: oauth)?.message == "the server answered 400: The refresh token expired")
        let problem = #"{"type": "about:blank", "title": "Out of stock", "detail": "Cup 7 is out of stock", "status": 409}"#
        #expect(await failing(stack, status: 409, body: problem)?.message == "the server answered 409: Cup 7 is out of stock")
        let coded = #"{"code": "E_LIMIT", "message": "Too many orders"}"#
        let error = await failing(stack, status: 429, body: coded)
        // (POST is not retried without an idempotency key, which the message adds.)
        #expect(error?.message.hasPrefix("the server answered 429 (code E_LIMIT): Too many orders (not retried: ") == true, "\(error?.message ?? "")")
        #expect(error?.serverCode == "E_LIMIT")
        // Nothing known: the body's start, as before.
        #expect(await failing(stack, status: 500, body: #"{"oops": 1}"#)?.message == #"the server answered 500: {"oops": 1}"#)
        await stack.stop()
    }

    /// A rule of the service's own: where the message and the code are.
    @Test func aServicesOwnRule() async throws {
        let stack = try await MirrorStack.start { $0.errorBody = ErrorBodyRule(messageFields: ["fault.text"], codeField: "fault.id") }
        let error = await failing(stack, status: 502, body: #"{"message": "not this one", "fault": {"id": 77, "text": "upstream down"}}"#)
        #expect(error?.message.hasPrefix("the server answered 502 (code 77): upstream down (not retried: ") == true, "\(error?.message ?? "")")
        #expect(error?.serverMessage == "upstream down")
        await stack.stop()
    }

    /// A message echoing a credential shows it as ***.
    @Test func aCredentialInTheMessageIsHidden() async throws {
        let stack = try await MirrorStack.start()
        stack.registry.setAuthenticator(.bearer("tok-secret-12345"), for: ["mirror"])
        let error = await failing(stack, status: 403, body: #"{"message": "token tok-secret-12345 lacks the repo scope"}"#)
        #expect(error?.message == "the server answered 403: token *** lacks the repo scope")
        #expect(error?.serverMessage == "token *** lacks the repo scope")
        await stack.stop()
    }

    @Test func theConfigNamesTheMembers() throws {
        let json = #"{"name": "x", "errorBody": {"messageField": "error.text", "codeField": "error.id"}, "environments": {"online": {"baseURL": "https://a.test"}}}"#
        let rule = try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "t.json", environment: [:]).errorBody
        #expect(rule.messageFields == ["error.text"])
        #expect(rule.codeField == "error.id")
        let refused = #expect(throws: ServiceRegistry.ConfigurationError.self) {
            try ServiceRegistry.ConfiguredService.parse(Data(#"{"name": "x", "errorBody": {"messageField": "a..b"}, "environments": {"online": {"baseURL": "https://a.test"}}}"#.utf8), file: "t.json", environment: [:])
        }
        #expect(refused?.description == #"t.json: errorBody.messageField "a..b" is not a member name or a dotted path of member names"#)
        let unknown = #expect(throws: ServiceRegistry.ConfigurationError.self) {
            try ServiceRegistry.ConfiguredService.parse(Data(#"{"name": "x", "errorBody": {"message": "m"}, "environments": {"online": {"baseURL": "https://a.test"}}}"#.utf8), file: "t.json", environment: [:])
        }
        #expect(unknown?.description == "t.json: errorBody.message is not a known key; expected one of: codeField, messageField")
    }
}
