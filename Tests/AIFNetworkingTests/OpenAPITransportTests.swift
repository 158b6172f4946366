@testable import TestSupport
import AIFNetworking
import AIFNetworkingOpenAPI
import AIFNetworkingTesting
@testable import AIFTransport
import DemoServer
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

/// A request as a generated client makes it: method, path and query, headers.
private func openAPIRequest(_ method: HTTPTypes.HTTPRequest.Method, _ path: String, headers: HTTPFields = [:]) -> HTTPTypes.HTTPRequest {
    HTTPTypes.HTTPRequest(method: method, scheme: nil, authority: nil, path: path, headerFields: headers)
}

/// `length sha256 content-type`, as the test routes' `digest` answers for a body.
private func digestLine(of bytes: [UInt8], type: String) -> String {
    "\(bytes.count) \(Digest.hex(Digest.hash(Data(bytes)))) \(type)"
}

@Suite("OpenAPI: the transport on libcurl", .timeLimit(.minutes(2)))
struct CurlClientTransportTests {
    @Test func aResponseBodyStreamsWithItsAnnouncedLength() async throws {
        let server = try await TestServers.shared().plain
        let (response, body) = try await CurlClientTransport().send(openAPIRequest(.get, "/bytes/1000"), body: nil, baseURL: server.baseURL(), operationID: "bytes")
        #expect(response.status == .ok)
        let received = try #require(body)
        #expect(received.length == .known(1000))
        #expect(received.iterationBehavior == .single)
        #expect(try await [UInt8](collecting: received, upTo: 2000) == Array(TestRoutes.pattern(count: 1000)))
    }

    @Test func aSmallBodyOfKnownLengthGoesWhole() async throws {
        let server = try await TestServers.shared().plain
        let bytes = Array(TestRoutes.pattern(count: 5000))
        let (_, body) = try await CurlClientTransport().send(
            openAPIRequest(.post, "/digest", headers: [.contentType: "application/octet-stream"]), body: HTTPBody(bytes), baseURL: server.baseURL(), operationID: "digest")
        #expect(try await String(collecting: try #require(body), upTo: 1000) == digestLine(of: bytes, type: "application/octet-stream"))
    }

    @Test func aBodyOfUnknownLengthStreamsChunked() async throws {
        let server = try await TestServers.shared().plain
        let parts: [[UInt8]] = [Array("first,".utf8), Array(repeating: 0x61, count: 70_000), Array(",last".utf8)]
        let chunks = AsyncStream<ArraySlice<UInt8>> { continuation in
            for part in parts { continuation.yield(ArraySlice(part)) }
            continuation.finish()
        }
        let (_, body) = try await CurlClientTransport().send(
            openAPIRequest(.post, "/digest", headers: [.contentType: "text/plain"]), body: HTTPBody(chunks, length: .unknown), baseURL: server.baseURL(), operationID: "digest")
        #expect(try await String(collecting: try #require(body), upTo: 1000) == digestLine(of: parts.flatMap { $0 }, type: "text/plain"))
    }

    @Test func aLongBodyOfKnownLengthStreamsWithItsLength() async throws {
        let server = try await TestServers.shared().plain
        // 6 MiB, over the 4 MiB collected in memory, produced a chunk at a time.
        let chunk = ArraySlice(TestRoutes.pattern(count: 64 << 10))
        let chunks = AsyncStream<ArraySlice<UInt8>> { continuation in
            for _ in 0..<96 { continuation.yield(chunk) }
            continuation.finish()
        }
        let (_, body) = try await CurlClientTransport().send(
            openAPIRequest(.post, "/digest", headers: [.contentType: "application/octet-stream"]),
            body: HTTPBody(chunks, length: .known(96 * Int64(chunk.count)), iterationBehavior: .single), baseURL: server.baseURL(), operationID: "upload")
        let whole = (0..<96).flatMap { _ in chunk }
        #expect(try await String(collecting: try #require(body), upTo: 1000) == digestLine(of: whole, type: "application/octet-stream"))
    }

    @Test func aFailedStatusIsAnAnswerForTheClient() async throws {
        let server = try await TestServers.shared().plain
        let (response, _) = try await CurlClientTransport().send(openAPIRequest(.get, "/status/404"), body: nil, baseURL: server.baseURL(), operationID: "status")
        #expect(response.status.code == 404)
    }

