@testable import TestSupport
@testable import AIFNetworking
@testable import AIFServices
@_spi(CrossModule) @testable import AIFTransport
import AIFNetworkingTesting
import DemoServer
import Foundation
import Testing

@Suite("Request bodies streamed from an AsyncSequence")
struct StreamedUploadTests {
    private static let transport = CurlTransport(configuration: .init(proxy: .none))

    private struct ProducerFailed: Error, CustomStringConvertible {
        var description: String { "the microphone was unplugged" }
    }

    /// `count` chunks of `size` random bytes; and all of them, to compare. With `sent` (the
    /// upload's progress, bytes sent), a producer slower than the upload: each chunk is made
    /// only once the transport has sent every byte before it, so that the upload waits for each.
    private static func chunks(
        _ count: Int, of size: Int, pacedBy sent: AsyncStream<Int64>? = nil, thenThrow: Bool = false
    ) -> (AsyncThrowingStream<Data, any Error>, Data) {
        let pieces = (0..<count).map { _ in Data(Digest.randomBytes(size)) }
        let stream = AsyncThrowingStream<Data, any Error> { continuation in
            let task = Task {
                var reports = sent?.makeAsyncIterator()
                var produced: Int64 = 0
                for piece in pieces {
                    while produced > 0, let report = await reports?.next(), report < produced {}
                    continuation.yield(piece)
                    produced += Int64(piece.count)
                }
                continuation.finish(throwing: thenThrow ? ProducerFailed() : nil)
            }
            continuation.onTermination = { _ in task.cancel() }
        }
        var whole = Data(capacity: count * size)
        for piece in pieces { whole.append(piece) }
        return (stream, whole)
    }

    /// The digest route's answer for a body: its length and SHA-256.
    private static func digest(of response: HTTPResponse) -> (Int, String) {
        let words = String(decoding: response.body, as: UTF8.self).split(separator: " ")
        return (Int(words.first ?? "") ?? -1, words.count > 1 ? String(words[1]) : "")
    }

    @Test(.timeLimit(.minutes(1)))
    func aBodyOfUnknownLengthGoesChunkedAsItIsProduced() async throws {
        let server = try await TestServers.shared().plain
        // A slow producer: the upload waits for each chunk.
        let (reports, report) = AsyncStream<Int64>.makeStream()
        let (chunks, whole) = Self.chunks(30, of: 10_000, pacedBy: reports)
        let request = HTTPRequest(method: .post, url: server.url("digest"), body: .stream(HTTPRequest.BodyStream(chunks)))
        let sent = Locked<Int64>(0)
        let response = try await Self.transport.send(request) { progress in
            sent.withLock { $0 = progress.bytesSent }
            report.yield(progress.bytesSent)
        }
        report.finish()
        #expect(response.statusCode == 200)
        let (length, hash) = Self.digest(of: response)
        #expect(length == whole.count)
        #expect(hash == Digest.hex(Digest.hash(whole)))
        #expect(sent.withLock { $0 } == Int64(whole.count))
    }

    @Test func aLargeFastBodyStaysWithinItsBuffer() async throws {
        let server = try await TestServers.shared().plain
        let (chunks, whole) = Self.chunks(64, of: 64 << 10)   // 4 MiB as fast as it can
        let stream = HTTPRequest.BodyStream(chunks, length: Int64(whole.count), bufferLimit: 128 << 10)
        let response = try await Self.transport.send(HTTPRequest(method: .put, url: server.url("echo"), body: .stream(stream)))
        #expect(response.headers["X-Body-Length"] == "\(whole.count)")
        #expect(response.body == whole)
        #expect(stream.pipe.mostBuffered <= (128 << 10) + (64 << 10))
    }

    @Test func aLengthTheStreamDoesNotKeepFailsTheRequest() async throws {
        let server = try await TestServers.shared().plain
        for (announced, what) in [(Int64(50_000), "ended after 40000 of the 50000 bytes announced"), (Int64(30_000), "more than the 30000 bytes announced")] {
            let (chunks, _) = Self.chunks(4, of: 10_000)
            let request = HTTPRequest(method: .post, url: server.url("digest"), body: .stream(HTTPRequest.BodyStream(chunks, length: announced)))
            let error = await #expect(throws: TransportError.self) { try await Self.transport.send(request) }
            #expect(error?.code == .bodySourceFailed)
            #expect(error?.description.contains(what) == true, "\(String(describing: error))")
        }
    }

    @Test func anErrorOfTheSequenceFailsTheRequestWithItsDescription() async throws {
        let server = try await TestServers.shared().plain
        let (chunks, _) = Self.chunks(3, of: 1_000, thenThrow: true)
        let request = HTTPRequest(method: .post, url: server.url("digest"), body: .stream(HTTPRequest.BodyStream(chunks)))
        let error = await #expect(throws: TransportError.self) { try await Self.transport.send(request) }
        #expect(error?.code == .bodySourceFailed)
        #expect(error?.description.contains("the request body stream failed: the microphone was unplugged") == true, "\(String(describing: error))")
    }

