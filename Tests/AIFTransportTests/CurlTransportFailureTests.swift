@testable import AIFTransport
@testable import TestSupport
import Foundation
import Testing

@Suite("CurlTransport: failures end with a clear error")
struct CurlTransportFailureTests {
    @Test func closedPortIsConnectionRefused() async throws {
        let port = try RawServer.closedPort()
        let transport = makeTransport()
        defer { transport.shutdown() }
        let url = URL(string: "http://127.0.0.1:\(port)/nothing")!
        let error = await #expect(throws: TransportError.self) { try await transport.send(HTTPRequest(url: url)) }
        #expect(error?.code == .connectionRefused)
        #expect(error?.isCannotConnect == true)
        #expect(error?.url == url.absoluteString)
        #expect(error?.curlCode == 7)
        #expect(error?.description.contains("127.0.0.1") == true)
    }

    @Test func aHandshakeThatNeverCompletesIsAConnectTimeout() async throws {
        // The TCP connection succeeds but the server never speaks TLS, so the connection phase
        // (which includes the handshake) cannot finish.
        let silent = try RawServer(.silent)
        defer { silent.stop() }
        let transport = makeTransport()
        defer { transport.shutdown() }
        let started = ContinuousClock.now
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(
                url: URL(string: "https://127.0.0.1:\(silent.port)/")!,
                timeouts: HTTPRequest.Timeouts(connect: .milliseconds(300), total: .seconds(20))
            ))
        }
        #expect(error?.code == .connectTimeout)
        #expect(error?.isTimeout == true)
        // At the 300 ms connect timeout, not the 20 s total.
        #expect(ContinuousClock.now - started < .milliseconds(1300))
    }

    @Test func aSlowResponseIsATotalTimeout() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let started = ContinuousClock.now
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(url: server.url("slow/20000"), timeouts: HTTPRequest.Timeouts(connect: .seconds(5), total: .milliseconds(300))))
        }
        #expect(error?.code == .totalTimeout)
        #expect(ContinuousClock.now - started < .milliseconds(1300))
    }

    @Test func aSlowServerWithinTheLimitIsFine() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport { $0.timeouts = HTTPRequest.Timeouts(connect: .seconds(30), total: .seconds(30)) }
        defer { transport.shutdown() }
        let response = try await transport.send(HTTPRequest(url: server.url("slow/200")))
        #expect(String(decoding: response.body, as: UTF8.self) == "slow")
    }

    @Test func aConnectionDroppedMidBodyIsReported() async throws {
        let dropping = try RawServer(.dropMidBody(promised: 100_000, sent: 1_000))
        defer { dropping.stop() }
        let transport = makeTransport()
        defer { transport.shutdown() }
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(url: URL(string: "http://127.0.0.1:\(dropping.port)/partial")!))
        }
        #expect(error?.code == .connectionDropped)
        // A short body (18, CURLE_PARTIAL_FILE) or, when the close races the read, a reset
        // (56, CURLE_RECV_ERROR): both are the server going away mid-response.
        #expect(error?.curlCode == 18 || error?.curlCode == 56)
    }

    @Test(arguments: ["ftp://127.0.0.1/file", "http://"])
    func invalidURLsAreRejected(text: String) async throws {
        let transport = makeTransport()
        defer { transport.shutdown() }
        let url = try #require(URL(string: text))
        let error = await #expect(throws: TransportError.self) { try await transport.send(HTTPRequest(url: url)) }
        #expect(error?.code == .invalidURL)
    }

    @Test func aHeaderWithALineBreakIsRefusedBeforeSending() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(url: server.url("headers"), headers: ["X-Evil": "a\r\nX-Injected: 1"]))
        }
        #expect(error?.code == .invalidRequest)
        #expect(error?.detail.contains("X-Evil") == true)
    }

    @Test func aMissingBodyFileIsNamed() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let path = "/nonexistent/aif-body-\(UUID().uuidString)"
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(method: .post, url: server.url("echo"), body: .file(path: path)))
        }
        #expect(error?.code == .bodySourceFailed)
        #expect(error?.detail.contains(path) == true)
    }

    @Test func anHTTPErrorStatusIsAResponseNotAnError() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let response = try await transport.send(HTTPRequest(url: server.url("status/503")))
        #expect(response.statusCode == 503)
        #expect(!response.isSuccess)
    }

    @Test func theTransportKeepsWorkingAfterFailures() async throws {
        let server = try await TestServers.shared().plain
        let port = try RawServer.closedPort()
        let transport = makeTransport()
        defer { transport.shutdown() }
        for _ in 0..<3 {
            _ = try? await transport.send(HTTPRequest(url: URL(string: "http://127.0.0.1:\(port)/")!))
            let response = try await transport.send(HTTPRequest(url: server.url("bytes/5")))
            #expect(response.body.count == 5)
        }
    }
}