    @Test func theQueryGoesAsTheClientWroteIt() async throws {
        let server = try await TestServers.shared().plain
        let (response, _) = try await CurlClientTransport().send(
            openAPIRequest(.get, "/landing?ids=1,2&name=caf%C3%A9&plus=a%2Bb"), body: nil, baseURL: server.baseURL(), operationID: "landing")
        #expect(response.headerFields[HTTPField.Name("X-Target")!] == "/landing?ids=1,2&name=caf%C3%A9&plus=a%2Bb")
    }

    @Test func anOperationsTimeoutAndACallsOwn() async throws {
        let server = try await TestServers.shared().plain
        let transport = CurlClientTransport(operationTimeouts: ["slow": AIFTransport.HTTPRequest.Timeouts(total: .milliseconds(300))])
        let started = ContinuousClock.now
        let error = await #expect(throws: TransportError.self) {
            _ = try await transport.send(openAPIRequest(.get, "/slow/3000"), body: nil, baseURL: server.baseURL(), operationID: "slow")
        }
        #expect(error?.code == .totalTimeout)
        #expect(ContinuousClock.now - started < .seconds(2))
        // The call's own timeouts come before the operation's.
        let (response, _) = try await CurlClientTransport.withTimeouts(AIFTransport.HTTPRequest.Timeouts(total: .seconds(10))) {
            try await transport.send(openAPIRequest(.get, "/slow/600"), body: nil, baseURL: server.baseURL(), operationID: "slow")
        }
        #expect(response.status == .ok)
    }

    @Test func cancellingTheReaderEndsTheTransferMidBody() async throws {
        let server = try await TestServers.shared().plain
        // A kibibyte, then a body held open until the client goes.
        let (_, body) = try await CurlClientTransport().send(openAPIRequest(.get, "/held/1"), body: nil, baseURL: server.baseURL(), operationID: "held")
        let stream = try #require(body)
        let chunks = Collected<Int>()
        let reader = Task {
            var received = 0
            for try await chunk in stream {
                received += chunk.count
                chunks.append(chunk.count)
            }
            return received
        }
        _ = await chunks.wait(count: 1)
        reader.cancel()
        // Only the cancellation can end it: the body never ends.
        let outcome = await reader.result
        switch outcome {
        case .success(let received): Issue.record("the body ended normally after \(received) bytes")
        case .failure(let error): #expect(error is CancellationError || (error as? TransportError)?.code == .cancelled, "\(error)")
        }
    }

    @Test func aConnectionRefusedIsATransportError() async throws {
        let closed = try RawServer.closedPort()
        let error = await #expect(throws: TransportError.self) {
            _ = try await CurlClientTransport().send(openAPIRequest(.get, "/"), body: nil, baseURL: URL(string: "http://127.0.0.1:\(closed)")!, operationID: "root")
        }
        #expect(error?.code == .connectionRefused)
    }

    @Test func overHTTP2() async throws {
        let servers = try await TestServers.shared()
        let curl = makeTransport { $0.tls.certificateAuthorities = .file(path: servers.certificates.caPath) }
        defer { curl.shutdown() }
        let (response, body) = try await CurlClientTransport(curl).send(openAPIRequest(.get, "/bytes/100"), body: nil, baseURL: servers.http2.baseURL(secure: true), operationID: "bytes")
        #expect(response.status == .ok)
        #expect(try await [UInt8](collecting: try #require(body), upTo: 200).count == 100)
    }
}

@Suite("OpenAPI: the transport through a service")
struct ServiceClientTransportTests {
    func transport(_ stack: ShopStack) -> ServiceClientTransport {
        ServiceClientTransport(service: "shop", proxy: stack.proxy, registry: stack.registry)
    }

