@testable import AIFTransport
@testable import TestSupport
import Foundation
import Testing

/// What a hostile or broken server cannot do to the client: fill its memory, hang it, or be
/// reported as something it is not.
@Suite("CurlTransport: limits and bad responses")
struct CurlTransportLimitsTests {
    @Test func aGarbageStatusLineIsAnInvalidResponse() async throws {
        let server = try RawServer(.reply("GARBAGE NOT HTTP\r\n\r\nwhatever"))
        defer { server.stop() }
        let transport = makeTransport()
        defer { transport.shutdown() }
        let url = URL(string: "http://127.0.0.1:\(server.port)/status")!
        let error = await #expect(throws: TransportError.self) { try await transport.send(HTTPRequest(url: url)) }
        #expect(error?.code == .invalidResponse)
        #expect(error?.url == url.absoluteString)
        #expect(error?.description.contains("not valid HTTP") == true)
    }

    @Test func aHugeResponseHeaderIsNamed() async throws {
        let header = "X-Huge: " + String(repeating: "h", count: 1 << 20)
        let server = try RawServer(.reply("HTTP/1.1 200 OK\r\n\(header)\r\nContent-Length: 2\r\n\r\nok"))
        defer { server.stop() }
        let transport = makeTransport()
        defer { transport.shutdown() }
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(url: URL(string: "http://127.0.0.1:\(server.port)/")!))
        }
        #expect(error?.code == .responseHeadersTooLarge, "\(String(describing: error))")
    }

    /// An endless body stops at the transport's limit (64 MiB unless configured) instead of
    /// filling memory, long before the total timeout; a smaller limit per request stops it
    /// sooner.
    @Test func anEndlessBodyStopsAtTheLimit() async throws {
        #expect(CurlTransport.Configuration().limits.maxResponseBodySize == 64 << 20)
        let server = try RawServer(.endlessBody)
        defer { server.stop() }
        let transport = makeTransport { $0.limits.maxResponseBodySize = 8 << 20 }
        defer { transport.shutdown() }
        let url = URL(string: "http://127.0.0.1:\(server.port)/endless")!
        let started = ContinuousClock.now
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(url: url, timeouts: HTTPRequest.Timeouts(connect: .seconds(5), total: .seconds(60))))
        }
        #expect(error?.code == .responseTooLarge)
        #expect(error?.detail.contains("\(8 << 20) bytes") == true)
        #expect(ContinuousClock.now - started < .seconds(30))
        let small = await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(url: url, maxResponseBodySize: 100_000))
        }
        #expect(small?.code == .responseTooLarge)
        #expect(small?.detail.contains("100000 bytes") == true)
    }

    /// A body that announces more than the limit is refused before it is read; one exactly at
    /// the limit arrives; a transport without a limit takes any size.
    @Test func theLimitCountsExactly() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport { $0.limits.maxResponseBodySize = 1_000 }
        defer { transport.shutdown() }
        #expect(try await transport.send(HTTPRequest(url: server.url("bytes/1000"))).body.count == 1_000)
        let over = await #expect(throws: TransportError.self) { try await transport.send(HTTPRequest(url: server.url("bytes/1001"))) }
        #expect(over?.code == .responseTooLarge)
        // The same limit holds for a body that decompresses past it (8.6 KB from 0.1 KB).
        let unpacked = await #expect(throws: TransportError.self) { try await transport.send(HTTPRequest(url: server.url("gzip"))) }
        #expect(unpacked?.code == .responseTooLarge)
        #expect(try await transport.send(HTTPRequest(url: server.url("bytes/5000"), maxResponseBodySize: 5_000)).body.count == 5_000)
        let unlimited = makeTransport { $0.limits.maxResponseBodySize = nil }
        defer { unlimited.shutdown() }
        #expect(try await unlimited.send(HTTPRequest(url: server.url("bytes/3000000"))).body.count == 3_000_000)
    }

    /// A server that stops sending mid-body is caught by the idle limit, long before the total
    /// one (libcurl averages the speed over five seconds, so bytes just before the stall can
    /// delay it by up to that); a slow but moving body is not.
    @Test func aStalledTransferEndsAtTheIdleLimit() async throws {
        let server = try RawServer(.stallMidBody(promised: 10_000, sent: 100))
        defer { server.stop() }
        let transport = makeTransport()
        defer { transport.shutdown() }
        let started = ContinuousClock.now
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(
                url: URL(string: "http://127.0.0.1:\(server.port)/")!,
                timeouts: HTTPRequest.Timeouts(connect: .seconds(5), total: .seconds(30), idle: .seconds(1))))
        }
        #expect(error?.code == .stalled)
        #expect(error?.isTimeout == true)
        #expect(error?.detail.contains("1 s") == true)
        #expect(ContinuousClock.now - started < .seconds(12))

        // 20 chunks 50 ms apart: a second of transfer that never stalls for long (libcurl
        // averages over five seconds, and the sanitizer's machine starts the body late: a
        // generous idle limit, far below the total one).
        let moving = try await TestServers.shared().plain
        let dripped = try await transport.send(HTTPRequest(
            url: moving.url("drip/20"), timeouts: HTTPRequest.Timeouts(connect: .seconds(5), total: .seconds(120), idle: .seconds(20))))
        #expect(dripped.body.count == 20 * 1024)
    }
}
