@testable import AIFNetworking
@testable import TestSupport
import AIFNetworkingDiskCache
import AIFNetworkingTesting
import Foundation
import HTTPTypes
import Hummingbird
import Testing
@_spi(CrossModule) import AIFTransport

/// The server sample in a process of its own, stopped with SIGTERM in the middle of its loads:
/// the proxy's graceful shutdown through swift-service-lifecycle, as a deploy stops a server.
@Suite("The server sample, stopped with SIGTERM", .timeLimit(.minutes(1)))
struct ServerSampleTests {
    private static var samplePath: String {
        URL(fileURLWithPath: helperPath).deletingLastPathComponent().appending(path: "ServerSample").path
    }

    /// Reads from `handle` until what was read contains `text`, or the stream ends.
    private static func read(_ handle: FileHandle, until text: String, into read: inout String) {
        while !read.contains(text) {
            let chunk = handle.availableData
            if chunk.isEmpty { return }
            read += String(decoding: chunk, as: UTF8.self)
        }
    }

    /// The sample started with `arguments`, once it listens.
    private struct Sample {
        let process = Process()
        let output = Pipe(), errors = Pipe()
        let exits: AsyncStream<Int32>
        let port: Int
        /// What it printed up to its `listening on` line.
        var printed = ""

        init(_ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: ServerSampleTests.samplePath)
            process.arguments = arguments
            process.standardOutput = output
            process.standardError = errors
            let (exits, exited) = AsyncStream<Int32>.makeStream()
            self.exits = exits
            process.terminationHandler = { process in
                exited.yield(process.terminationStatus)
                exited.finish()
            }
            try process.run()
            var text = ""
            ServerSampleTests.read(output.fileHandleForReading, until: "listening on", into: &text)
            guard let port = text.firstMatch(of: /127\.0\.0\.1:(\d+)/).flatMap({ Int($0.1) }) else {
                kill(process.processIdentifier, SIGKILL)
                throw SampleDidNotStart(printed: text)
            }
            self.port = port
            printed = text
        }
    }

    private struct SampleDidNotStart: Error {
        let printed: String
    }

    @Test func everyLoadEndsOnceTheCacheIsKeptAndTheProcessExitsWithinTheDeadline() async throws {
        // The backend: articles below 100 come once the sample is shutting down, the others only
        // once the test opens the gate (after the server has gone).
        let gate = Gate(), shuttingDown = Gate()
        let (arrivals, arrived) = AsyncStream<Int>.makeStream()
        let traceContexts = Locked<[Int: String]>([:])
        let router = Router()
        router.get("v1/goods/:id") { request, context -> Response in
            let id = try context.parameters.require("id", as: Int.self)
            traceContexts.withLock { $0[id] = request.headers[HTTPField.Name("traceparent")!] }
            arrived.yield(id)
            await (id < 100 ? shuttingDown : gate).pass()
            let body = #"{"id":\#(id),"title":"Article \#(id)","price_cents":\#(id * 100)}"#
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        let backend = try await LocalServer.start(router: router)
        let folder = try makeTestFolder("server-sample")
        defer { try? FileManager.default.removeItem(at: folder) }

        let deadline = 2.0
        let sample = try Sample(["--backend", backend.baseURL().absoluteString, "--cache", folder.path, "--deadline", "\(deadline)"])
        let (server, output, errors, exits, port) = (sample.process, sample.output, sample.errors, sample.exits, sample.port)
        defer { if server.isRunning { kill(server.processIdentifier, SIGKILL) } }
        var printed = sample.printed, logged = ""

        let client = CurlTransport(configuration: CurlTransport.Configuration(connectionPool: .init(maxConnectionsPerHost: 32)))
        defer { client.shutdown() }
        /// Each request of a trace of its own, as a caller's tracer would start it.
        @Sendable func traceparent(_ id: Int) -> String {
            "00-" + String(format: "%032x", id) + "-" + String(format: "%016x", id + 1000) + "-01"
        }
        @Sendable func get(_ id: Int) async throws -> AIFNetworking.HTTPResponse {
            var request = AIFNetworking.HTTPRequest(url: URL(string: "http://127.0.0.1:\(port)/goods/\(id)")!)
            request.headers.set(name: "traceparent", value: traceparent(id))
            return try await client.send(request)
        }
        let quick = Array(1...12), slow = Array(100...103)
        let answers = Task {
            try await withThrowingTaskGroup(of: (Int, AIFNetworking.HTTPResponse).self) { group in
                for id in quick + slow { group.addTask { (id, try await get(id)) } }
                return try await group.reduce(into: [Int: AIFNetworking.HTTPResponse]()) { $0[$1.0] = $1.1 }
            }
        }
        // Every load under way at the backend, then the signal.
        var seen = 0
        for await _ in arrivals {
            seen += 1
            if seen == quick.count + slow.count { break }
        }
        let signalled = ContinuousClock.now
        kill(server.processIdentifier, SIGTERM)
        Self.read(errors.fileHandleForReading, until: "shutting down: new loads are refused", into: &logged)
        #expect(logged.contains("16 loads in flight"), "\(logged)")
        // A load asked for during the shutdown is refused, and nothing reaches the backend.
        let refused = try await get(13)
        #expect(refused.statusCode == 503)
        #expect(String(decoding: refused.body, as: UTF8.self).contains(#""error":"shut_down""#))
        // The loads under way before it go on.
        shuttingDown.open()

        let byID = try await answers.value
        // Every load carried its caller's trace context to the backend.
        for id in quick + slow {
            #expect(traceContexts.withLock { $0[id] } == traceparent(id), "article \(id)")
        }
        for id in quick {
            #expect(byID[id]?.statusCode == 200, "article \(id): \(byID[id].map { String(decoding: $0.body, as: UTF8.self) } ?? "no answer")")
        }
        for id in slow {
            #expect(byID[id]?.statusCode == 503, "article \(id)")
            #expect(byID[id].map { String(decoding: $0.body, as: UTF8.self) }?.contains("its deadline passed first") == true)
        }
        var status: Int32?
        for await code in exits { status = code }
        let took = ContinuousClock.now - signalled
        #expect(status == 0)
        // The slow loads kept the shutdown until its deadline, and no longer than a little after.
        #expect(took >= .seconds(deadline), "\(took)")
        #expect(took < .seconds(deadline + 3), "\(took)")
        Self.read(output.fileHandleForReading, until: "sockets left open", into: &printed)
        printed += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        // Each load ended once, as the sample counted: 12 answers and 5 refusals or cancellations;
        // no socket the server opened is left open.
        #expect(printed.contains("stopped: loads shut_down=5 success=12; sockets left open 0"), "\(printed)")

        // Every answer stored on the way is on disk.
        let cache = try DiskCache(directory: folder)
        #expect(cache.usage.entries == quick.count)

        gate.open()
        arrived.finish()
        await backend.stop()
    }

    /// What `make bench` measures: with `--no-cache` every request reaches the backend (by
    /// default an article is kept a minute).
    @Test func withoutItsCacheEveryRequestReachesTheBackend() async throws {
        let arrivals = Locked(0)
        let router = Router()
        router.get("v1/goods/:id") { _, context -> Response in
            let id = try context.parameters.require("id", as: Int.self)
            arrivals.withLock { $0 += 1 }
            let body = #"{"id":\#(id),"title":"Article \#(id)","price_cents":\#(id * 100)}"#
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        let backend = try await LocalServer.start(router: router)
        let sample = try Sample(["--backend", backend.baseURL().absoluteString, "--no-cache", "--deadline", "1"])
        defer { if sample.process.isRunning { kill(sample.process.processIdentifier, SIGKILL) } }
        let client = CurlTransport()
        defer { client.shutdown() }
        for _ in 1...3 {
            let response = try await client.send(AIFNetworking.HTTPRequest(url: URL(string: "http://127.0.0.1:\(sample.port)/goods/7")!))
            #expect(response.statusCode == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == #"{"id":7,"price_cents":700,"title":"Article 7"}"#)
        }
        #expect(arrivals.withLock { $0 } == 3)
        kill(sample.process.processIdentifier, SIGTERM)
        var status: Int32?
        for await code in sample.exits { status = code }
        #expect(status == 0)
        var printed = sample.printed
        Self.read(sample.output.fileHandleForReading, until: "sockets left open", into: &printed)
        #expect(printed.contains("stopped: loads success=3; sockets left open 0"), "\(printed)")
        await backend.stop()
    }
}
