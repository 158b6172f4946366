@_spi(CrossModule) @testable import AIFTransport
@testable import TestSupport
import Foundation
import Testing

/// A server that processed a request and then closed the connection without answering: libcurl
/// sends a request again on a fresh connection when the one it reused closed before any byte of
/// the answer. Only a request that is safe to repeat may reach the server twice that way, and
/// every such send is counted.
@Suite("CurlTransport: a request not safe to repeat is sent once")
struct CurlTransportResendTests {
    /// A request the tests send, and how the server records it.
    struct Sent: Sendable, CustomTestStringConvertible {
        let name: String
        let make: @Sendable (URL) throws -> HTTPRequest
        /// `METHOD PATH BODY`, as ``RawServer/processedRequests`` records it.
        let recorded: String

        var testDescription: String { name }

        init(name: String, recorded: String, _ make: @escaping @Sendable (URL) throws -> HTTPRequest) {
            self.name = name
            self.recorded = recorded
            self.make = make
        }

        static let postBytes = Sent(name: "POST with bytes", recorded: "POST /charges amount=100") {
            HTTPRequest(method: .post, url: $0.appending(path: "charges"), body: .bytes(Data("amount=100".utf8)))
        }
        static let postEmpty = Sent(name: "POST with an empty body", recorded: "POST /charges ") {
            HTTPRequest(method: .post, url: $0.appending(path: "charges"))
        }
        static let postFile = Sent(name: "POST with a file", recorded: "POST /uploads file contents") {
            let path = FileManager.default.temporaryDirectory.appending(path: "resend-\(UUID().uuidString).txt").path
            try Data("file contents".utf8).write(to: URL(filePath: path))
            return HTTPRequest(method: .post, url: $0.appending(path: "uploads"), body: .file(path: path))
        }
        static let patch = Sent(name: "PATCH", recorded: "PATCH /orders/7 {\"state\":\"paid\"}") {
            HTTPRequest(method: .patch, url: $0.appending(path: "orders/7"), body: .bytes(Data(#"{"state":"paid"}"#.utf8)))
        }
        static let putStream = Sent(name: "PUT with a streamed body", recorded: "PUT /blobs/1 streamed") {
            let chunks = AsyncStream<Data> { continuation in
                continuation.yield(Data("streamed".utf8))
                continuation.finish()
            }
            return HTTPRequest(method: .put, url: $0.appending(path: "blobs/1"), body: .stream(HTTPRequest.BodyStream(chunks)))
        }
        static let get = Sent(name: "GET", recorded: "GET /balance ") {
            HTTPRequest(url: $0.appending(path: "balance"))
        }
        static let put = Sent(name: "PUT with bytes", recorded: "PUT /orders/7 v2") {
            HTTPRequest(method: .put, url: $0.appending(path: "orders/7"), body: .bytes(Data("v2".utf8)))
        }
        static let delete = Sent(name: "DELETE", recorded: "DELETE /orders/7 ") {
            HTTPRequest(method: .delete, url: $0.appending(path: "orders/7"))
        }
        static let keyedPost = Sent(name: "POST declared idempotent (an idempotency key)", recorded: "POST /charges amount=100") {
            var request = HTTPRequest(
                method: .post, url: $0.appending(path: "charges"), headers: ["Idempotency-Key": "k-1"], body: .bytes(Data("amount=100".utf8)))
            request.isIdempotent = true
            return request
        }
    }

    /// A transport with one connection to the server, and that connection opened by a first
    /// request the server answers: the next request goes over it, reused.
    private func warmedUp(_ server: RawServer) async throws -> (CurlTransport, URL) {
        let transport = makeTransport { $0.connectionPool.maxConnectionsPerHost = 1 }
        let base = URL(string: "http://127.0.0.1:\(server.port)")!
        let warm = try await transport.send(HTTPRequest(url: base.appending(path: "warm")))
        #expect(String(decoding: warm.body, as: UTF8.self) == #"{"ok":1}"#)
        return (transport, base)
    }

    @Test(arguments: [Sent.postBytes, .postEmpty, .postFile, .patch, .putStream])
    func anUnsafeRequestWhoseAnswerIsLostOnAReusedConnectionReachesTheServerOnce(_ sent: Sent) async throws {
        let server = try RawServer(.loseAnswer(afterAnswering: 1))
        defer { server.stop() }
        let (transport, base) = try await warmedUp(server)
        defer { transport.shutdown() }

        let request = try sent.make(base)
        #expect(!request.isIdempotent)
        let error = await #expect(throws: TransportError.self) { try await transport.send(request) }
        #expect(error?.code == .responseLost)
        #expect(error?.detail.contains("may have processed it") == true, "\(String(describing: error))")
        #expect(error?.detail.contains("reused connection") == true)
        #expect(error?.resends == 0)
        #expect(server.processedRequests == ["GET /warm ", sent.recorded], "the server processed the request once")
    }

    @Test(arguments: [Sent.get, .put, .delete, .keyedPost])
    func aRequestSafeToRepeatIsSentAgainOnAFreshConnectionAndCounted(_ sent: Sent) async throws {
        let server = try RawServer(.loseAnswer(afterAnswering: 1))
        defer { server.stop() }
        let (transport, base) = try await warmedUp(server)
        defer { transport.shutdown() }

        let request = try sent.make(base)
        #expect(request.isIdempotent)
        let response = try await transport.send(request)
        // The fresh connection's first request is answered.
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"ok":1}"#)
        #expect(response.metrics.resends == 1, "one send more than the caller asked for, and counted")
        #expect(server.processedRequests == ["GET /warm ", sent.recorded, sent.recorded])
        #expect(server.acceptedConnections == 2)
    }

    @Test(arguments: [Sent.postBytes, .get])
    func anAnswerLostOnAFreshConnectionIsAResponseLostSentOnce(_ sent: Sent) async throws {
        let server = try RawServer(.loseAnswer(afterAnswering: 0))
        defer { server.stop() }
        let transport = makeTransport()
        defer { transport.shutdown() }

        let error = await #expect(throws: TransportError.self) {
            try await transport.send(try sent.make(URL(string: "http://127.0.0.1:\(server.port)")!))
        }
        #expect(error?.code == .responseLost)
        #expect(error?.detail.contains("may have processed it") == true, "\(String(describing: error))")
        #expect(error?.resends == 0)
        // libcurl sends again only over a connection it reused; this one was new.
        #expect(server.processedRequests == [sent.recorded])
    }

