@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import AIFNetworkingTesting
import DemoServer
import Foundation
import Testing
@_spi(CrossModule) import AIFTransport

private struct VerifiedService: Service {
    var name: ServiceName = "verified"
    var environments: [ServiceEnvironment.Name: ServiceEnvironment]
    var signer: (any RequestSigner)? = AIFHMACSigner()
    var bodyEncoding: Parameters.BodyEncoding = .json

    init(online: URL, offline: URL? = nil, signsAllParameters: Bool = true) {
        let credentials = SignatureRoutes.aifCredentials
        var environments: [ServiceEnvironment.Name: ServiceEnvironment] = [
            .online: ServiceEnvironment(baseURL: online, apiVersion: "verify", credentials: credentials, signsAllParameters: signsAllParameters),
        ]
        if let offline {
            environments[.offline] = ServiceEnvironment(baseURL: offline, apiVersion: "verify", credentials: credentials)
        }
        self.environments = environments
    }
}

@Suite("Signing against a verifying server", .timeLimit(.minutes(2)))
struct SigningIntegrationTests {
    /// A registry whose service signs with RFC 9421 and the verifier's key.
    private func rfc9421Registry() async throws -> ServiceRegistry {
        let server = try await SignatureServers.shared().plain
        var service = VerifiedService(online: server.baseURL())
        service.signer = HTTPMessageSignatureSigner()
        service.environments[.online]!.credentials = SignatureRoutes.messageCredentials
        return setUp(service)
    }

    private func setUp(_ service: VerifiedService) -> ServiceRegistry {
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(service)
        return registry
    }

    @Test(arguments: [
        (HTTPMethod.get, Parameters.BodyEncoding.json, AIFHMACSigner.Placement.query),
        (.delete, .json, .query), (.head, .json, .headers),
        (.post, .json, .query), (.put, .form, .query), (.patch, .json, .headers), (.post, .form, .headers),
    ])
    func everySignedRequestIsAccepted(method: HTTPMethod, encoding: Parameters.BodyEncoding, placement: AIFHMACSigner.Placement) async throws {
        let server = try await SignatureServers.shared().plain
        var service = VerifiedService(online: server.baseURL())
        service.signer = AIFHMACSigner(placement: placement)
        service.bodyEncoding = encoding
        let registry = setUp(service)
        let transport = makeTransport()
        defer { transport.shutdown() }
        let request = try registry.resolve("verified").makeRequest(path: "aif/goods/{id}", method: method,
            parameters: ["id": "ü 1", "q": "a+b/c%d e", "empty": "", "tags": ["x", "x"], "filter": ["min": 1.5], "n": 3])
        let response = try await transport.send(request)
        #expect(response.statusCode == 200, "\(method) \(encoding) \(placement): \(response.headers["X-Reason"] ?? "")")
    }

    @Test func signingOnlyTheSignatureFieldsIsAccepted() async throws {
        let server = try await SignatureServers.shared().plain
        let registry = setUp(VerifiedService(online: server.baseURL(), signsAllParameters: false))
        let transport = makeTransport()
        defer { transport.shutdown() }
        // The verifier recomputes over every query parameter, so only a request whose query
        // holds nothing but the signature fields can verify: that is what this mode is for.
        let request = try registry.resolve("verified").makeRequest(path: "aif/ping", method: .post, parameters: ["a": 1])
        #expect(try await transport.send(request).statusCode == 200)
    }

