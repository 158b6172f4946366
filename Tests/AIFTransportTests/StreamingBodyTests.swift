@testable import AIFTransport
@testable import TestSupport
import Foundation
import Testing

@Suite("Streamed response bodies, lines and server-sent events", .timeLimit(.minutes(2)))
struct StreamingBodyTests {
    private static let transport = CurlTransport(configuration: .init(proxy: .none))

    private static let expectedEvents = [
        HTTPResponse.Streaming.Body.ServerSentEvents.Event(data: "first", retry: .milliseconds(1500)),
        HTTPResponse.Streaming.Body.ServerSentEvents.Event(type: "price", data: "12.5\nEUR", lastEventID: "7", retry: .milliseconds(1500)),
        HTTPResponse.Streaming.Body.ServerSentEvents.Event(data: "", lastEventID: "7", retry: .milliseconds(1500)),
        HTTPResponse.Streaming.Body.ServerSentEvents.Event(type: "last", data: " two spaces", lastEventID: "8", retry: .milliseconds(1500)),
    ]

    @Test func eventsArriveAsTheServerSendsThem() async throws {
        let server = try await TestServers.shared().plain
        let response = try await Self.transport.stream(HTTPRequest(url: server.url("events"), headers: ["Accept": "text/event-stream"]))
        #expect(response.statusCode == 200)
        #expect(response.headers["Content-Type"] == "text/event-stream")
        var events: [HTTPResponse.Streaming.Body.ServerSentEvents.Event] = []
        for try await event in response.body.serverSentEvents { events.append(event) }
        #expect(events == Self.expectedEvents)
    }

    @Test func theParserGivesTheSameEventsWhereverTheBytesAreCut() {
        let bytes = Array(TestRoutes.eventStreamPieces.joined().utf8)
        for cut in 0...bytes.count {
            var splitter = LineSplitter()
            var parser = ServerSentEventParser()
            var events: [HTTPResponse.Streaming.Body.ServerSentEvents.Event] = []
            for piece in [bytes[..<cut], bytes[cut...]] {
                for line in splitter.lines(in: piece) {
                    if let event = parser.feed(line) { events.append(event) }
                }
            }
            #expect(events == Self.expectedEvents, "cut at \(cut)")
        }
    }

    @Test func linesEndAtEveryKindOfBreak() {
        var splitter = LineSplitter()
        #expect(splitter.lines(in: Array("a\nb\r\nc\rd\r".utf8)) == ["a", "b", "c", "d"])
        #expect(splitter.lines(in: Array("\ne\u{00E9}".utf8)) == [])   // the CRLF split in two
        #expect(splitter.finish() == ["e\u{00E9}"])
        var invalid = LineSplitter()
        #expect(invalid.lines(in: [0x61, 0xFF, 0x0A]) == ["a\u{FFFD}"])
    }

    @Test func theHeadComesBeforeTheBodyEnds() async throws {
        // Two chunks of 1 KiB, then the server holds the body open: the call returns with the
        // head, and the chunks can be read, while the body has not ended.
        let server = try await TestServers.shared().plain
        let response = try await Self.transport.stream(HTTPRequest(url: server.url("held/2")))
        #expect(response.statusCode == 200)
        var iterator = response.body.makeAsyncIterator()
        var total = 0
        while total < 2 * 1024, let chunk = try await iterator.next() { total += chunk.count }
        #expect(total == 2 * 1024)
    }

    @Test func aSlowReaderPausesTheTransfer() async throws {
        let content = Data(Digest.randomBytes(4 << 20))
        let server = try RawServer(.resource(RangedResource(.init(content: [UInt8](content)))))
        defer { server.stop() }
        let response = try await Self.transport.stream(HTTPRequest(url: URL(string: "http://127.0.0.1:\(server.port)/big.bin")!), bufferLimit: 256 << 10)
        // Nobody reads: the transfer stops receiving once 256 KiB wait (plus what arrived before
        // the loop applied the hold), and nothing arrives after.
        #expect(await event { tell in response.body.buffer.control.whenReceivingStops { tell(()) } } != nil)
        let waiting = response.body.buffer.bufferedBytes
        #expect(waiting >= 256 << 10 && waiting <= (256 << 10) + (64 << 10), "\(waiting) bytes waiting")
        var whole = Data(capacity: content.count)
        for try await chunk in response.body { whole.append(chunk) }
        #expect(whole == content)
    }

