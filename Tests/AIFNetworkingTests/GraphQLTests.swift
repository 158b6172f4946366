@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import AIFNetworkingTesting
@_spi(CrossModule) import AIFTransport
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Testing

private typealias Parameters = AIFServices.Parameters

/// A GraphQL server of the shape GitHub's v4 has (the test kit's): one endpoint,
/// `{"data", "errors"}` in a 200. It answers by operation name (`Viewer`, `Owner` echoing its
/// variables, `Broken`: errors only, `Partial`: data with two errors, `Repos`: a connection of
/// 250, `Limited`/`LimitedMutation`: rate-limited on their first request, `Flaky`/`CreateIssue`:
/// 503 on the first request of each, then data).
private func startHub() async throws -> GraphQLServer {
    let seen = Locked<Set<String>>([])
    let repositories: [JSONValue] = (0..<250).map { ["name": .string("repo-\($0)")] }
    return try await GraphQLServer.start { operation in
        let name = operation.operationName ?? ""
        switch name {
        case "Viewer":
            return .data(["viewer": ["login": "octocat", "name": "The Octocat"]])
        case "Owner":
            return .data(["owner": ["variables": .object(operation.variables)]])
        case "Broken":
            return .errors([GraphQLServer.Failure("Field 'nope' doesn't exist on type 'Query'", locations: [(line: 1, column: 9)], code: "undefinedField")])
        case "Partial":
            return .errors(
                [
                    GraphQLServer.Failure("Must have admin rights", path: ["viewer", "email"], code: "FORBIDDEN", extensions: ["type": "FORBIDDEN"]),
                    GraphQLServer.Failure("Rate of field reads too high", path: ["viewer", "repositories", 2, "name"]),
                ],
                data: ["viewer": ["login": "octocat", "email": nil]])
        case "Repos":
            return .page(of: repositories, at: "repositoryOwner.repositories", variables: operation.variables)
        case "Limited", "LimitedMutation":
            // The first request of each is refused for the rate limit, in a 200 (as GitHub
            // does), its reset 20 s from the server's `Date`; then it is answered.
            if seen.withLock({ $0.insert(name).inserted }) { return .rateLimited(until: Date() + 20) }
            return .data(["done": true])
        case "Flaky", "CreateIssue":
            if seen.withLock({ $0.insert(name).inserted }) { return .status(503) }
            return .data(["done": true])
        default:
            return .errors([GraphQLServer.Failure("unknown operation")])
        }
    }
}

private struct Viewer: Decodable, Sendable, Equatable {
    struct User: Decodable, Sendable, Equatable {
        var login: String
        var name: String
    }
    var viewer: User
}

/// `viewer` with the fields that may fail optional: what partial data decodes into.
private struct PartialViewer: Decodable, Sendable {
    struct User: Decodable, Sendable {
        var login: String
        var email: String?
    }
    var viewer: User
}

private struct Owner: Decodable, Sendable {
    struct Echo: Decodable, Sendable {
        var variables: JSONValue
    }
    var owner: Echo
}

private struct Repository: Decodable, Sendable {
    var name: String
}

private struct Done: Decodable, Sendable, Equatable {
    var done: Bool
}

private struct Counted: Decodable, Sendable, Equatable {
    var ok: Int
}

/// GitHub's `extensions` of an error.
private struct GitHubExtensions: Decodable, Sendable, Equatable {
    var code: String?
    var type: String?
}