    @Test func theCompletionFaceEndsALostAnswerOnceWithoutSendingAgain() async throws {
        let server = try RawServer(.loseAnswer(afterAnswering: 1))
        defer { server.stop() }
        let (transport, base) = try await warmedUp(server)
        defer { transport.shutdown() }

        let calls = Locked(0)
        let result = await sendWithCompletion(transport, try Sent.postBytes.make(base), calls: calls)
        #expect(result.error?.code == .responseLost)
        // A later request on the same transport is not answered in the lost one's place.
        let next = try await transport.send(HTTPRequest(url: base.appending(path: "after")))
        #expect(String(decoding: next.body, as: UTF8.self) == #"{"ok":1}"#)
        #expect(calls.withLock { $0 } == 1)
        #expect(server.processedRequests == ["GET /warm ", Sent.postBytes.recorded, "GET /after "])
    }

    @Test(arguments: [
        (HTTPMethod.get, true), (.head, true), (.options, true), (.put, true), (.delete, true), (.post, false), (.patch, false),
        (HTTPMethod(rawValue: "LOCK"), false), (HTTPMethod(rawValue: "TRACE"), true), (HTTPMethod(rawValue: "get"), false),
    ])
    func idempotenceFollowsTheMethodByDefault(_ method: HTTPMethod, _ idempotent: Bool) {
        var request = HTTPRequest(method: method, url: URL(string: "http://127.0.0.1/")!)
        #expect(request.isIdempotent == idempotent)
        request.isIdempotent = !idempotent
        #expect(request.isIdempotent == !idempotent, "an explicit setting wins")
    }

    @Test func aStreamedBodyIsNeverIdempotentByDefault() {
        let chunks = AsyncStream<Data> { $0.finish() }
        let request = HTTPRequest(method: .put, url: URL(string: "http://127.0.0.1/")!, body: .stream(HTTPRequest.BodyStream(chunks)))
        #expect(!request.isIdempotent, "a stream is sent once: it cannot be sent again")
    }
}