    @Test func aTotalTimeoutNamesTheBodyBytesThatArrivedWhereverTheyWent() async throws {
        // Two KiB, then the server holds the body open until the total timeout (a real one, of
        // a fifth of a second) ends the transfer: the error counts the bytes whether they were
        // kept with the response or handed to a stream's reader.
        let server = try await TestServers.shared().plain
        var request = HTTPRequest(url: server.url("held/2"))
        request.timeouts = HTTPRequest.Timeouts(total: .milliseconds(200))
        let kept = await #expect(throws: TransportError.self) { try await Self.transport.send(request) }
        #expect(kept?.code == .totalTimeout)
        #expect(kept?.description.contains("receiving the response (2048 body bytes so far)") == true, "\(String(describing: kept))")
        let response = try await Self.transport.stream(request)
        var total = 0
        let streamed = await #expect(throws: TransportError.self) {
            for try await chunk in response.body { total += chunk.count }
        }
        #expect(total == 2048)
        #expect(streamed?.code == .totalTimeout)
        #expect(streamed?.description.contains("receiving the response (2048 body bytes so far)") == true, "\(String(describing: streamed))")
    }

    @Test func aBodyCutShortThrowsAfterWhatArrived() async throws {
        let server = try RawServer(.dropMidBody(promised: 10_000, sent: 3_000))
        defer { server.stop() }
        let response = try await Self.transport.stream(HTTPRequest(url: URL(string: "http://127.0.0.1:\(server.port)/")!))
        var bytes = 0
        let error = await #expect(throws: TransportError.self) {
            for try await chunk in response.body { bytes += chunk.count }
        }
        #expect(bytes == 3_000)
        #expect(error?.code == .connectionDropped, "\(String(describing: error))")
    }

    @Test func aResponseWithoutABodyEndsAtOnce() async throws {
        let server = try await TestServers.shared().plain
        let response = try await Self.transport.stream(HTTPRequest(url: server.url("no-content")))
        #expect(response.statusCode == 204)
        #expect(try await response.body.collect(upTo: 1).isEmpty)
    }

    @Test func anErrorStatusStreamsItsBody() async throws {
        let server = try await TestServers.shared().plain
        let response = try await Self.transport.stream(HTTPRequest(url: server.url("redirect/2")))   // followed
        #expect(response.statusCode == 200)
        #expect(try await response.body.collect(upTo: 100) == Data("landed".utf8))
        let missing = try await Self.transport.stream(HTTPRequest(url: server.url("no/such/route")))
        #expect(missing.statusCode == 404)
        _ = try await missing.body.collect(upTo: 1 << 20)
    }

    @Test func lettingGoOfTheStreamCancelsTheTransfer() async throws {
        let server = try await TestServers.shared().plain
        let ended = Collected<TransportError.Code?>()
        var request = HTTPRequest(url: server.url("events?hold=1"))
        request.control = TransferControl()
        do {
            let response = try await Self.transport.stream(request)
            var iterator = response.body.makeAsyncIterator()
            _ = try await iterator.next()
            Task { [buffer = response.body.buffer] in
                do { while try await buffer.next(cancelling: StreamLifetime()) != nil {} } catch { ended.append((error as? TransportError)?.code) }
            }
        }
        // The stream and its iterator are gone: the transfer is cancelled, not held for 30 s.
        #expect(await ended.wait(count: 1) == [.cancelled])
    }

    @Test func cancellingTheReadingTaskCancelsTheTransfer() async throws {
        let server = try await TestServers.shared().plain
        let response = try await Self.transport.stream(HTTPRequest(url: server.url("events?hold=1")))
        let events = Collected<Void>()
        let reader = Task {
            do {
                for try await _ in response.body.serverSentEvents { events.append(()) }
                return TransportError.Code?.none
            } catch {
                return (error as? TransportError)?.code
            }
        }
        // All four arrive; then the server holds the stream open.
        _ = await events.wait(count: Self.expectedEvents.count)
        reader.cancel()
        #expect(await reader.value == .cancelled)
        #expect(events.values.count == Self.expectedEvents.count)
    }
}
