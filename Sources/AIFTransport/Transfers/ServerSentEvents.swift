import Foundation

extension HTTPResponse.Streaming.Body {
    /// The body as lines of UTF-8 text (invalid bytes replaced), without their line breaks —
    /// LF, CRLF or a lone CR — the last one yielded even without a break after it.
    public var lines: Lines {
        Lines(body: self)
    }

    /// The body as a stream of server-sent events (`text/event-stream`), parsed as the HTML
    /// standard says: `data` lines joined with line breaks, `event` naming the type
    /// (`message` by default), `id` setting the last event ID, `retry` the reconnection time,
    /// comments (`:`) and unknown fields ignored, an event without data not dispatched.
    ///
    /// ```swift
    /// let response = try await CurlTransport.shared.stream(HTTPRequest(url: eventsURL, headers: ["Accept": "text/event-stream"]))
    /// for try await event in response.body.serverSentEvents where event.type == "price" {
    ///     print(event.data)
    /// }
    /// ```
    public var serverSentEvents: HTTPResponse.Streaming.Body.ServerSentEvents {
        HTTPResponse.Streaming.Body.ServerSentEvents(lines: lines)
    }

    /// A response body as lines (``HTTPResponse/Streaming/Body/lines``).
    public struct Lines: AsyncSequence, Sendable {
        /// A line, without its line break.
        public typealias Element = String
        /// How the body can fail.
        public typealias Failure = TransportError

        let body: HTTPResponse.Streaming.Body

        /// The iterator.
        public struct AsyncIterator: AsyncIteratorProtocol {
            var chunks: HTTPResponse.Streaming.Body.AsyncIterator
            var splitter = LineSplitter()
            var ready: [String] = []
            var finished = false

            /// The next line, or `nil` at the end of the body.
            public mutating func next() async throws(TransportError) -> String? {
                try await next(isolation: nil)
            }

            /// The next line, or `nil` at the end of the body.
            public mutating func next(isolation actor: isolated (any Actor)?) async throws(TransportError) -> String? {
                while ready.isEmpty {
                    guard !finished else { return nil }
                    if let chunk = try await chunks.next(isolation: actor) {
                        ready = splitter.lines(in: chunk)
                    } else {
                        finished = true
                        ready = splitter.finish()
                    }
                }
                return ready.removeFirst()
            }
        }

        /// Makes the (single) iterator.
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(chunks: body.makeAsyncIterator())
        }
    }
}

/// Splits bytes that arrive in pieces into lines at LF, CRLF or a lone CR (a CRLF split
/// across two pieces is one break).
struct LineSplitter {
    private var partial: [UInt8] = []
    private var afterCR = false

    /// The lines the bytes complete.
    mutating func lines(in bytes: some Collection<UInt8>) -> [String] {
        var lines: [String] = []
        for byte in bytes {
            if afterCR {
                afterCR = false
                if byte == 0x0A { continue }
            }
            switch byte {
            case 0x0A:
                lines.append(takeLine())
            case 0x0D:
                lines.append(takeLine())
                afterCR = true
            default:
                partial.append(byte)
            }
        }
        return lines
    }

    /// The last line, if the bytes ended without a break after it.
    mutating func finish() -> [String] {
        partial.isEmpty ? [] : [takeLine()]
    }

    private mutating func takeLine() -> String {
        defer { partial.removeAll(keepingCapacity: true) }
        return String(decoding: partial, as: UTF8.self)
    }
}

extension HTTPResponse.Streaming.Body.ServerSentEvents {
    /// One server-sent event.
    public struct Event: Sendable, Hashable {
        /// The event type: the `event` field, or `message`.
        public var type: String
        /// The `data` lines, joined with line breaks.
        public var data: String
        /// The last event ID when the event was dispatched (the latest `id` field, carried over
        /// from earlier events; empty when none was set).
        public var lastEventID: String
        /// The reconnection time the stream asked for last, if it did.
        public var retry: Duration?

        /// Creates an event.
        public init(type: String = "message", data: String, lastEventID: String = "", retry: Duration? = nil) {
            self.type = type
            self.data = data
            self.lastEventID = lastEventID
            self.retry = retry
        }
    }
}

extension HTTPResponse.Streaming.Body {
    /// A response body as server-sent events (``HTTPResponse/Streaming/Body/serverSentEvents``).
    public struct ServerSentEvents: AsyncSequence, Sendable {
        /// An event.
        public typealias Element = Event
        /// How the body can fail.
        public typealias Failure = TransportError

        let lines: HTTPResponse.Streaming.Body.Lines

        /// The iterator.
        public struct AsyncIterator: AsyncIteratorProtocol {
            var lines: HTTPResponse.Streaming.Body.Lines.AsyncIterator
            var parser = ServerSentEventParser()

            /// The next event, or `nil` at the end of the body (an event not ended by a blank line
            /// is not dispatched, as the standard says).
            public mutating func next() async throws(TransportError) -> Event? {
                try await next(isolation: nil)
            }

            /// The next event, or `nil` at the end of the body.
            public mutating func next(isolation actor: isolated (any Actor)?) async throws(TransportError) -> Event? {
                while let line = try await lines.next(isolation: actor) {
                    if let event = parser.feed(line) { return event }
                }
                return nil
            }
        }

        /// Makes the (single) iterator.
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(lines: lines.makeAsyncIterator())
        }
    }
}

/// The event-stream interpretation of the HTML standard, a line at a time.
struct ServerSentEventParser {
    private var type = ""
    private var data = ""
    private var hasData = false
    private var lastEventID = ""
    private var retry: Duration?
    private var firstLine = true

    /// Takes a line; returns the event a blank line dispatches.
    mutating func feed(_ rawLine: String) -> HTTPResponse.Streaming.Body.ServerSentEvents.Event? {
        var line = Substring(rawLine)
        if firstLine {
            firstLine = false
            if line.first == "\u{FEFF}" { line = line.dropFirst() }
        }
        if line.isEmpty { return dispatch() }
        if line.first == ":" { return nil }
        let field: Substring
        var value: Substring
        if let colon = line.firstIndex(of: ":") {
            field = line[..<colon]
            value = line[line.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
        } else {
            field = line
            value = ""
        }
        switch field {
        case "event":
            type = String(value)
        case "data":
            if hasData { data += "\n" }
            data += value
            hasData = true
        case "id":
            if !value.contains("\u{0}") { lastEventID = String(value) }
        case "retry":
            if !value.isEmpty, value.allSatisfy(\.isASCIIDigitCharacter), let milliseconds = Int64(value) {
                retry = .milliseconds(milliseconds)
            }
        default:
            break
        }
        return nil
    }

    private mutating func dispatch() -> HTTPResponse.Streaming.Body.ServerSentEvents.Event? {
        defer {
            type = ""
            data = ""
            hasData = false
        }
        guard hasData else { return nil }
        return HTTPResponse.Streaming.Body.ServerSentEvents.Event(type: type.isEmpty ? "message" : type, data: data, lastEventID: lastEventID, retry: retry)
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool {
        ("0"..."9").contains(self)
    }
}