    @Test func tamperingIsRejected() async throws {
        let server = try await SignatureServers.shared().plain
        let registry = setUp(VerifiedService(online: server.baseURL()))
        let transport = makeTransport()
        defer { transport.shutdown() }
        func signed(_ parameters: Parameters = ["page": 2], method: HTTPMethod = .get) throws -> HTTPRequest {
            try registry.resolve("verified").makeRequest(path: "aif/goods", method: method, parameters: parameters)
        }
        func reason(_ request: HTTPRequest) async throws -> String? {
            let response = try await transport.send(request)
            return response.statusCode == 200 ? nil : response.headers["X-Reason"]
        }

        var path = try signed()
        path.url = URL(string: path.url.absoluteString.replacingOccurrences(of: "/aif/goods", with: "/aif/admin"))!
        #expect(try await reason(path) == "the signature does not match the request")

        var query = try signed()
        query.url = URL(string: query.url.absoluteString.replacingOccurrences(of: "page=2", with: "page=3"))!
        #expect(try await reason(query) == "the signature does not match the request")

        var body = try signed(["goods_id": 1], method: .post)
        body.body = .bytes(Data(#"{"goods_id":2}"#.utf8))
        #expect(try await reason(body) == "the signature does not match the request")

        let stale = try registry.resolve("verified").makeRequest(path: "aif/goods", method: .get,
            signingContext: SigningContext(time: Date().addingTimeInterval(-3600), nonce: Digest.hex(Digest.randomBytes(16))))
        #expect(try await reason(stale)?.hasSuffix("s ago, outside the tolerance") == true)

        let once = try signed()
        #expect(try await reason(once) == nil)
        #expect(try await reason(once)?.hasSuffix("was used before") == true)
        #expect(try await reason(try signed()) == nil, "a fresh nonce per request")
    }

    @Test(arguments: [HTTPMethod.get, .post, .put, .delete, .patch])
    func rfc9421SignedRequestsVerify(method: HTTPMethod) async throws {
        let registry = try await rfc9421Registry()
        let transport = makeTransport()
        defer { transport.shutdown() }
        let request = try registry.resolve("verified").makeRequest(path: "rfc9421/orders", method: method, parameters: ["note": "ü + /", "n": 1])
        let response = try await transport.send(request)
        #expect(response.statusCode == 200, "\(method): \(response.headers["X-Reason"] ?? "")")

        // A binary body, and the same request tampered with.
        let binary = Data((0..<256).map { UInt8($0) })
        var raw = try registry.resolve("verified").makeRequest(path: "rfc9421/blob", method: .put, parameters: ["v": 2],
            headers: ["Content-Type": "application/octet-stream"], rawBody: .bytes(binary))
        #expect(try await transport.send(raw).statusCode == 200)
        raw.body = .bytes(binary.dropLast() + [0])
        #expect(try await transport.send(raw).headers["X-Reason"] == "the request's signature is malformed: Content-Digest does not match the body")
    }

    @Test func rfc9421TamperingStaleAndReplayedRequestsAreRejected() async throws {
        let registry = try await rfc9421Registry()
        let transport = makeTransport()
        defer { transport.shutdown() }
        func reason(_ request: HTTPRequest) async throws -> String? {
            let response = try await transport.send(request)
            return response.statusCode == 200 ? nil : response.headers["X-Reason"]
        }
        var query = try registry.resolve("verified").makeRequest(path: "rfc9421/goods", method: .get, parameters: ["page": 2])
        query.url = URL(string: query.url.absoluteString.replacingOccurrences(of: "page=2", with: "page=3"))!
        #expect(try await reason(query) == "the signature does not match the request")
        var path = try registry.resolve("verified").makeRequest(path: "rfc9421/goods", method: .get)
        path.url = URL(string: path.url.absoluteString.replacingOccurrences(of: "/goods", with: "/admin"))!
        #expect(try await reason(path) == "the signature does not match the request")
        let stale = try registry.resolve("verified").makeRequest(path: "rfc9421/goods", method: .get,
            signingContext: SigningContext(time: Date().addingTimeInterval(-3600), nonce: Digest.hex(Digest.randomBytes(16))))
        #expect(try await reason(stale)?.hasSuffix("s ago, outside the tolerance") == true)
        let once = try registry.resolve("verified").makeRequest(path: "rfc9421/goods", method: .get)
        #expect(try await reason(once) == nil)
        #expect(try await reason(once)?.hasSuffix("was used before") == true)
    }

    @Test func binaryBodiesVerifyUnderAIFHMAC() async throws {
        let server = try await SignatureServers.shared().plain
        let registry = setUp(VerifiedService(online: server.baseURL()))
        let transport = makeTransport()
        defer { transport.shutdown() }
        let request = try registry.resolve("verified").makeRequest(path: "aif/blob", method: .post, parameters: ["kind": "raw"],
            headers: ["Content-Type": "application/octet-stream"], rawBody: .bytes(Data((0..<256).map { UInt8($0) })))
        let response = try await transport.send(request)
        #expect(response.statusCode == 200, "\(response.headers["X-Reason"] ?? "")")
    }

    @Test(arguments: [HTTPMethod.get, .post])
    func redirectedRequestsAreSignedAfresh(method: HTTPMethod) async throws {
        let server = try await SignatureServers.shared().plain
        let registry = setUp(VerifiedService(online: server.url("")))
        let transport = makeTransport()
        defer { transport.shutdown() }
        // The service's API version is "verify"; the redirect source lives outside it.
        let request = try registry.resolve("verified").makeRequest(path: server.url("redirect-signed").absoluteString, method: method,
            parameters: ["goods_id": 9])
        let response = try await APIProxy(transport: transport).send(request, for: registry.resolve("verified"))
        #expect(response.statusCode == 200, "\(response.headers["X-Reason"] ?? "")")
        #expect(response.url.path == "/verify/aif/landing")
    }

    /// Both faces of a manager follow a signed service's redirects the same way: each hop is
    /// signed afresh (the landing verifies it), and the proxy's limit ends a chain that is too
    /// long with a transport error naming it. `wrapped` puts a transport of no known kind
    /// between the proxy and libcurl (its completions are not batched).
    @Test(arguments: [false, true])
    func managersFollowSignedRedirectsOnBothFaces(wrapped: Bool) async throws {
        let server = try await SignatureServers.shared().plain
        let registry = setUp(VerifiedService(online: server.url("")))
        let curl = makeTransport { $0.redirects = .follow(max: 1) }
        defer { curl.shutdown() }
        let transport = CountingTransport(curl)
        let proxy = APIProxy(transport: wrapped ? transport : curl)
        func manager(_ path: String) -> APIManager<NoContent> {
            let manager = APIManager<NoContent>(service: "verified", path: server.url(path).absoluteString, proxy: proxy, registry: registry)
            manager.callbackExecutor = .immediate
            return manager
        }
        let signed = manager("redirect-signed")
        #expect(try await signed.load(["goods_id": 9]).statusCode == 200)
        let catcher = OutcomeCatcher()
        signed.delegate = catcher
        let id = signed.loadData(with: ["goods_id": 9])
        _ = await catcher.outcomes.wait(count: 1)
        #expect(catcher.outcomes.values == ["\(id): 200"])
        if wrapped { #expect(transport.sent == 4) }

        let endless = manager("redirect/3")
        let thrown = await #expect(throws: APIError.self) { try await endless.load() }
        endless.delegate = catcher
        let failing = endless.loadData()
        _ = await catcher.outcomes.wait(count: 2)
        let told = try #require(catcher.failures.withLock { $0[failing] })
        for error in [thrown, told] {
            #expect(error?.kind == .transport)
            #expect((error?.underlyingError as? TransportError)?.code == .tooManyRedirects)
            #expect(error?.message.contains("more than 1 redirects") == true)
        }
    }

    /// One setting decides whether a manager's load follows redirects: its transport's. A
    /// transport that follows none hands the manager the redirect itself, on both faces.
    @Test func aTransportThatFollowsNoRedirectsHandsManagersTheRedirect() async throws {
        let server = try await SignatureServers.shared().plain
        let registry = setUp(VerifiedService(online: server.url("")))
        let curl = makeTransport { $0.redirects = .never }
        defer { curl.shutdown() }
        let transport = CountingTransport(curl)
        let manager = APIManager<NoContent>(
            service: "verified", path: server.url("hop/302?to=%2Fverify%2Faif%2Flanding").absoluteString, proxy: APIProxy(transport: transport),
            registry: registry)
        manager.callbackExecutor = .immediate
        let thrown = await #expect(throws: APIError.self) { try await manager.load(["goods_id": 9]) }
        let catcher = OutcomeCatcher()
        manager.delegate = catcher
        let failing = manager.loadData(with: ["goods_id": 9])
        _ = await catcher.outcomes.wait(count: 1)
        let told = try #require(catcher.failures.withLock { $0[failing] })
        for error in [thrown, told] {
            #expect(error?.kind == .httpStatus)
            #expect(error?.response?.statusCode == 302)
        }
        #expect(transport.sent == 2)
    }

    /// A signed load redirected to another origin arrives there without any signature or
    /// credential (a signature names no host, so it could be replayed against the service),
    /// on both faces of a manager and through `APIProxy.send(_:for:)`; within the origin the
    /// next hop is signed afresh and verifies.
    @Test func signaturesDoNotLeaveTheOrigin() async throws {
        let server = try await SignatureServers.shared().plain
        let registry = setUp(VerifiedService(online: server.url("")))
        let transport = makeTransport()
        defer { transport.shutdown() }
        let proxy = APIProxy(transport: transport)
        let elsewhere = "http://localhost:\(server.port)/landing"
        let manager = APIManager<NoContent>(
            service: "verified", path: server.url("hop/307?to=\(PercentEncoding.encode(elsewhere))").absoluteString, proxy: proxy, registry: registry)
        manager.callbackExecutor = .immediate
        let catcher = OutcomeCatcher()
        manager.delegate = catcher
        let delegated = manager.loadData(with: ["goods_id": 9])
        let awaited = try await manager.load(["goods_id": 9])
        _ = await catcher.outcomes.wait(count: 1)
        #expect(catcher.outcomes.values == ["\(delegated): 200"])
        #expect(awaited.statusCode == 200)
        let request = try registry.resolve("verified").makeRequest(path: server.url("hop/302?to=\(PercentEncoding.encode(elsewhere))").absoluteString, method: .get,
            parameters: ["goods_id": 9])
        let response = try await proxy.send(request, for: registry.resolve("verified"))
        let target = try #require(response.headers["X-Target"])
        #expect(target.hasPrefix("/landing"))
        for field in ["sign=", "api_key=", "nonce=", "timestamp="] {
            #expect(!target.contains(field), "\(field) reached another origin: \(target)")
        }
        // Within the origin, the hop is signed again and the landing verifies it.
        let same = try registry.resolve("verified").makeRequest(path: server.url("hop/308?to=%2Fverify%2Faif%2Flanding").absoluteString, method: .post,
            parameters: ["goods_id": 9])
        let verified = try await proxy.send(same, for: registry.resolve("verified"))
        #expect(verified.statusCode == 200, "\(verified.headers["X-Reason"] ?? "")")
    }

    @Test func switchingEnvironmentMovesRequestsToTheOtherServer() async throws {
        let servers = try await SignatureServers.shared()
        let registry = setUp(VerifiedService(online: servers.plain.baseURL(), offline: servers.tls.baseURL(secure: true)))
        let transport = makeTransport { $0.tls.certificateAuthorities = .file(path: servers.certificates.caPath) }
        defer { transport.shutdown() }
        let online = try await transport.send(registry.resolve("verified").makeRequest(path: "aif/x", method: .get))
        #expect(online.url.port == servers.plain.port && online.statusCode == 200)
        registry.setEnvironment(.offline, for: "verified")
        let offline = try await transport.send(registry.resolve("verified").makeRequest(path: "aif/x", method: .get))
        #expect(offline.url.port == servers.tls.port && offline.statusCode == 200)
    }
}

/// Notes each load's outcome as the delegate hears it: "ID: status" or "ID: failed".
private final class OutcomeCatcher: APIManagerDelegate {
    let outcomes = Collected<String>()
    let failures = Locked<[LoadID: APIError]>([:])

    func manager<Content>(_ manager: APIManager<Content>, didSucceedWith response: APIResponse<Content>) {
        outcomes.append("\(response.loadID): \(response.statusCode)")
    }

    func manager<Content>(_ manager: APIManager<Content>, didFailWith error: APIError) {
        failures.withLock { $0[error.loadID] = error }
        outcomes.append("\(error.loadID): failed")
    }
}
