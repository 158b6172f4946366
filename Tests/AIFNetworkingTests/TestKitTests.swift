@testable import TestSupport
import AIFNetworking
import AIFNetworkingTesting
import DemoServer
import Foundation
import Testing
@_spi(CrossModule) import AIFTransport

/// A service whose environment is signed with `signer` and the kit's test keys.
private struct KitService: Service {
    static let credentials = SigningContext.Credentials(publicKey: "kit-public", privateKey: Secret("kit-private-key"))
    var name: ServiceName = "kit"
    var signer: (any RequestSigner)?
    var environments: [ServiceEnvironment.Name: ServiceEnvironment]
    var retryPolicy: RetryPolicy
    var decoder: (any ContentDecoder)? {
        var decoder = FastJSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }

    init(signer: (any RequestSigner)? = AIFHMACSigner(), signsAllParameters: Bool = true, retryPolicy: RetryPolicy = .never) {
        self.signer = signer
        self.retryPolicy = retryPolicy
        environments = [.online: ServiceEnvironment(
            baseURL: URL(string: "https://api.kit.test")!, apiVersion: "v1", credentials: Self.credentials, signsAllParameters: signsAllParameters)]
    }

    static func registry(_ service: KitService = KitService()) -> ServiceRegistry {
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(service)
        return registry
    }
}

@Suite("The test kit: a stub transport and a signature verifier")
struct TestKitTests {
    private static func manager<Content>(_ path: String, _ type: Content.Type, method: HTTPMethod = .get, transport: StubTransport, registry: ServiceRegistry) -> APIManager<Content> {
        APIManager(Endpoint<Content>(service: "kit", path: path, method: method), proxy: APIProxy(transport: transport), registry: registry, cache: ResponseCache())
    }