@Suite("GraphQL: operations, errors with partial data, queries safe to repeat", .timeLimit(.minutes(1)))
struct GraphQLTests {
    /// A proxy and registry for `server`: service `hub`, unsigned, idempotency keys generated
    /// in `Idempotency-Key` for every POST, one quick retry of 503.
    private static func stack(_ base: URL) throws -> (APIProxy, ServiceRegistry, CurlTransport) {
        let registry = ServiceRegistry(processEnvironment: [:])
        let json = """
            {"name": "hub", "signing": {"scheme": "none"},
             "retry": {"idempotencyKeyHeader": "Idempotency-Key", "generateIdempotencyKeys": true, "statusCodes": [503], "baseDelaySeconds": 0.001, "maxRetries": 1},
             "environments": {"online": {"baseURL": "\(base)"}}}
            """
        registry.register(try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "/tmp/aif-tests/hub.json", environment: [:]))
        let transport = makeTransport()
        return (APIProxy(transport: transport), registry, transport)
    }

    @Test func aQueryIsPostedWithItsVariablesAndDecodedFromData() async throws {
        let graph = try await startHub()
        let (proxy, registry, transport) = try Self.stack(graph.baseURL())
        defer { transport.shutdown() }
        let document = "query Owner($owner: String!, $first: Int!) { owner(login: $owner) { variables } }"
        let owner = APIManager(Endpoint<Owner>.graphQLQuery(document, name: "Owner", service: "hub"), proxy: proxy, registry: registry)
        let response = try await owner.load(["owner": "apple", "first": 2, "snake_case_name": true])
        #expect(response.content.owner.variables == ["owner": "apple", "first": 2, "snake_case_name": true])
        let sent = try #require(graph.received.first)
        #expect(sent.method == "POST")
        #expect(sent.headers["Content-Type"] == "application/json")
        #expect(sent.query == document)
        #expect(sent.operationName == "Owner")
        #expect(sent.variables == ["owner": "apple", "first": 2, "snake_case_name": true])
        // A query needs no idempotency key, though the policy makes them for POSTs.
        #expect(sent.idempotencyKey == nil)
        await graph.stop()
    }

    @Test func aGetQuerySendsItsVariablesAsOneJSONText() async throws {
        let graph = try await startHub()
        let (proxy, registry, transport) = try Self.stack(graph.baseURL())
        defer { transport.shutdown() }
        let endpoint = Endpoint<Owner>.graphQLQuery("query Owner($owner: String!) { owner }", name: "Owner", service: "hub", method: .get)
        let response = try await APIManager(endpoint, proxy: proxy, registry: registry).load(["owner": "apple", "first": 2])
        #expect(response.content.owner.variables == ["owner": "apple", "first": 2])
        let sent = try #require(graph.received.first)
        #expect(sent.method == "GET")
        #expect(sent.variables == ["owner": "apple", "first": 2], "one JSON text: the server read it whole")
        #expect(sent.query == "query Owner($owner: String!) { owner }")
        #expect(response.request.url.query?.contains("variables=%7B%22first%22%3A2%2C%22owner%22%3A%22apple%22%7D") == true, "\(response.request.url)")
        await graph.stop()
    }

    @Test func errorsWithoutDataFailTheLoadWithTheServersMessageAndCode() async throws {
        let graph = try await startHub()
        let (proxy, registry, transport) = try Self.stack(graph.baseURL())
        defer { transport.shutdown() }
        let broken = APIManager(Endpoint<Viewer>.graphQLQuery("query Broken { nope }", name: "Broken", service: "hub"), proxy: proxy, registry: registry)
        let error = await #expect(throws: APIError.self) { try await broken.load() }
        #expect(error?.kind == .serviceVeto)
        #expect(error?.serverCode == "undefinedField")
        #expect(error?.serverMessage == "Field 'nope' doesn't exist on type 'Query'")
        #expect(error?.attempts == 1)
        let errors = error?.graphQLErrors() ?? []
        #expect(errors.count == 1)
        #expect(errors.first?.locations == [APIError.GraphQLError<JSONValue>.Location(line: 1, column: 9)])
        #expect(errors.first?.path == [])
        #expect(errors.first?.extensions == ["code": "undefinedField"])
        #expect(error?.graphQLData(as: Viewer.self) == nil)
        await graph.stop()
    }

    @Test func partialDataAndTypedErrorsAreReachableFromTheError() async throws {
        let graph = try await startHub()
        let (proxy, registry, transport) = try Self.stack(graph.baseURL())
        defer { transport.shutdown() }
        let partial = APIManager(
            Endpoint<Viewer>.graphQLQuery("query Partial { viewer { login email } }", name: "Partial", service: "hub"), proxy: proxy, registry: registry)
        let error = await #expect(throws: APIError.self) { try await partial.load() }
        #expect(error?.serverCode == "FORBIDDEN")
        #expect(error?.serverMessage == "Must have admin rights (at viewer.email); and 1 more error")
        let errors = error?.graphQLErrors(extensions: GitHubExtensions.self) ?? []
        #expect(errors.map(\.message) == ["Must have admin rights", "Rate of field reads too high"])
        #expect(errors.first?.path == [.field("viewer"), .field("email")])
        #expect(errors.last?.path == [.field("viewer"), .field("repositories"), .index(2), .field("name")])
        #expect(errors.first?.extensions == GitHubExtensions(code: "FORBIDDEN", type: "FORBIDDEN"))
        #expect(errors.last?.extensions == nil)
        #expect(errors.last?.description == "Rate of field reads too high (at viewer.repositories.2.name)")
        // The fields that did not fail, in a type whose failing field is optional.
        let data = try #require(error?.graphQLData(as: PartialViewer.self))
        #expect(data.viewer.login == "octocat")
        #expect(data.viewer.email == nil)
        // The endpoint's own type needs `name`, which is not there: no partial data of it.
        #expect(error?.graphQLData(as: Viewer.self) == nil)
        await graph.stop()
    }

    @Test func aQueryIsRetriedAsAGetIsAndAMutationIsSentOnce() async throws {
        let graph = try await startHub()
        let (proxy, registry, transport) = try Self.stack(graph.baseURL())
        defer { transport.shutdown() }
        let flaky = APIManager(Endpoint<Done>.graphQLQuery("query Flaky { done }", name: "Flaky", service: "hub"), proxy: proxy, registry: registry)
        let answered = try await flaky.load()
        #expect(answered.content == Done(done: true))
        #expect(answered.attempts == 2)
        let create = APIManager(
            Endpoint<Done>.graphQLMutation("mutation CreateIssue { createIssue { done } }", name: "CreateIssue", service: "hub"), proxy: proxy,
            registry: registry)
        let error = await #expect(throws: APIError.self) { try await create.load() }
        #expect(error?.statusCode == 503)
        #expect(error?.attempts == 1)
        #expect(error?.message.contains("must not run twice") == true, "\(String(describing: error))")
        let mutations = graph.received.filter { $0.operationName == "CreateIssue" }
        #expect(mutations.count == 1)
        // No key is made for a mutation whose server is not said to honour it.
        #expect(mutations.first?.idempotencyKey == nil)
        await graph.stop()
    }

    @Test func aMutationIsNotSentWithGet() async throws {
        let graph = try await startHub()
        let (proxy, registry, transport) = try Self.stack(graph.baseURL())
        defer { transport.shutdown() }
        var endpoint = Endpoint<Done>.graphQLMutation("mutation { done }", service: "hub")
        endpoint.method = .get
        let error = await #expect(throws: APIError.self) { try await APIManager(endpoint, proxy: proxy, registry: registry).load() }
        #expect(error?.kind == .configuration)
        #expect(error?.message.contains("a GraphQL mutation is sent with POST, not GET") == true, "\(String(describing: error))")
        #expect(graph.received.isEmpty)
        await graph.stop()
    }

    @Test func aConnectionIsPagedToItsLastNodeWithNoneTwice() async throws {
        let graph = try await startHub()
        let (proxy, registry, transport) = try Self.stack(graph.baseURL())
        defer { transport.shutdown() }
        let document = """
            query Repos($owner: String!, $first: Int!, $after: String) {
              repositoryOwner(login: $owner) { repositories(first: $first, after: $after) { nodes { name } pageInfo { hasNextPage endCursor } totalCount } }
            }
            """
        let repositories = PagedAPIManager(
            Endpoint<Paging.Connection<Repository>>.graphQLQuery(document, name: "Repos", connectionAt: "repositoryOwner.repositories", service: "hub"),
            paging: .relay(size: 40), proxy: proxy, registry: registry)
        var names: [String] = []
        for try await page in repositories.pages(["owner": "apple"]) {
            names += page.content.nodes.map(\.name)
            #expect(page.content.totalCount == 250)
        }
        #expect(names == (0..<250).map { "repo-\($0)" })
        let asked = graph.received.map(\.variables)
        // Seven pages of 40 (the last of 10), and no eighth: its end cursor is not null, but
        // hasNextPage is false.
        #expect(asked.count == 7)
        #expect(asked.first == ["owner": "apple", "first": 40])
        #expect(asked.dropFirst().first == ["owner": "apple", "first": 40, "after": "39"])
        #expect(asked.last == ["owner": "apple", "first": 40, "after": "239"])
        await graph.stop()
    }

    @Test func aConnectionReadsItsNodesFromEdgesToo() throws {
        let page = try FastJSONDecoder().decode(
            Paging.Connection<Repository>.self,
            from: Data(#"{"edges": [{"cursor": "a", "node": {"name": "one"}}, {"cursor": "b", "node": {"name": "two"}}], "pageInfo": {"hasNextPage": false, "endCursor": "b"}}"#.utf8))
        #expect(page.nodes.map(\.name) == ["one", "two"])
        #expect(page.pageHasMore == false)
        #expect(page.pageNextCursor == "b")
        #expect(page.pageTotalCount == nil)
        #expect(page.pageItemCount == 2)
    }

    /// A rate limit a GraphQL server reports in a 200's `errors`, with `X-RateLimit-Reset`: the
    /// service's error policy retries its code, and since the server said when, the operation
    /// was not run — a mutation goes again too, once the reset has come on the load's clock.
    @Test(arguments: [false, true])
    func aRateLimitedOperationGoesAgainAtItsReset(mutation: Bool) async throws {
        let graph = try await startHub()
        let registry = ServiceRegistry(processEnvironment: [:])
        let json = """
            {"name": "hub", "signing": {"scheme": "none"},
             "retry": {"retryUnprocessedRequests": true, "maxDelaySeconds": 60},
             "errorPolicies": {"codes": {"RATE_LIMITED": "retry"}},
             "environments": {"online": {"baseURL": "\(graph.baseURL())"}}}
            """
        registry.register(try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "/tmp/aif-tests/hub.json", environment: [:]))
        let transport = makeTransport()
        defer { transport.shutdown() }
        let clock = PublicClockTests.HandClock()
        let proxy = APIProxy(transport: transport, clock: clock)
        let endpoint =
            mutation
            ? Endpoint<Done>.graphQLMutation("mutation LimitedMutation { done }", name: "LimitedMutation", service: "hub")
            : Endpoint<Done>.graphQLQuery("query Limited { done }", name: "Limited", service: "hub")
        let load = Task { try await APIManager(endpoint, proxy: proxy, registry: registry).load() }
        await clock.waiting(1)   // the wait for the reset
        #expect(graph.received.count == 1)
        clock.advance(by: .seconds(21))
        let response = try await load.value
        #expect(response.content == Done(done: true))
        #expect(response.attempts == 2)
        #expect(graph.received.count == 2)
        await graph.stop()
    }

    // MARK: - Answers lost on a reused connection

    /// A server that processes each reused connection's request and closes without answering,
    /// its service as above, and a transport keeping one connection, opened by a first load.
    private static func losingStack() async throws -> (RawServer, APIProxy, ServiceRegistry, CurlTransport) {
        let server = try RawServer(.loseAnswer(afterAnswering: 1))
        let registry = ServiceRegistry(processEnvironment: [:])
        let json = """
            {"name": "hub", "signing": {"scheme": "none"},
             "retry": {"idempotencyKeyHeader": "Idempotency-Key", "generateIdempotencyKeys": true, "baseDelaySeconds": 0.001},
             "environments": {"online": {"baseURL": "http://127.0.0.1:\(server.port)"}}}
            """
        registry.register(try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "/tmp/aif-tests/hub.json", environment: [:]))
        let transport = makeTransport { $0.connectionPool.maxConnectionsPerHost = 1 }
        let proxy = APIProxy(transport: transport)
        _ = try await APIManager(Endpoint<Counted>(service: "hub", path: "warm"), proxy: proxy, registry: registry).load()
        return (server, proxy, registry, transport)
    }

    private static func sent(_ server: RawServer) -> Int {
        server.processedRequests.count { $0.hasPrefix("POST /graphql") }
    }

    @Test func aQueryWhoseAnswerIsLostIsSentAgain() async throws {
        let (server, proxy, registry, transport) = try await Self.losingStack()
        defer { transport.shutdown(); server.stop() }
        // The server answers `{"ok":N}`, no `data`: nothing to decode.
        let query = APIManager(Endpoint<NoContent>.graphQLQuery("query { ok }", service: "hub"), proxy: proxy, registry: registry)
        let response = try await query.load()
        #expect(String(decoding: response.data, as: UTF8.self) == #"{"ok":1}"#, "answered on a fresh connection")
        #expect(response.attempts == 2)
        #expect(Self.sent(server) == 2)
    }

    @Test func aMutationWhoseAnswerIsLostIsSentOnceThoughThePolicyMakesKeys() async throws {
        let (server, proxy, registry, transport) = try await Self.losingStack()
        defer { transport.shutdown(); server.stop() }
        let mutation = APIManager(Endpoint<NoContent>.graphQLMutation("mutation { ok }", service: "hub"), proxy: proxy, registry: registry)
        let error = await #expect(throws: APIError.self) { try await mutation.load() }
        #expect(error?.kind == .responseLost)
        #expect(error?.attempts == 1)
        #expect(Self.sent(server) == 1)
        #expect(server.processedKeys.last == .some(nil), "no key: the server would not honour it")
    }

    @Test func aMutationWhoseServerHonoursKeysGoesAgainWithItsKey() async throws {
        let (server, proxy, registry, transport) = try await Self.losingStack()
        defer { transport.shutdown(); server.stop() }
        let mutation = APIManager(
            Endpoint<NoContent>.graphQLMutation("mutation { ok }", serverHonoursIdempotencyKeys: true, service: "hub"), proxy: proxy, registry: registry)
        let response = try await mutation.load()
        #expect(response.attempts == 2)
        #expect(Self.sent(server) == 2)
        let keys = server.processedKeys.suffix(2)
        #expect(keys.first != nil && keys.first == keys.last, "the same key on both: \(keys)")
    }

    // MARK: - A mutation dropped before or after it was applied

    /// A payments server (the test kit's) that runs `CreatePayment` once for each
    /// `Idempotency-Key` (each request without one), and drops the connection of the first
    /// request, before or after running it; and the keys it ran (`-` for none).
    private static func droppingPayments(runsBeforeDropping: Bool) async throws -> (GraphQLServer, Locked<[String]>) {
        let ran = Locked<[String]>([])
        let dropped = Locked(false)
        let server = try await GraphQLServer.start { operation in
            let first = dropped.withLock { dropped in
                defer { dropped = true }
                return !dropped
            }
            if first && !runsBeforeDropping { return .connectionDropped }
            let key = operation.idempotencyKey ?? "-"
            ran.withLock { keys in
                if key == "-" || !keys.contains(key) { keys.append(key) }
            }
            return first ? .connectionDropped : .data(["createPayment": ["id": "pay_1"]])
        }
        return (server, ran)
    }

    private struct Payment: Decodable, Sendable {
        struct Created: Decodable, Sendable { var id: String }
        var createPayment: Created
    }

    /// The client cannot tell a connection dropped before the mutation ran from one dropped
    /// after: without a key the server honours, it is sent once and fails as an answer lost
    /// (run once or not at all, never twice); with one, it goes again with the same key and
    /// is run exactly once either way.
    @Test(arguments: [false, true], [false, true])
    func aMutationDroppedBeforeOrAfterItRanRunsAtMostOnce(runsBeforeDropping: Bool, serverHonoursKeys: Bool) async throws {
        let (server, ran) = try await Self.droppingPayments(runsBeforeDropping: runsBeforeDropping)
        let (proxy, registry, transport) = try Self.stack(server.baseURL())
        defer { transport.shutdown() }
        let create = APIManager(
            Endpoint<Payment>.graphQLMutation(
                "mutation CreatePayment($cents: Int!) { createPayment(cents: $cents) { id } }", name: "CreatePayment",
                serverHonoursIdempotencyKeys: serverHonoursKeys, service: "hub"),
            proxy: proxy, registry: registry)
        let outcome: Result<APIResponse<Payment>, APIError>
        do { outcome = .success(try await create.load(["cents": 1200])) } catch { outcome = .failure(error) }
        let received = server.received
        if serverHonoursKeys {
            let response = try outcome.get()
            #expect(response.content.createPayment.id == "pay_1")
            #expect(response.attempts == 2)
            #expect(received.count == 2)
            let key = try #require(received.first?.idempotencyKey)
            #expect(received.last?.idempotencyKey == key, "the same key on both attempts")
            #expect(ran.withLock { $0 } == [key], "run exactly once")
        } else {
            let error = try #require(outcome.failure)
            #expect(error.kind == .responseLost)
            #expect(error.attempts == 1)
            #expect(error.message.contains("may have processed it"), "\(error)")
            #expect(received.count == 1)
            #expect(received.first?.idempotencyKey == nil)
            #expect(ran.withLock { $0 } == (runsBeforeDropping ? ["-"] : []))
        }
        await server.stop()
    }

    // MARK: - Defined in a file

    @Test func anOperationDefinedInAFileRunsAsAnEndpointsDoes() async throws {
        let graph = try await startHub()
        let (proxy, registry, transport) = try Self.stack(graph.baseURL())
        defer { transport.shutdown() }
        let file = #"""
            {"DEFAULT": {"service": "hub"},
             "owner": {"graphql": {"query": "query Owner($owner: String!) { owner { variables } }", "operationName": "Owner"}, "parameters": {"first": 2}},
             "flaky": {"graphql": {"query": "query Flaky { done }", "operationName": "Flaky"}},
             "repos": {"graphql": {"query": "query Repos($first: Int!) { repositoryOwner { repositories(first: $first) { nodes { name } } } }",
                                   "operationName": "Repos", "connectionAt": "repositoryOwner.repositories"}},
             "createIssue": {"graphql": {"mutation": "mutation CreateIssue { createIssue { done } }", "operationName": "CreateIssue"}}}
            """#
        try registry.register(try APIDefineFile.parse(Data(file.utf8), file: "hub.apis.json", environment: [:]).map(\.define))
        func api(_ name: String) -> DefinedAPI { DefinedAPI(name, registry: registry, proxy: proxy) }

        // The define's parameters and the call's are the variables; the content is `data`.
        let owner = try await api("owner").load(["owner": "apple"], as: Owner.self)
        #expect(owner.content.owner.variables == ["owner": "apple", "first": 2])
        #expect(graph.received.last?.operationName == "Owner")
        #expect(graph.received.last?.path == "/graphql")
        let json = try await api("owner").load(["owner": "swift"]).content
        #expect(json["owner"]?["variables"]?["owner"] == "swift")
        // A connection inside `data`.
        let page = try await api("repos").load(["first": 3], as: Paging.Connection<Repository>.self)
        #expect(page.content.nodes.map(\.name) == ["repo-0", "repo-1", "repo-2"])
        // A query is sent again after a 503; a mutation is not, and carries no key.
        #expect(try await api("flaky").load(as: Done.self).attempts == 2)
        let error = await #expect(throws: APIError.self) { try await api("createIssue").load(as: Done.self) }
        #expect(error?.statusCode == 503)
        #expect(error?.attempts == 1)
        let mutations = graph.received.filter { $0.operationName == "CreateIssue" }
        #expect(mutations.count == 1)
        #expect(mutations.first?.idempotencyKey == nil)
        await graph.stop()
    }

    // MARK: - Decisions, without a server

    @Test func theVetoNamesTheFirstErrorAndCountsTheOthers() throws {
        func veto(_ body: String) throws -> ServiceVeto? { GraphQLOperation.veto(in: try JSONTape(parsing: Array(body.utf8))) }
        #expect(try veto(#"{"data": {"a": 1}}"#) == nil)
        #expect(try veto(#"{"data": {"a": 1}, "errors": []}"#) == nil)
        #expect(try veto(#"[1]"#) == nil)
        #expect(try veto(#"{"errors": [{"message": "boom"}]}"#) == ServiceVeto(code: "GRAPHQL_ERROR", message: "boom"))
        #expect(
            try veto(#"{"errors": [{"message": "x", "path": ["a", 0, "b"], "extensions": {"code": "E1"}}, {"message": "y"}, {"message": "z"}]}"#)
                == ServiceVeto(code: "E1", message: "x (at a.0.b); and 2 more errors"))
        #expect(try veto(#"{"errors": ["not an object"]}"#) == ServiceVeto(code: "GRAPHQL_ERROR", message: "the server reported an error"))
    }

    @Test func aRetryPolicyRepeatsAQueryAsAGetAndNeverAMutation() {
        let policy = RetryPolicy(idempotencyKeyHeader: "Idempotency-Key", generatesIdempotencyKeys: true)
        var query = AIFTransport.HTTPRequest(method: .post, url: URL(string: "http://127.0.0.1/graphql")!, body: .bytes(Data("{}".utf8)))
        query.declaredSafeToRepeat = true
        var mutation = query
        mutation.declaredSafeToRepeat = false
        mutation.headers.set(name: "Idempotency-Key", value: "k1")
        #expect(policy.verdict(onSending: query, again: .reusedConnectionLost) == .allowed)
        #expect(policy.verdict(onSending: query, again: .status(503, saidWhen: false)) == .allowed)
        #expect(policy.verdict(onSending: mutation, again: .reusedConnectionLost) == .refused(.runsOnce))
        #expect(policy.verdict(onSending: mutation, again: .status(503, saidWhen: false)) == .refused(.runsOnce))
        // Unprocessed, it goes again like anything else.
        #expect(policy.verdict(onSending: mutation, again: .failure(.connectionRefused)) == .allowed)
        // A policy that does not retry GETs does not retry queries.
        var noGets = policy
        noGets.methods = [.put]
        #expect(noGets.verdict(onSending: query, again: .status(503, saidWhen: false)) == .refused(.notSafeToRepeat(.post, keyHeader: "Idempotency-Key")))
    }
}
