@_spi(CrossModule) @testable import AIFTransport
@testable import TestSupport
import AIFNetworkingTesting
import Foundation
import Testing

/// Redirects keep what a request means: every method against every redirect status, to the
/// same origin and to another, against a real server that reports what arrived.
@Suite("Redirects: the method, the body and the credentials each status keeps", .timeLimit(.minutes(2)))
struct RedirectTests {
    static let methods: [HTTPMethod] = [.get, .head, .post, .put, .patch, .delete, .options, "PURGE"]

    enum Origin: String, CaseIterable, Sendable {
        case same, cross
    }

    /// What RFC 9110 §15.4 says arrives after `status`: the method, and whether the body does.
    static func expected(_ method: HTTPMethod, after status: Int) -> (method: HTTPMethod, keepsBody: Bool) {
        switch status {
        case 303: (method == .head ? .head : .get, false)
        case 301, 302: method == .post ? (.get, false) : (method, true)
        default: (method, true)
        }
    }

    @Test(arguments: [301, 302, 303, 307, 308], Origin.allCases)
    func everyMethodArrivesAsTheStatusSays(status: Int, origin: Origin) async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        // 127.0.0.1 and localhost are the same server, but two origins.
        let landing = origin == .same ? "/landing" : "http://localhost:\(server.port)/landing"
        let hop = server.url("hop/\(status)?to=\(queryValue(landing))")
        for method in Self.methods {
            let payload = Data("body of \(method) through \(status)".utf8)
            let hasBody = method != .get && method != .head
            var headers: HTTPHeaders = ["Authorization": "Bearer t0ken", "Cookie": "session=abc", "X-Custom": "kept"]
            if hasBody { headers.set(name: "Content-Type", value: "text/plain") }
            let request = HTTPRequest(method: method, url: hop, headers: headers, body: hasBody ? .bytes(payload) : .empty)
            let response = try await transport.send(request)
            let (expectedMethod, keepsBody) = Self.expected(method, after: status)
            let arrivedBody = hasBody && keepsBody
            let context = "\(method) after \(status), \(origin) origin"
            #expect(response.statusCode == 200, "\(context)")
            #expect(response.headers["X-Method"] == expectedMethod.rawValue, "\(context)")
            #expect(response.headers["X-Body-Length"] == "\(arrivedBody ? payload.count : 0)", "\(context)")
            if method != .head && arrivedBody { #expect(response.body == payload, "\(context)") }
            #expect(response.headers["X-Got-Content-Type"] == (arrivedBody ? "text/plain" : "-"), "\(context)")
            #expect(response.headers["X-Got-Authorization"] == (origin == .same ? "Bearer t0ken" : "-"), "\(context)")
            #expect(response.headers["X-Got-Cookie"] == (origin == .same ? "session=abc" : "-"), "\(context)")
            #expect(response.headers["X-Got-X-Custom"] == "kept", "\(context)")
            #expect(response.metrics.redirectCount == 1, "\(context)")
            #expect(response.url.path == "/landing", "\(context)")
        }
    }