    @Test func aSignedRequestOfTheServicesEnvironment() async throws {
        let stack = try await ShopStack.make()
        // The server URL given is not used: the environment decides.
        let (response, body) = try await transport(stack).send(
            openAPIRequest(.get, "/goods/42", headers: [.accept: "application/json"]), body: nil, baseURL: URL(string: "http://unused.invalid/v9")!, operationID: "getGoods")
        #expect(response.status == .ok)
        let goods = try JSONDecoder().decode(GoodsJSON.self, from: Data(try await [UInt8](collecting: try #require(body), upTo: 10_000)))
        #expect(goods.title == "Milk frother no. 6")
    }

    @Test func aBodyIsSignedAndAStatusIsTheClientsToDecode() async throws {
        let stack = try await ShopStack.make()
        let (placed, placedBody) = try await transport(stack).send(
            openAPIRequest(.post, "/orders", headers: [.contentType: "application/json"]), body: HTTPBody(#"{"goods_id": 42, "quantity": 2}"#),
            baseURL: URL(string: "http://unused.invalid")!, operationID: "placeOrder")
        #expect(placed.status.code == 201)
        #expect(try await String(collecting: try #require(placedBody), upTo: 1000).contains(#""goods_id":42"#))
        let (missing, missingBody) = try await transport(stack).send(openAPIRequest(.get, "/goods/99999"), body: nil, baseURL: URL(string: "http://unused.invalid")!, operationID: "getGoods")
        #expect(missing.status == .notFound)
        #expect(try await String(collecting: try #require(missingBody), upTo: 1000).contains("no such goods"))
    }

    @Test func theServicesRetryPolicyApplies() async throws {
        let stack = try await ShopStack.make()
        let key = "openapi-\(UUID().uuidString)"
        let (response, body) = try await transport(stack).send(openAPIRequest(.get, "/flaky/\(key)?failures=2"), body: nil, baseURL: URL(string: "http://unused.invalid")!, operationID: "flaky")
        #expect(response.status == .ok)
        let report = try JSONDecoder().decode(FlakyReport.self, from: Data(try await [UInt8](collecting: try #require(body), upTo: 10_000)))
        #expect(report.attempts == 3)
        #expect(Set(report.nonces).count == 3, "each attempt signed afresh")
    }

    @Test func aFailureIsTheLoadsAPIError() async throws {
        let stack = try await ShopStack.make(onlineURL: URL(string: "http://127.0.0.1:\(try RawServer.closedPort())")!)
        let transport = ServiceClientTransport(service: "shop", proxy: stack.proxy, registry: stack.registry, operations: ["getGoods": .init(retryPolicy: .never)])
        let error = await #expect(throws: APIError.self) {
            _ = try await transport.send(openAPIRequest(.get, "/goods/1"), body: nil, baseURL: URL(string: "http://unused.invalid")!, operationID: "getGoods")
        }
        #expect(error?.kind == .transport || error?.kind == .noNetwork, "\(String(describing: error))")
        #expect(error?.service == "shop")
    }

    private struct GoodsJSON: Decodable {
        let id: Int
        let title: String
    }
}

@Suite("OpenAPI: the sample's generated client against the demo shop")
struct OpenAPISampleTests {
    @Test func theSampleRunsEveryStep() async throws {
        let sample = URL(fileURLWithPath: helperPath).deletingLastPathComponent().appending(path: "OpenAPISample").path
        let run = try await Shell.run(sample, [], seconds: 120)
        #expect(run.status == 0, "\(run.standardOutput)\n\(run.standardError)")
        for line in [
            "goods 42: Milk frother no. 6, 2544 cents",
            #"goods 99999: 404, the shop says "no such goods""#,
            "cancelled",
            "catalogue.csv: 3025621 bytes, 100301 lines, read as they came",
            "goods 7: Scale no. 1",
            "sleep 2 s with a call's own 300 ms timeout: total timeout",
        ] {
            #expect(run.standardOutput.contains(line), "\(line) in \(run.standardOutput)")
        }
    }

    /// The generated client is committed (see Samples/OpenAPISample/README.md): it must have
    /// been generated from the document and configuration as they are now.
    @Test func theGeneratedClientIsTheDocumentsOfToday() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "Samples/OpenAPISample")
        let document = try Data(contentsOf: folder.appending(path: "openapi.yaml"))
        let configuration = try Data(contentsOf: folder.appending(path: "openapi-generator-config.yaml"))
        let recorded = try String(contentsOf: folder.appending(path: "generated-from.txt"), encoding: .utf8)
        let expected = "openapi.yaml \(Digest.hex(Digest.hash(document)))\nopenapi-generator-config.yaml \(Digest.hex(Digest.hash(configuration)))\nswift-openapi-generator 1.14.3\n"
        #expect(recorded == expected, "the document or its configuration changed: run `make openapi-client` and commit what it writes")
    }
}