    @Test func stubsAnswerInOrderForTheirUsesAndEveryRequestIsRecorded() async throws {
        let stub = StubTransport()
        let registry = KitService.registry(KitService(retryPolicy: RetryPolicy(maxRetries: 2, baseDelay: .milliseconds(1))))
        stub.stub(.get, "goods/{id}", with: .status(503), times: 1)
        stub.stub(.get, "goods/{id}", with: .json(#"{"id": 7, "title": "Scale", "price_cents": 1990}"#, headers: ["ETag": "\"g7\""]))
        stub.stub(.post, "/v1/orders", with: .json(#"{"id": 1, "goods_id": 7, "quantity": 2, "status": "placed"}"#, status: 201))

        let goods = try await Self.manager("goods/{id}", Goods.self, transport: stub, registry: registry).load(["id": 7])
        #expect(goods.content == Goods(id: 7, title: "Scale", priceCents: 1990))
        #expect(goods.attempts == 2)
        #expect(goods.headers["ETag"] == "\"g7\"")
        let order = try await Self.manager("orders", Order.self, method: .post, transport: stub, registry: registry).load(["goods_id": 7, "quantity": 2])
        #expect(order.statusCode == 201)
        #expect(order.content.status == "placed")

        let requests = stub.requests
        #expect(requests.map { "\($0.method) \($0.url.path)" } == ["GET /v1/goods/7", "GET /v1/goods/7", "POST /v1/orders"])
        guard case .bytes(let body) = requests[2].body else { Issue.record("the order had no body"); return }
        #expect(body == Data(#"{"goods_id":7,"quantity":2}"#.utf8))
        #expect(stub.unusedStubs.isEmpty)

        // A placeholder stands for one segment, and an anchored path for the whole path.
        let detailOfOther = await #expect(throws: APIError.self) {
            try await Self.manager("goods/{id}/reviews", Goods.self, transport: stub, registry: registry).load(["id": 7])
        }
        #expect(detailOfOther?.message.contains("no stub answers GET /v1/goods/7/reviews (there are: GET goods/{id}; GET goods/{id}; POST /v1/orders)") == true, "\(detailOfOther?.message ?? "")")
        stub.reset()
        #expect(stub.requests.isEmpty)
    }

    @Test func aStubNotUsedAsOftenAsPlannedIsReported() {
        let stub = StubTransport()
        stub.stub(.get, "status", with: .status(204), times: 2)
        stub.stub(.get, "always", with: .status(204))
        #expect(stub.unusedStubs == ["GET status"])
    }

    @Test func unmatchedRequestsGetTheGivenAnswerWhenThereIsOne() async throws {
        let stub = StubTransport(unmatched: .status(404, body: Data("none".utf8)))
        let response = try await stub.send(HTTPRequest(url: URL(string: "http://kit.test/anything")!), progress: nil)
        #expect(response.statusCode == 404)
        #expect(response.body == Data("none".utf8))
    }

    @Test func failuresAndDelaysAreSimulatedAndACancelledRequestEndsOnce() async throws {
        let clock = PublicClockTests.HandClock()
        let stub = StubTransport(clock: clock)
        stub.stub(.get, "down", with: .failure(.connectionRefused))
        stub.stub(.get, "slow", with: .status(200).delayed(by: .milliseconds(300)))
        let registry = KitService.registry()

        // An answer with no delay comes at once, whatever the clock.
        let refused = await #expect(throws: APIError.self) { try await Self.manager("down", NoContent.self, transport: stub, registry: registry).load() }
        #expect(refused?.kind == .noNetwork)

        // A delayed answer comes when the stub's clock has moved past its delay, not before
        // (the hand clock runs what is due as it advances, on the test's thread).
        let slow = HTTPRequest(url: URL(string: "http://kit.test/slow")!)
        let answered = Locked<[String]>([])
        stub.send(slow, progress: nil) { result in
            answered.withLock { $0.append((try? result.get()).map { "\($0.statusCode)" } ?? "\(result)") }
        }
        clock.advance(by: .milliseconds(299))
        #expect(answered.withLock { $0 }.isEmpty)
        clock.advance(by: .milliseconds(1))
        #expect(answered.withLock { $0 } == ["200"])

        // Cancelled (twice) before its answer is due, a request ends once, cancelled, at once;
        // its answer, due later, is dropped.
        let endings = Locked<[String]>([])
        let transfer = stub.send(slow, progress: nil) { result in
            endings.withLock { $0.append((try? result.get()).map { "\($0.statusCode)" } ?? "\(result)") }
        }
        transfer.cancel()
        transfer.cancel()
        #expect(endings.withLock { $0.count } == 1)
        clock.advance(by: .milliseconds(300))
        #expect(endings.withLock { $0.count } == 1)
        #expect(endings.withLock { $0.first?.contains("cancelled") } == true)
    }

    /// A request of `service`'s signer, made by the library.
    private func signedRequest(_ service: KitService, method: HTTPMethod = .post, parameters: Parameters = ["goods_id": 7, "note": "ü + /"]) throws -> HTTPRequest {
        try (KitService.registry(service).resolve("kit")).makeRequest(path: "orders", method: method, parameters: parameters)
    }

    @Test(arguments: [
        (AIFHMACSigner() as any RequestSigner, SignatureVerifier.Scheme.aifHMAC, true),
        (AIFHMACSigner(placement: .headers), .aifHMAC, true),
        (AIFHMACSigner(), .aifHMACSignatureFieldsOnly, false),
        (LegacyMD5Signer(), .legacyMD5, true),
        (HTTPMessageSignatureSigner(), .messageSignature, true),
    ])
    func requestsSignedByTheLibraryVerify(signer: any RequestSigner, scheme: SignatureVerifier.Scheme, signsAllParameters: Bool) throws {
        let service = KitService(signer: signer, signsAllParameters: signsAllParameters)
        let verifier = SignatureVerifier(scheme, credentials: KitService.credentials)
        for method in [HTTPMethod.get, .post] {
            try verifier.verify(try signedRequest(service, method: method))
        }

        // The wrong key, a changed query: refused.
        let other = SignatureVerifier(scheme, credentials: SigningContext.Credentials(publicKey: "kit-public", privateKey: Secret("another-key")))
        #expect(throws: SignatureRejection.mismatch) { try other.verify(try signedRequest(service)) }
        if signsAllParameters {
            var changed = try signedRequest(service, method: .get, parameters: ["page": 2])
            changed.url = URL(string: changed.url.absoluteString.replacingOccurrences(of: "page=2", with: "page=3"))!
            #expect(throws: SignatureRejection.mismatch) { try verifier.verify(changed) }
        }
    }

    @Test func aTamperedBodyAStaleTimeAReplayAndAnUnsignedRequestAreRefused() throws {
        let service = KitService()
        let verifier = SignatureVerifier(.aifHMAC, credentials: KitService.credentials)
        var tampered = try signedRequest(service)
        tampered.body = .bytes(Data(#"{"goods_id":8}"#.utf8))
        #expect(throws: SignatureRejection.mismatch) { try verifier.verify(tampered) }

        let stale = try (KitService.registry(service).resolve("kit")).makeRequest(path: "orders", method: .get,
            signingContext: SigningContext(time: Date().addingTimeInterval(-3600), nonce: String(repeating: "a", count: 32)))
        let staleError = #expect(throws: SignatureRejection.self) { try verifier.verify(stale) }
        #expect(staleError?.description.hasSuffix("s ago, outside the tolerance") == true)

        let once = try signedRequest(service)
        try verifier.verify(once)
        let replay = #expect(throws: SignatureRejection.self) { try verifier.verify(once) }
        #expect(replay?.description.hasSuffix("was used before") == true)

        #expect(throws: SignatureRejection.missing("signature (neither the sign query parameter nor the X-Signature header)")) {
            try verifier.verify(HTTPRequest(url: URL(string: "https://api.kit.test/v1/orders")!))
        }
        let foreign = SignatureVerifier(.aifHMAC, credentials: SigningContext.Credentials(publicKey: "someone-else", privateKey: Secret("kit-private-key")))
        #expect(throws: SignatureRejection.unknownKey("kit-public")) { try foreign.verify(try signedRequest(service)) }
    }

    @Test func aStubbedLoadsSignatureCanBeAssertedFromTheRequestsTheStubGot() async throws {
        let stub = StubTransport()
        stub.stub(.get, "goods/{id}", with: .json(#"{"id": 3, "title": "Cup", "price_cents": 500}"#))
        _ = try await Self.manager("goods/{id}", Goods.self, transport: stub, registry: KitService.registry()).load(["id": 3])
        let verifier = SignatureVerifier(.aifHMAC, credentials: KitService.credentials)
        try verifier.verify(try #require(stub.requests.first))
    }
}

@Suite("The test kit's GraphQL server", .timeLimit(.minutes(1)))
struct GraphQLServerTests {
    /// The status and body text of `method` to `path` on `server`, with `body` or `query`.
    private static func send(
        _ transport: CurlTransport, _ server: GraphQLServer, _ method: HTTPMethod, _ path: String, body: String? = nil, query: String? = nil
    ) async throws -> (status: Int, text: String) {
        var text = "\(server.baseURL())/\(path)"
        if let query { text += "?\(query)" }
        let url = try #require(URL(string: text))
        let request = HTTPRequest(
            method: method, url: url, headers: body == nil ? [:] : ["Content-Type": "application/json"], body: body.map { .bytes(Data($0.utf8)) } ?? .empty)
        let response = try await transport.send(request)
        return (response.statusCode, String(decoding: response.body, as: UTF8.self))
    }

    @Test func aRequestThatIsNotGraphQLGetsA400ThatSaysWhatIsWrong() async throws {
        let server = try await GraphQLServer.start { _ in .data(["ok": true]) }
        let transport = makeTransport()
        defer { transport.shutdown() }
        let cases: [(HTTPMethod, String, String?, String?, String)] = [
            (.post, "graphql", "not json", nil, "the body is not a JSON object"),
            (.post, "graphql", #"{"variables": {}}"#, nil, "the request has no `query`"),
            (.post, "graphql", #"{"query": "{ a }", "variables": [1]}"#, nil, "`variables` is not an object"),
            (.post, "other", #"{"query": "{ a }"}"#, nil, "no GraphQL endpoint at /other; it is /graphql"),
            (.get, "graphql", nil, "query=mutation%20%7B%20a%20%7D", "a mutation is only taken in a POST"),
            (.get, "graphql", nil, "query=%7B%20a%20%7D&variables=%7Bx", "`variables` is not one JSON text"),
        ]
        for (method, path, body, query, message) in cases {
            let answer = try await Self.send(transport, server, method, path, body: body, query: query)
            #expect(answer.status == 400, "\(method) \(path)")
            #expect(answer.text == #"{"errors":[{"message":"\#(message)"}]}"#)
        }
        #expect(server.received.isEmpty, "none reached the resolver")
        await server.stop()
    }

    @Test func anOperationIsReadFromAPostOrAGetUnderAnyPrefix() async throws {
        let server = try await GraphQLServer.start { operation in .data(["echo": .object(operation.variables)]) }
        let transport = makeTransport()
        defer { transport.shutdown() }
        let posted = try await Self.send(
            transport, server, .post, "acme/graphql", body: #"{"query": "query Q($n: Int) { echo }", "operationName": "Q", "variables": {"n": 1}}"#)
        #expect(posted.status == 200)
        #expect(posted.text == #"{"data":{"echo":{"n":1}}}"#)
        let fetched = try await Self.send(transport, server, .get, "graphql", query: "query=%7B%20echo%20%7D&variables=%7B%22n%22%3A2%7D")
        #expect(fetched.text == #"{"data":{"echo":{"n":2}}}"#)
        let received = server.received
        #expect(received.map(\.method) == ["POST", "GET"])
        #expect(received.map(\.path) == ["/acme/graphql", "/graphql"])
        #expect(received.first?.operationName == "Q")
        #expect(received.first?.headers["Content-Type"] == "application/json")
        #expect(received.last?.query == "{ echo }")
        #expect(received.allSatisfy { !$0.isMutation })
        #expect(GraphQLServer.Operation(query: "  mutation M { a }").isMutation)
        await server.stop()
    }

    @Test func aConnectionIsServedInPagesThatFollowTheirCursors() async throws {
        let nodes: [JSONValue] = (0..<5).map { ["n": .integer($0)] }
        let server = try await GraphQLServer.start { .page(of: nodes, at: "a.b", variables: $0.variables) }
        let transport = makeTransport()
        defer { transport.shutdown() }
        func page(_ variables: String) async throws -> String {
            try await Self.send(transport, server, .post, "graphql", body: #"{"query": "{ a }", "variables": \#(variables)}"#).text
        }
        #expect(try await page(#"{"first": 2}"#) == #"{"data":{"a":{"b":{"edges":[{"cursor":"0","node":{"n":0}},{"cursor":"1","node":{"n":1}}],"#
            + #""nodes":[{"n":0},{"n":1}],"pageInfo":{"endCursor":"1","hasNextPage":true,"hasPreviousPage":false,"startCursor":"0"},"totalCount":5}}}}"#)
        // The last page keeps its end cursor; a page after it is empty.
        #expect(try await page(#"{"first": 3, "after": "1"}"#).contains(#""pageInfo":{"endCursor":"4","hasNextPage":false,"hasPreviousPage":true,"startCursor":"2"}"#))
        #expect(try await page(#"{"first": 3, "after": "4"}"#).contains(#""nodes":[],"pageInfo":{"endCursor":null,"hasNextPage":false"#))
        #expect(try await page(#"{"after": "1"}"#).contains("`first` must be a whole number of at least 0"))
        #expect(try await page(#"{"first": 2, "after": "9"}"#).contains(#""message":"`after` is not a cursor of this connection""#))
        await server.stop()
    }
}