    /// The completion-handler face goes through the same loop.
    @Test func theCompletionFaceFollowsTheSameRules() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let calls = Locked(0)
        let request = HTTPRequest(method: .delete, url: server.url("hop/302?to=%2Flanding"), body: .bytes(Data("gone".utf8)))
        let response = try await sendWithCompletion(transport, request, calls: calls).get()
        #expect(response.headers["X-Method"] == "DELETE")
        #expect(response.body == Data("gone".utf8))
        transport.shutdown()   // every completion it will ever run has run
        #expect(calls.withLock { $0 } == 1)
    }

    /// A file body is read again from the start for the next hop.
    @Test func aFileBodyIsSentAgainWhole() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let file = FileManager.default.temporaryDirectory.appending(path: "aif-redirect-\(UUID().uuidString)")
        let payload = Data(TestRoutes.pattern(count: 300_000))
        try payload.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        for status in [301, 307, 308] {
            let response = try await transport.send(HTTPRequest(method: .put, url: server.url("hop/\(status)?to=%2Flanding"), body: .file(path: file.path)))
            #expect(response.headers["X-Method"] == "PUT")
            #expect(response.body == payload, "after \(status)")
        }
    }

    @Test(arguments: ["ftp://127.0.0.1/file", "file:///etc/passwd", "http://", "http://[::1"])
    func aLocationThatCannotBeFollowedIsAnInvalidResponse(location: String) async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let url = server.url("hop/302?to=\(queryValue(location))")
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(url: url))
        }
        #expect(error?.code == .invalidResponse)
        #expect(error?.detail.contains("302") == true)
        #expect(error?.url == url.absoluteString)
    }

    @Test func aRedirectWithoutLocationIsTheAnswer() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let response = try await transport.send(HTTPRequest(url: server.url("status/302")))
        #expect(response.statusCode == 302)
        #expect(response.metrics.redirectCount == 0)
    }

    /// The first request's total timeout bounds the whole chain: two hops of 700 ms each
    /// cannot finish within one second, though each alone would.
    @Test func theTotalTimeoutCoversEveryHop() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let request = HTTPRequest(url: server.url("slow-hop/700?to=%2Fslow%2F700"), timeouts: HTTPRequest.Timeouts(connect: .seconds(5), total: .seconds(1)))
        let started = ContinuousClock.now
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(request)
        }
        #expect(error?.code == .totalTimeout)
        // Cut at the deadline rather than after both hops.
        #expect(ContinuousClock.now - started < .milliseconds(1400))
        // With room for both, the same chain arrives.
        let relaxed = HTTPRequest(url: server.url("slow-hop/100?to=%2Fslow%2F100"), timeouts: HTTPRequest.Timeouts(connect: .seconds(10), total: .seconds(30)))
        #expect(try await transport.send(relaxed).body == Data("slow".utf8))
    }

    /// Cancelling between hops ends the request once, as cancelled.
    @Test func cancellingDuringTheSecondHopEndsOnce() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let results = Collected<Result<HTTPResponse, TransportError>>()
        let tag = Arrivals.tag()
        let task = transport.send(HTTPRequest(url: server.url("hop/302?to=%2Fslow%2F3000%3Ftag%3D\(tag)"))) { results.append($0) }
        await Arrivals.shared.wait(for: tag)   // the second hop is at the server
        let cancelledAt = ContinuousClock.now
        task.cancel()
        _ = await results.wait(count: 1)
        #expect(ContinuousClock.now - cancelledAt < .seconds(2))
        transport.shutdown()   // every completion it will ever run has run
        let ended = results.values
        #expect(ended.count == 1)
        #expect(ended.first?.error?.code == .cancelled)
    }

    /// The async face: cancelling the task during the second hop ends it at once, as cancelled.
    @Test func cancellingTheTaskDuringTheSecondHopEndsIt() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let tag = Arrivals.tag()
        let task = Task { try await transport.send(HTTPRequest(url: server.url("hop/307?to=%2Fslow%2F20000%3Ftag%3D\(tag)"))) }
        await Arrivals.shared.wait(for: tag)   // the second hop is at the server
        let cancelled = ContinuousClock.now
        task.cancel()
        let error = await #expect(throws: TransportError.self) { try await task.value }
        #expect(error?.code == .cancelled)
        // The second hop answers after 20 seconds; the cancellation does not wait for it.
        #expect(ContinuousClock.now - cancelled < .seconds(1))
    }

    /// A cancellation that lands after the first transfer ended but before the redirect loop
    /// attached the next hop still stops that hop: the hops' cancellation is left cancelled.
    @Test func aCancellationBeforeTheNextHopIsAttachedReachesIt() {
        let transfer = Transfer(request: HTTPRequest(url: URL(string: "http://127.0.0.1:9/")!), progress: nil, completion: nil)
        CurlTransport.cancel(transfer, on: nil)
        let nextHop = CancellationProbe()
        transfer.laterHops().attach(nextHop)
        #expect(nextHop.cancellations == 1)

        let untouched = Transfer(request: HTTPRequest(url: URL(string: "http://127.0.0.1:9/")!), progress: nil, completion: nil)
        let hops = untouched.laterHops()
        #expect(untouched.laterHops() === hops)
        let attached = CancellationProbe()
        hops.attach(attached)
        #expect(attached.cancellations == 0)
        CurlTransport.cancel(untouched, on: nil)
        #expect(attached.cancellations == 1)
    }

    // MARK: The rules, without I/O

    /// The same table as ``everyMethodArrivesAsTheStatusSays(status:origin:)``, decided by the
    /// rules alone: every method after every redirect status, to the same origin and another.
    @Test(arguments: [301, 302, 303, 307, 308], Origin.allCases)
    func everyMethodIsRedirectedAsTheStatusSays(status: Int, origin: Origin) throws {
        let from = URL(string: "https://api.example/v1/hop")!
        let location = origin == .same ? "/landing?x=1" : "https://other.example:8443/landing?x=1"
        for method in Self.methods {
            let hasBody = method != .get && method != .head
            var headers: HTTPHeaders = ["Authorization": "Bearer t0ken", "Proxy-Authorization": "Basic cA==", "Cookie": "session=abc", "X-Custom": "kept"]
            if hasBody { headers.set(name: "Content-Type", value: "text/plain") }
            let request = HTTPRequest(method: method, url: from, headers: headers, body: hasBody ? .bytes(Data("payload".utf8)) : .empty)
            let response = HTTPResponse(statusCode: status, headers: ["Location": location], url: from)
            let next = try #require(try request.redirected(by: response))
            let (expectedMethod, keepsBody) = Self.expected(method, after: status)
            let context = "\(method) after \(status), \(origin) origin"
            #expect(next.method == expectedMethod, "\(context)")
            #expect(next.body.byteCount == (hasBody && keepsBody ? 7 : 0), "\(context)")
            #expect(next.headers["Content-Type"] == (hasBody && keepsBody ? "text/plain" : nil), "\(context)")
            for name in ["Authorization", "Proxy-Authorization", "Cookie"] {
                #expect((next.headers[name] != nil) == (origin == .same), "\(context): \(name)")
            }
            #expect(next.headers["X-Custom"] == "kept", "\(context)")
            #expect(next.url.absoluteString == (origin == .same ? "https://api.example/landing?x=1" : location), "\(context)")
        }
    }

    @Test func theRulesAsAFunction() throws {
        let request = HTTPRequest(
            method: .post, url: URL(string: "https://api.example/v1/orders#top")!,
            headers: ["Content-Type": "application/json", "Content-Digest": "sha-256=:x:", "Authorization": "Bearer a"],
            body: .bytes(Data("{}".utf8))
        )
        func response(_ status: Int, _ location: String?) -> HTTPResponse {
            HTTPResponse(statusCode: status, headers: location.map { ["Location": $0] } ?? [:], url: request.url)
        }
        // Not redirects.
        #expect(try request.redirected(by: response(200, "/x")) == nil)
        #expect(try request.redirected(by: response(304, "/x")) == nil)
        #expect(try request.redirected(by: response(302, nil)) == nil)
        // POST after 302: a bodiless GET, content headers gone, the relative target resolved.
        let afterFound = try #require(try request.redirected(by: response(302, "../v2/orders?page=2")))
        #expect(afterFound.method == .get)
        #expect(afterFound.body.byteCount == 0)
        #expect(afterFound.url.absoluteString == "https://api.example/v2/orders?page=2")
        #expect(afterFound.headers["Content-Type"] == nil)
        #expect(afterFound.headers["Content-Digest"] == nil)
        #expect(afterFound.headers["Authorization"] == "Bearer a")
        // POST after 307 keeps everything; across origins the credentials go.
        let afterTemporary = try #require(try request.redirected(by: response(307, "https://other.example/orders")))
        #expect(afterTemporary.method == .post)
        #expect(afterTemporary.body.byteCount == 2)
        #expect(afterTemporary.headers["Content-Type"] == "application/json")
        #expect(afterTemporary.headers["Authorization"] == nil)
        // Another port or scheme is another origin; the default port is the same one.
        #expect(HTTPRequest.sameOrigin(URL(string: "https://a.example/x")!, URL(string: "https://A.EXAMPLE:443/y")!))
        #expect(!HTTPRequest.sameOrigin(URL(string: "https://a.example/x")!, URL(string: "http://a.example/x")!))
        #expect(!HTTPRequest.sameOrigin(URL(string: "http://a.example/x")!, URL(string: "http://a.example:8080/x")!))
    }
}

/// A transfer that only counts how often it is cancelled.
private final class CancellationProbe: CancellableTransfer {
    private let count = Locked(0)

    var cancellations: Int { count.withLock { $0 } }

    func cancel() {
        count.withLock { $0 += 1 }
    }
}

/// `text` percent-encoded as a query value.
private func queryValue(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
}