    @Test func aStreamIsSentOnce() async throws {
        let server = try await TestServers.shared().plain
        let (chunks, _) = Self.chunks(2, of: 1_000)
        let request = HTTPRequest(method: .post, url: server.url("redirect-307"), body: .stream(HTTPRequest.BodyStream(chunks)))
        let error = await #expect(throws: TransportError.self) { try await Self.transport.send(request) }
        #expect(error?.code == .bodySourceFailed)
        #expect(error?.description.contains("a stream is sent once") == true, "\(String(describing: error))")
    }

    @Test func aStreamedUploadAnswered503FailsWithTheAnswerAndSaysWhyItWasNotRetried() async throws {
        let servers = try await TestServers.shared()
        let registry = ServiceRegistry(processEnvironment: [:])
        registry.register(PlainService(baseURL: servers.plain.baseURL()))
        let manager = APIManager(Endpoint<NoContent>(service: "plain", path: "status/503", method: .put), proxy: APIProxy(), registry: registry)
        let (chunks, _) = Self.chunks(4, of: 1_000)
        let error = await #expect(throws: APIError.self) { try await manager.load(sending: .stream(HTTPRequest.BodyStream(chunks))) }
        #expect(error?.kind == .httpStatus)
        #expect(error?.statusCode == 503)
        #expect(error?.attempts == 1)
        #expect(error?.message.contains("not retried: the server answered 503; the request body is a stream, which is sent once") == true, "\(String(describing: error))")
    }

    /// An endless body whose chunks are made only when the upload asks for the next one.
    private struct PulledChunks: AsyncSequence, Sendable {
        /// One entry a chunk pulled.
        let pulls: Collected<Void>
        /// How many chunks had been pulled when the reader let go of the sequence.
        let released: Collected<Int>

        func makeAsyncIterator() -> Iterator { Iterator(pulls: pulls, released: released) }

        final class Iterator: AsyncIteratorProtocol {
            let pulls: Collected<Void>
            let released: Collected<Int>

            init(pulls: Collected<Void>, released: Collected<Int>) {
                (self.pulls, self.released) = (pulls, released)
            }

            func next() async throws -> Data? {
                pulls.append(())
                return Data(count: 4096)
            }

            deinit { released.append(pulls.values.count) }
        }
    }

    /// Cancelling an upload under way stops its reading of the body's sequence. The body is
    /// made as it is asked for, so that the chunks counted are the ones the upload took: an
    /// `AsyncStream` fed by a task of its own (as this test first had) goes on filling its buffer
    /// whether anyone reads it or not, and under the thread sanitizer the cancellation could come
    /// before the upload had begun reading, so the stream was never read, never ended, and its
    /// task went on (CI, once: 63 chunks against 26).
    @Test(.timeLimit(.minutes(2)))
    func cancellingTheUploadStopsTheProducer() async throws {
        let server = try RawServer(.silent)   // reads, never answers
        defer { server.stop() }
        let pulls = Collected<Void>()
        let released = Collected<Int>()
        let request = HTTPRequest(
            method: .post, url: URL(string: "http://127.0.0.1:\(server.port)/")!,
            body: .stream(HTTPRequest.BodyStream(PulledChunks(pulls: pulls, released: released))))
        let task = Task { try await Self.transport.send(request) }
        _ = await pulls.wait(count: 6)
        task.cancel()
        let result = await task.result
        guard case .failure(let error) = result else { Issue.record("the upload succeeded"); return }
        #expect((error as? TransportError)?.code == .cancelled)
        // The upload lets go of the body's sequence: nothing reads it any more.
        let pulledThen = await released.wait(count: 1)
        #expect(pulledThen.count == 1)
        #expect(pulls.values.count == pulledThen.first, "the upload went on reading the body after letting go of it")
    }

    @Test func signersThatHashTheBodyRefuseAStream() throws {
        let (chunks, _) = Self.chunks(1, of: 10)
        let request = HTTPRequest(method: .post, url: URL(string: "https://api.example.com/v1/ingest")!, body: .stream(HTTPRequest.BodyStream(chunks)))
        let credentials = SigningContext.Credentials(publicKey: "key", privateKey: Secret("secret"))
        let error = #expect(throws: SigningError.self) { try AIFHMACSigner().sign(request, credentials: credentials, context: .now()) }
        #expect(error?.description.contains("a streamed body cannot be signed") == true)
        #expect(request.curlCommand().contains("--data-binary @-"))
        #expect(request.curlCommand().contains("Transfer-Encoding: chunked"))
    }
}
