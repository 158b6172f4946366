@_spi(CrossModule) @testable import AIFTransport
@testable import TestSupport
import Foundation
import Testing

@Suite("CurlTransport: requests and responses")
struct CurlTransportRequestTests {
    @Test(arguments: [HTTPMethod.get, .post, .put, .delete, .patch, .options, "PURGE"])
    func everyMethodReachesTheServer(method: HTTPMethod) async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let payload = Data("payload for \(method)".utf8)
        let body: HTTPRequest.Body = method == .get ? .empty : .bytes(payload)
        let response = try await transport.send(HTTPRequest(method: method, url: server.url("echo"), body: body))
        #expect(response.statusCode == 200)
        #expect(response.headers["X-Method"] == method.rawValue)
        #expect(response.body == (method == .get ? Data() : payload))
    }

    /// Easy handles are reused without a reset, so each request must set everything it needs:
    /// sending very different requests one after another (on the same pooled handle) shows that
    /// nothing carries over.
    @Test func nothingCarriesOverBetweenRequestsOnOneHandle() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let file = FileManager.default.temporaryDirectory.appending(path: "aif-reuse-\(UUID().uuidString)")
        try Data("from a file".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let steps: [(HTTPRequest, method: String, body: String)] = [
            (HTTPRequest(method: .post, url: server.url("echo"), headers: ["Content-Type": "text/plain"], body: .bytes(Data("first".utf8))), "POST", "first"),
            (HTTPRequest(url: server.url("echo")), "GET", ""),
            (HTTPRequest(method: .head, url: server.url("echo")), "HEAD", ""),
            (HTTPRequest(url: server.url("echo")), "GET", ""),
            (HTTPRequest(method: "PURGE", url: server.url("echo")), "PURGE", ""),
            (HTTPRequest(url: server.url("echo"), headers: ["X-One-Off": "1"]), "GET", ""),
            (HTTPRequest(method: .put, url: server.url("echo"), body: .file(path: file.path)), "PUT", "from a file"),
            (HTTPRequest(method: .delete, url: server.url("echo")), "DELETE", ""),
            (HTTPRequest(method: .patch, url: server.url("echo"), body: .bytes(Data("patch".utf8))), "PATCH", "patch"),
            (HTTPRequest(url: server.url("echo")), "GET", ""),
        ]
        for (request, method, body) in steps {
            let response = try await transport.send(request)
            #expect(response.headers["X-Method"] == method)
            #expect(String(decoding: response.body, as: UTF8.self) == body, "\(method) got a stale body")
            #expect(response.headers["X-Request-Content-Type"] == (method == "POST" ? "text/plain" : nil))
        }
        let progressCalls = Locked(0)
        _ = try await transport.send(HTTPRequest(url: server.url("bytes/100")), progress: { _ in progressCalls.withLock { $0 += 1 } })
        let before = progressCalls.withLock { $0 }
        _ = try await transport.send(HTTPRequest(url: server.url("bytes/100")))
        #expect(before > 0)
        #expect(progressCalls.withLock { $0 } == before, "a progress handler is not called for a later request")
    }

    /// A URL with a query is handed to libcurl as the URL without its query plus a ready-made
    /// request target, where that writes the same request line libcurl would; these cases,
    /// sent one after another on one pooled handle, must each reach the server exactly.
    @Test func theRequestTargetIsExactlyTheURLsPathAndQuery() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport { $0.redirects = .never }
        defer { transport.shutdown() }
        let base = server.url("").absoluteString
        let cases: [(url: String, redirects: HTTPRequest.RedirectPolicy?, target: String)] = [
            (base + "echo?b=2&a=%20x&sign=0123456789abcdef", nil, "/echo?b=2&a=%20x&sign=0123456789abcdef"),
            (base + "echo", nil, "/echo"),
            (base + "echo?", nil, "/echo?"),
            (base + "skip/../echo?q=1", nil, "/echo?q=1"),
            (base + "echo?q=1#fragment", nil, "/echo?q=1"),
            (base + "echo?q=%C3%A9&empty=", nil, "/echo?q=%C3%A9&empty="),
            (base + "echo?after=redirects", .follow(max: 3), "/echo?after=redirects"),
            (base + "echo?last=1", nil, "/echo?last=1"),
        ]
        for (url, redirects, target) in cases {
            let response = try await transport.send(HTTPRequest(url: URL(string: url)!, redirects: redirects))
            #expect(response.statusCode == 200, "\(url)")
            #expect(response.headers["X-Target"] == target, "\(url)")
        }
        // Followed redirects must not reuse a previous request's target.
        let redirected = try await transport.send(HTTPRequest(url: URL(string: base + "redirect/2?from=test")!, redirects: .follow(max: 3)))
        #expect(String(decoding: redirected.body, as: UTF8.self) == "landed")
        let returned = try await transport.send(HTTPRequest(url: URL(string: base + "redirect/2?from=test")!))
        #expect(returned.statusCode == 302)
    }

    @Test func headReturnsHeadersWithoutABody() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let response = try await transport.send(HTTPRequest(method: .head, url: server.url("echo")))
        #expect(response.statusCode == 200)
        #expect(response.headers["X-Method"] == "HEAD")
        #expect(response.body.isEmpty)
    }

    @Test func emptyBodiedPostSendsAZeroContentLength() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let response = try await transport.send(HTTPRequest(method: .post, url: server.url("echo")))
        #expect(response.headers["X-Body-Length"] == "0")
        #expect(response.headers["X-Request-Content-Type"] == nil, "libcurl's default form content type must not be sent")
    }

    @Test(arguments: [0, 1, 65_536, 50 << 20])
    func downloadsBodiesOfEverySize(size: Int) async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let response = try await transport.send(HTTPRequest(url: server.url("bytes/\(size)")))
        #expect(response.statusCode == 200)
        #expect(response.body.count == size)
        #expect(response.body == Data(TestRoutes.pattern(count: size)))
    }

    @Test(arguments: [0, 1, 65_536, 50 << 20])
    func uploadsBodiesOfEverySize(size: Int) async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let payload = Data(TestRoutes.pattern(count: size))
        let response = try await transport.send(
            HTTPRequest(method: .put, url: server.url("echo"), headers: ["Content-Type": "application/octet-stream"], body: .bytes(payload))
        )
        #expect(response.headers["X-Body-Length"] == "\(size)")
        #expect(response.headers["X-Request-Content-Type"] == "application/octet-stream")
        #expect(response.body == payload)
    }

    @Test func streamsAnUploadFromAFile() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let payload = Data(TestRoutes.pattern(count: 5 << 20))
        let file = FileManager.default.temporaryDirectory.appending(path: "aif-upload-\(UUID().uuidString)")
        try payload.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let response = try await transport.send(HTTPRequest(method: .post, url: server.url("echo"), body: .file(path: file.path)))
        #expect(response.headers["X-Body-Length"] == "\(payload.count)")
        #expect(response.body == payload)
    }

    /// A handle keeps the header list of its last request with headers of its own and sends it
    /// again for the same headers: one connection (so one handle at a time) sends the same
    /// headers, others, none, a request refused for a bad header, and the first again; each
    /// request must arrive with its own headers and nothing of another's.
    @Test func aKeptHeaderListIsSentOnlyWithTheSameHeaders() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport { $0.connectionPool.maxConnectionsPerHost = 1 }
        defer { transport.shutdown() }
        func received(_ headers: HTTPHeaders) async throws -> [String] {
            let response = try await transport.send(HTTPRequest(url: server.url("headers"), headers: headers))
            return String(decoding: response.body, as: UTF8.self).lowercased().split(separator: "\n").map(String.init)
                .filter { $0.hasPrefix("x-") || $0.hasPrefix("authorization") }.sorted()
        }
        let first: HTTPHeaders = ["Authorization": "Bearer one", "X-Trace": "a"]
        #expect(try await received(first) == ["authorization: bearer one", "x-trace: a"])
        #expect(try await received(first) == ["authorization: bearer one", "x-trace: a"])
        #expect(try await received(["Authorization": "Bearer two", "X-Trace": "a"]) == ["authorization: bearer two", "x-trace: a"])
        #expect(try await received(["X-Trace": "a"]) == ["x-trace: a"])
        #expect(try await received([:]) == [])
        let refused = await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(url: server.url("headers"), headers: ["X-Trace": "a\r\nX-Injected: 1"]))
        }
        #expect(refused?.code == .invalidRequest)
        #expect(try await received(first) == ["authorization: bearer one", "x-trace: a"])
        #expect(try await received(["x-trace": "a", "Authorization": "Bearer one"]) == ["authorization: bearer one", "x-trace: a"])
    }

    @Test func headersRoundTrip() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport { $0.defaultHeaders = ["User-Agent": "default-agent", "X-Default": "kept"] }
        defer { transport.shutdown() }
        let response = try await transport.send(
            HTTPRequest(url: server.url("headers"), headers: ["user-agent": "my-agent", "X-Trace-ID": "abc 123", "X-Blank": ""])
        )
        let received = String(decoding: response.body, as: UTF8.self).lowercased()
        #expect(received.contains("user-agent: my-agent"))
        #expect(!received.contains("default-agent"))
        #expect(received.contains("x-default: kept"))
        #expect(received.contains("x-trace-id: abc 123"))
        #expect(received.contains("x-blank: "))
        // Multi-valued and case-insensitive on the way back.
        #expect(response.headers.values(for: "set-cookie") == ["a=1", "b=2"])
        #expect(response.headers["x-custom-reply"] == "Mixed Case Value")
        #expect(response.headers["X-CUSTOM-REPLY"] == "Mixed Case Value")
    }

    @Test func gzipBodiesAreDecodedTransparently() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let response = try await transport.send(HTTPRequest(url: server.url("gzip")))
        #expect(response.headers["Content-Encoding"] == "gzip")
        #expect(String(decoding: response.body, as: UTF8.self) == TestRoutes.gzipPlainText)
        #expect(response.metrics.bytesReceived < response.body.count, "the wire carried the compressed form")
    }

    @Test func decompressionCanBeTurnedOff() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport { $0.decompression = .disabled }
        defer { transport.shutdown() }
        let response = try await transport.send(HTTPRequest(url: server.url("gzip")))
        #expect(Array(response.body.prefix(2)) == [0x1F, 0x8B])
    }

    @Test func acceptEncodingIsSentOnceWithEveryEncodingLibcurlUndoes() async throws {
        let server = try await TestServers.shared().plain
        // What libcurl says it was built with, independently of how the transport words it.
        let features = CurlTransport.Library.current.features
        var expected: [String] = []
        if features.contains("libz") { expected += ["deflate", "gzip"] }
        if features.contains("brotli") { expected.append("br") }
        if features.contains("zstd") { expected.append("zstd") }
        try #require(!expected.isEmpty, "this libcurl undoes no encoding")
        func acceptEncodingLines(_ transport: CurlTransport, _ headers: HTTPHeaders) async throws -> [String] {
            let response = try await transport.send(HTTPRequest(url: server.url("headers"), headers: headers))
            return String(decoding: response.body, as: UTF8.self).split(separator: "\n")
                .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                .filter { $0.lowercased().hasPrefix("accept-encoding:") }
        }
        let transport = makeTransport()
        defer { transport.shutdown() }
        // A request with no headers of its own (the shared list) and one with some.
        for headers: HTTPHeaders in [[:], ["X-Trace-ID": "1"]] {
            let lines = try await acceptEncodingLines(transport, headers)
            #expect(lines.map { $0.lowercased() } == ["accept-encoding: " + expected.joined(separator: ", ")])
        }
        // The request's own value replaces it, and the default headers' too.
        #expect(try await acceptEncodingLines(transport, ["accept-encoding": "identity"]).map { $0.lowercased() } == ["accept-encoding: identity"])
        let asked = makeTransport { $0.defaultHeaders = ["Accept-Encoding": "gzip"] }
        defer { asked.shutdown() }
        #expect(try await acceptEncodingLines(asked, [:]).map { $0.lowercased() } == ["accept-encoding: gzip"])
        let plain = makeTransport { $0.decompression = .disabled }
        defer { plain.shutdown() }
        #expect(try await acceptEncodingLines(plain, [:]).isEmpty)
        // A request that names its own encodings still gets the body decoded.
        let response = try await transport.send(HTTPRequest(url: server.url("gzip"), headers: ["accept-encoding": "gzip"]))
        #expect(String(decoding: response.body, as: UTF8.self) == TestRoutes.gzipPlainText)
    }

    @Test func redirectsAreFollowed() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let response = try await transport.send(HTTPRequest(url: server.url("redirect/3")))
        #expect(response.statusCode == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "landed")
        #expect(response.metrics.redirectCount == 3)
        #expect(response.url.path == "/redirect/0")
    }

    @Test func redirectsCanBeReturnedInsteadOfFollowed() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport { $0.redirects = .never }
        defer { transport.shutdown() }
        let response = try await transport.send(HTTPRequest(url: server.url("redirect/2")))
        #expect(response.statusCode == 302)
        #expect(response.headers["Location"] == "/redirect/1")
    }

    @Test func tooManyRedirectsIsAnError() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let url = server.url("redirect/5")
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(url: url, redirects: .follow(max: 2)))
        }
        #expect(error?.code == .tooManyRedirects)
        #expect(error?.url == url.absoluteString)
        #expect(error?.detail.contains("more than 2 redirects") == true)
        #expect(error?.detail.contains("/redirect/3") == true)
    }

    @Test func temporaryRedirectResendsTheBody() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let payload = Data("resent after 307".utf8)
        let response = try await transport.send(HTTPRequest(method: .post, url: server.url("redirect-307"), body: .bytes(payload)))
        #expect(response.headers["X-Method"] == "POST")
        #expect(response.body == payload)
    }

    /// A small body is handed to libcurl to send with the head, a large one is read a piece at
    /// a time: one after the other on one handle, with requests without bodies between, each
    /// must arrive whole, with its own method and nothing of another's body.
    @Test func smallBodiesGoWithTheHeadAndLargeOnesAreReadWhateverCameBefore() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport { $0.connectionPool.maxConnectionsPerHost = 1 }
        defer { transport.shutdown() }
        let large = Data((0..<(200 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let limit = Data(repeating: UInt8(ascii: "z"), count: (64 << 10) - 1)
        let steps: [(method: HTTPMethod, body: HTTPRequest.Body, expected: Data)] = [
            (.post, .bytes(Data("small".utf8)), Data("small".utf8)),
            (.post, .bytes(large), large),
            (.get, .empty, Data()),
            (.post, .bytes(Data()), Data()),
            (.put, .bytes(Data("put".utf8)), Data("put".utf8)),
            (.post, .empty, Data()),
            ("PURGE", .empty, Data()),
            (.patch, .bytes(limit), limit),
            (.post, .bytes(Data("again".utf8)), Data("again".utf8)),
            (.delete, .empty, Data()),
        ]
        for (method, body, expected) in steps {
            let reports = Locked([TransferProgress]())
            let response = try await transport.send(
                HTTPRequest(method: method, url: server.url("echo"), headers: ["Content-Type": "application/octet-stream"], body: body),
                progress: { progress in reports.withLock { $0.append(progress) } })
            #expect(response.headers["X-Method"] == method.rawValue)
            #expect(response.headers["X-Body-Length"] == "\(expected.count)", "\(method) \(expected.count)")
            #expect(response.body == expected, "\(method) \(expected.count)")
            #expect(response.headers["X-Request-Expect"] == nil, "no wait for 100 Continue")
            #expect(response.headers["X-Request-Content-Type"] == "application/octet-stream")
            if !expected.isEmpty {
                #expect(reports.withLock { $0.last?.bytesSent } == Int64(expected.count), "\(method) \(expected.count)")
                #expect(reports.withLock { $0.contains { $0.totalBytesToSend == Int64(expected.count) } }, "\(method) \(expected.count)")
                #expect(response.metrics.bytesSent > expected.count, "the head and the body")
            }
        }
    }

    @Test func aSmallBodyWithoutAContentTypeGetsNoneInvented() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let response = try await transport.send(HTTPRequest(method: .post, url: server.url("echo"), body: .bytes(Data("a=1".utf8))))
        #expect(response.body == Data("a=1".utf8))
        #expect(response.headers["X-Request-Content-Type"] == nil, "libcurl's form type must not be sent")
        #expect(response.headers["X-Request-Expect"] == nil)
    }

    @Test func progressIsReportedBothWays() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let reports = Locked([TransferProgress]())
        let size = 2 << 20
        _ = try await transport.send(
            HTTPRequest(method: .post, url: server.url("echo"), body: .bytes(Data(count: size))),
            progress: { progress in reports.withLock { $0.append(progress) } }
        )
        let all = reports.withLock { $0 }
        #expect(!all.isEmpty)
        #expect(all.last?.bytesSent == Int64(size))
        #expect(all.last?.bytesReceived == Int64(size))
        #expect(all.contains { $0.totalBytesToSend == Int64(size) })
        let received = all.map(\.bytesReceived)
        #expect(received == received.sorted(), "progress never goes backwards")
    }

    @Test func metricsDescribeTheTransfer() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let response = try await transport.send(HTTPRequest(url: server.url("bytes/1000")))
        let metrics = response.metrics
        #expect(response.httpVersion == .http1_1)
        #expect(metrics.total > .zero)
        #expect(metrics.connect <= metrics.timeToFirstByte)
        #expect(metrics.timeToFirstByte <= metrics.total)
        #expect(metrics.bytesReceived > 1000)
        #expect(metrics.bytesSent > 0)
        #expect(!metrics.reusedConnection)
    }

    @Test func completionHandlersAndAsyncShareOneTransport() async throws {
        let server = try await TestServers.shared().plain
        let transport = makeTransport()
        defer { transport.shutdown() }
        let calls = Locked(0)
        let result = await sendWithCompletion(transport, HTTPRequest(url: server.url("bytes/10")), calls: calls)
        let response = try result.get()
        #expect(response.body.count == 10)
        transport.shutdown()   // every completion it will ever run has run
        #expect(calls.withLock { $0 } == 1)
    }
}
