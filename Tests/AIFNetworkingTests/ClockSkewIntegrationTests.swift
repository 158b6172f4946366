@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
import DemoServer
import Foundation
import Testing

/// Servers whose clocks run an hour ahead of ours or behind it, each refusing a request signed
/// with a time more than five minutes from its own: the first signed request to each is refused
/// once and signed again with what its `Date` header taught; each service environment keeps
/// its own correction, on one proxy.
@Suite("Clock skew: one correction per service environment, and one re-signed retry")
struct ClockSkewIntegrationTests {
    struct Ping: Decodable, Sendable {
        var ok: Bool
    }

    /// A registry holding one AIF-HMAC-signed service per server, named as given.
    /// `extra` adds keys to each service's config.
    static func registry(_ servers: [(ServiceName, RawServer)], extra: String = "") throws -> ServiceRegistry {
        let registry = ServiceRegistry(processEnvironment: [:])
        for (name, server) in servers {
            let json = """
                {"name": "\(name)", \(extra) "environments": {"online": {"baseURL": "http://127.0.0.1:\(server.port)", "apiVersion": "v1",
                 "publicKey": "pk", "privateKey": "${KEY}"}}}
                """
            registry.register(try ServiceRegistry.ConfiguredService.parse(Data(json.utf8), file: "\(name).json", environment: ["KEY": "sk"]))
        }
        return registry
    }

    static func ping(_ service: ServiceName, _ registry: ServiceRegistry, _ proxy: APIProxy) -> APIManager<Ping> {
        APIManager(Endpoint<Ping>(service: service, path: "ping"), proxy: proxy, registry: registry, cache: ResponseCache())
    }

    @Test func twoBackendsWithDifferentClocksOnOneProxy() async throws {
        let ahead = try RawServer(.skewedClock(offset: 3600, tolerance: 300))
        let behind = try RawServer(.skewedClock(offset: -3600, tolerance: 300))
        defer {
            ahead.stop()
            behind.stop()
        }
        let registry = try Self.registry([("ahead", ahead), ("behind", behind)])
        let proxy = APIProxy(transport: CurlTransport.shared)
        // The first request to each is refused once, then signed with the learned time.
        #expect(try await Self.ping("ahead", registry, proxy).load().attempts == 2)
        #expect(try await Self.ping("behind", registry, proxy).load().attempts == 2)
        // Alternating between them, each keeps its own correction: no refusal again.
        for round in 0..<10 {
            let service: ServiceName = round.isMultiple(of: 2) ? "ahead" : "behind"
            let response = try await Self.ping(service, registry, proxy).load()
            #expect(response.attempts == 1, "round \(round), \(service)")
        }
        #expect(ahead.refusedForTime == 1)
        #expect(behind.refusedForTime == 1)
        #expect(abs(registry.clockSkew(of: "ahead", in: .online).offset - 3600) <= 2)
        #expect(abs(registry.clockSkew(of: "behind", in: .online).offset + 3600) <= 2)
    }

    @Test func tenFirstRequestsAtOnceEachSucceedWithOneRetryAtMost() async throws {
        let server = try RawServer(.skewedClock(offset: 3600, tolerance: 300))
        defer { server.stop() }
        let registry = try Self.registry([("ahead", server)])
        let proxy = APIProxy(transport: CurlTransport.shared)
        let attempts = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<10 {
                group.addTask { try await Self.ping("ahead", registry, proxy).load().attempts }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(attempts.count == 10)
        #expect(attempts.allSatisfy { $0 <= 2 })
        #expect(server.refusedForTime == attempts.filter { $0 == 2 }.count)
    }

    @Test func aWronglyLearnedCorrectionIsMendedByTheNextRefusal() async throws {
        let server = try RawServer(.skewedClock(offset: 0, tolerance: 300))
        defer { server.stop() }
        let registry = try Self.registry([("agreeing", server)])
        // Signed an hour off by a correction learned wrongly: refused, and the server's
        // `Date` corrects it — this is about the clock, so it is retried once.
        registry.clockSkew(of: "agreeing", in: .online).record(serverDate: Date().addingTimeInterval(-3600))
        let proxy = APIProxy(transport: CurlTransport.shared)
        #expect(try await Self.ping("agreeing", registry, proxy).load().attempts == 2)
        #expect(server.refusedForTime == 1)
    }

    /// The service's rules read `{"code":4012}` in a 200 body as its veto, and its policies
    /// say the code means a refused signing time.
    static let clockCode = #""applicationErrors": {"codeField": "code"}, "errorPolicies": {"codes": {"4012": "correctClock"}},"#

    @Test func aConfiguredCodeForARefusedTimeIsSignedAgainToo() async throws {
        let server = try RawServer(.skewedClock(offset: -3600, tolerance: 300, refusal: "200 OK"))
        defer { server.stop() }
        let registry = try Self.registry([("coded", server)], extra: Self.clockCode)
        let proxy = APIProxy(transport: CurlTransport.shared)
        let response = try await Self.ping("coded", registry, proxy).load()
        #expect(response.attempts == 2)
        #expect(server.refusedForTime == 1)
        // Learned: the next load is signed right the first time.
        #expect(try await Self.ping("coded", registry, proxy).load().attempts == 1)
        #expect(server.refusedForTime == 1)
    }

    @Test func aConfiguredCodeFromAServerThatAgreesWithOurClockIsDelivered() async throws {
        // The code says "refused time", but the answer's `Date` agrees with ours: signing again
        // would be refused again, so the veto is delivered after one request.
        let server = try RawServer(.skewedClock(offset: 0, tolerance: -1, refusal: "200 OK"))
        defer { server.stop() }
        let registry = try Self.registry([("coded", server)], extra: Self.clockCode)
        let proxy = APIProxy(transport: CurlTransport.shared)
        let error = await #expect(throws: APIError.self) { try await Self.ping("coded", registry, proxy).load() }
        #expect(error?.kind == .serviceVeto)
        #expect(error?.serviceVeto?.code == "4012")
        #expect(error?.attempts == 1)
        #expect(server.refusedForTime == 1)
    }

    @Test func aRefusalThatIsNotAboutTheClockIsNotRetried() async throws {
        // A 401 from a server whose clock agrees with ours is about something else.
        let body = #"{"code":4013,"message":"unknown key"}"#
        let server = try RawServer(.reply(
            "HTTP/1.1 401 Unauthorized\r\nDate: \(ShopRoutes.httpDate(Date()))\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"))
        defer { server.stop() }
        let registry = try Self.registry([("refusing", server)])
        let proxy = APIProxy(transport: CurlTransport.shared)
        let error = await #expect(throws: APIError.self) { try await Self.ping("refusing", registry, proxy).load() }
        #expect(error?.statusCode == 401)
        #expect(error?.attempts == 1)
        #expect(server.acceptedConnections == 1)
    }
}
