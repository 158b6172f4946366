@_spi(CrossModule) import AIFTransport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A bare TCP server on 127.0.0.1 for misbehaviour a real HTTP server will not produce: cutting a
/// response short, never answering, or acting as an HTTP proxy. One thread accepts; each
/// connection is handled on a thread of its own (tests open only a few).
final class RawServer: Sendable {
    enum Behaviour: Sendable {
        /// Read the request head, promise `promised` body bytes, send `sent`, then close.
        case dropMidBody(promised: Int, sent: Int)
        /// Accept and read, never write; hold the connection until the server stops.
        case silent
        /// Answer like a forward proxy: the body is the request line received.
        case echoRequestLine
        /// Write these bytes as the whole answer, then close.
        case reply(String)
        /// `200` without a length, then body bytes as fast as the peer takes them, until it
        /// hangs up (or 4 GiB, or 60 seconds, whichever comes first).
        case endlessBody
        /// Promise `promised` body bytes, send `sent`, then fall silent with the connection
        /// open until the peer or `stop()` closes it.
        case stallMidBody(promised: Int, sent: Int)
        /// Answer every bodiless request on a kept-alive connection with `200` and a short body,
        /// until the peer closes it (a cheap server for counting connections).
        case keepAlive
        /// A server whose clock runs `offset` seconds from ours: its `Date` header says so, and
        /// a request whose `timestamp` query parameter is more than `tolerance` seconds from
        /// its time gets `refusal` (a status line) with `{"code":4012}`, others `200 {"ok":true}`
        /// (bodiless requests, kept alive).
        case skewedClock(offset: TimeInterval, tolerance: TimeInterval, refusal: String = "401 Unauthorized")
        /// Serves one file to every request (closing each connection after it), honouring
        /// `Range: bytes=N-` and `If-Range` as the resource's settings say, and cutting the
        /// body short when told to.
        case resource(RangedResource)
        /// Reads a request with a `Content-Length` body, keeping none of it, and answers
        /// `200` with the number of body bytes that came and the request's `Content-Type`
        /// (`COUNT TYPE`): a sink for large uploads that costs the test process little.
        case countBody
        /// On each connection, answers the first `answering` requests (`200`, kept alive, the
        /// body `{"ok":N}`: the connection's N-th request), then reads the next one whole — its body
        /// by `Content-Length` or chunked — and closes without a byte of answer: a server that
        /// processed a request and lost its answer. Every request read whole is recorded in
        /// ``processedRequests``; with `answering: 1`, only requests on a reused connection are
        /// lost. A request whose `Idempotency-Key` came before is answered as a replay of the
        /// first (`Idempotent-Replayed: true`), as Stripe answers, and every key is recorded in
        /// ``processedKeys``.
        case loseAnswer(afterAnswering: Int)
    }

    let port: Int
    private let listener: Int32
    private let state = Locked(State())

    private struct State {
        var clients: [Int32] = []
        var accepted = 0
        var refusedForTime = 0
        var requestLines: [String] = []
        var processed: [String] = []
        var keys: [String?] = []
        var stopped = false
        var listenerClosed = false
    }

    /// How many connections the server has accepted.
    var acceptedConnections: Int {
        state.withLock { $0.accepted }
    }

    /// How many requests a `.skewedClock` server refused for their timestamp.
    var refusedForTime: Int {
        state.withLock { $0.refusedForTime }
    }

    /// - Parameters:
    ///   - behaviour: What to do with each connection.
    ///   - backlog: How many connections may wait to be accepted.
    init(_ behaviour: Behaviour, backlog: Int32 = 64) throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EIO) }
        var one: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(socket, backlog) == 0 else {
            close(socket)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = socket

        let thread = Thread { [self] in
            acceptLoop(behaviour)
        }
        thread.start()
    }

    /// The requests a ``Behaviour/loseAnswer(afterAnswering:)`` server read whole, in order, each
    /// as `METHOD PATH BODY` (the body as text, empty for none).
    var processedRequests: [String] {
        state.withLock { $0.processed }
    }

    /// The `Idempotency-Key` of each of ``processedRequests`` (`nil` for none), in order.
    var processedKeys: [String?] {
        state.withLock { $0.keys }
    }

    /// The request lines received so far (for ``Behaviour/echoRequestLine``).
    var requestLines: [String] {
        state.withLock { $0.requestLines }
    }

    /// Stops accepting and cuts every open connection.
    ///
    /// Descriptors are only shut down here, never closed: each is closed by the thread that owns
    /// it, under the same lock, so a number the kernel hands out again (to another test's
    /// socket) is never touched by this server. Closing the listener here once let a late
    /// `accept` on the recycled number take a connection meant for another test.
    func stop() {
        state.withLock { state in
            guard !state.stopped else { return }
            state.stopped = true
            if !state.listenerClosed { shutdown(listener, Int32(SHUT_RDWR)) }
            for client in state.clients { shutdown(client, Int32(SHUT_RDWR)) }
        }
    }

    private func acceptLoop(_ behaviour: Behaviour) {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                closeListener()
                return
            }
            let accepted = state.withLock { state -> Bool in
                if state.stopped { return false }
                state.clients.append(client)
                state.accepted += 1
                return true
            }
            guard accepted else {
                close(client)
                closeListener()
                return
            }
            let thread = Thread { [self] in
                handle(client, behaviour)
            }
            thread.start()
        }
    }

    private func handle(_ client: Int32, _ behaviour: Behaviour) {
        if case .countBody = behaviour { return countBody(client) }   // reads the head itself, as bytes
        if case .loseAnswer(let answering) = behaviour { return loseAnswer(client, afterAnswering: answering) }
        let head = readHead(client)
        switch behaviour {
        case .dropMidBody(let promised, let sent):
            write(client, "HTTP/1.1 200 OK\r\nContent-Length: \(promised)\r\nContent-Type: application/octet-stream\r\n\r\n")
            write(client, String(repeating: "x", count: sent))
            finish(client)
        case .silent:
            // Hold the connection open and quiet until the peer or stop() closes it.
            var buffer = [UInt8](repeating: 0, count: 1024)
            while recv(client, &buffer, buffer.count, 0) > 0 {}
            finish(client)
        case .echoRequestLine:
            let line = head.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
            state.withLock { $0.requestLines.append(line) }
            write(client, "HTTP/1.1 200 OK\r\nContent-Length: \(line.utf8.count)\r\nConnection: close\r\n\r\n\(line)")
            finish(client)
        case .reply(let text):
            write(client, text)
            finish(client)
        case .countBody, .loseAnswer:
            break
        case .resource(let resource):
            let line = head.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
            state.withLock { $0.requestLines.append(line) }
            let answer = resource.answer(to: head)
            if write(client, answer.head), !answer.body.isEmpty {
                _ = answer.body.withUnsafeBytes { write(client, $0) }
            }
            finish(client)
        case .endlessBody:
            write(client, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n")
            let chunk = String(repeating: "e", count: 64 << 10)
            let deadline = ContinuousClock.now + .seconds(60)
            var sent = 0
            while sent < 4 << 30, ContinuousClock.now < deadline, write(client, chunk) {
                sent += chunk.utf8.count
            }
            finish(client)
        case .keepAlive:
            var pending = head
            while true {
                while let end = pending.range(of: "\r\n\r\n") {
                    pending.removeSubrange(..<end.upperBound)
                    guard write(client, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") else { return finish(client) }
                }
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = recv(client, &buffer, buffer.count, 0)
                if count <= 0 { return finish(client) }
                pending += String(decoding: buffer[0..<count], as: UTF8.self)
            }
        case .skewedClock(let offset, let tolerance, let refusal):
            var pending = head
            while true {
                while let end = pending.range(of: "\r\n\r\n") {
                    let requestLine = pending[..<end.lowerBound].split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
                    pending.removeSubrange(..<end.upperBound)
                    let serverTime = Date().addingTimeInterval(offset)
                    let timestamp = requestLine.firstMatch(of: /[?&]timestamp=([0-9]+)/).flatMap { Double($0.output.1) }
                    let fresh = timestamp.map { abs($0 - serverTime.timeIntervalSince1970) <= tolerance } ?? false
                    if !fresh { state.withLock { $0.refusedForTime += 1 } }
                    let body = fresh ? #"{"ok":true}"# : #"{"code":4012,"message":"stale timestamp"}"#
                    let status = fresh ? "200 OK" : refusal
                    let answer = "HTTP/1.1 \(status)\r\nDate: \(imfFixdate(serverTime))\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                    guard write(client, answer) else { return finish(client) }
                }
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = recv(client, &buffer, buffer.count, 0)
                if count <= 0 { return finish(client) }
                pending += String(decoding: buffer[0..<count], as: UTF8.self)
            }
        case .stallMidBody(let promised, let sent):
            write(client, "HTTP/1.1 200 OK\r\nContent-Length: \(promised)\r\n\r\n")
            write(client, String(repeating: "s", count: sent))
            var buffer = [UInt8](repeating: 0, count: 1024)
            while recv(client, &buffer, buffer.count, 0) > 0 {}
            finish(client)
        }
    }

    private func closeListener() {
        state.withLock { state in
            state.listenerClosed = true
            close(listener)
        }
    }

    /// Shuts a connection down and closes it, forgetting it under the lock `stop()` takes.
    private func finish(_ client: Int32) {
        state.withLock { state in
            state.clients.removeAll { $0 == client }
            shutdown(client, Int32(SHUT_RDWR))
            close(client)
        }
    }

    /// Answers `answering` requests on the connection, reads one more whole, and closes.
    private func loseAnswer(_ client: Int32, afterAnswering answering: Int) {
        var pending: [UInt8] = []
        var served = 0
        while let (head, body) = readRequest(client, &pending) {
            let requestLine = head.split(separator: "\r\n", maxSplits: 1).first ?? ""
            let parts = requestLine.split(separator: " ")
            let method = parts.first.map(String.init) ?? "?"
            let path = parts.count > 1 ? String(parts[1]) : "?"
            let key = head.split(separator: "\r\n").dropFirst().first { $0.lowercased().hasPrefix("idempotency-key:") }
                .map { $0.dropFirst("idempotency-key:".count).trimmingCharacters(in: .whitespaces) }
            let replayed = state.withLock { state in
                defer {
                    state.processed.append("\(method) \(path) \(String(decoding: body, as: UTF8.self))")
                    state.keys.append(key)
                }
                return key.map { state.keys.contains($0) } ?? false
            }
            guard served < answering else { break }
            served += 1
            let answer = #"{"ok":\#(served)}"#
            let replay = replayed ? "Idempotent-Replayed: true\r\n" : ""
            guard write(client, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\(replay)Content-Length: \(answer.utf8.count)\r\n\r\n\(answer)") else { break }
        }
        finish(client)
    }

    /// Reads one whole request from `client` — the head, then a `Content-Length` or chunked
    /// body — starting with the bytes already in `pending` and leaving there what follows it;
    /// `nil` when the peer closes first.
    private func readRequest(_ client: Int32, _ pending: inout [UInt8]) -> (head: String, body: [UInt8])? {
        func fill() -> Bool {
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            let count = recv(client, &buffer, buffer.count, 0)
            guard count > 0 else { return false }
            pending.append(contentsOf: buffer[0..<count])
            return true
        }
        func find(_ separator: [UInt8], from start: Int) -> Int? {
            guard pending.count >= start + separator.count else { return nil }
            return (start...(pending.count - separator.count)).first { pending[$0..<$0 + separator.count].elementsEqual(separator) }
        }
        let blankLine: [UInt8] = [13, 10, 13, 10]
        var headEnd = find(blankLine, from: 0)
        while headEnd == nil {
            guard fill() else { return nil }
            headEnd = find(blankLine, from: 0)
        }
        let head = String(decoding: pending[..<headEnd!], as: UTF8.self)
        pending.removeFirst(headEnd! + 4)
        let fields = head.split(separator: "\r\n").dropFirst().map { $0.lowercased() }
        func header(_ name: String) -> String? {
            fields.first { $0.hasPrefix(name + ":") }.map { $0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces) }
        }
        var body: [UInt8] = []
        if header("transfer-encoding") == "chunked" {
            while true {
                var lineEnd = find([13, 10], from: 0)
                while lineEnd == nil {
                    guard fill() else { return nil }
                    lineEnd = find([13, 10], from: 0)
                }
                let size = Int(String(decoding: pending[..<lineEnd!], as: UTF8.self), radix: 16) ?? 0
                while pending.count < lineEnd! + 2 + size + 2 {
                    guard fill() else { return nil }
                }
                body += pending[(lineEnd! + 2)..<(lineEnd! + 2 + size)]
                pending.removeFirst(lineEnd! + 2 + size + 2)
                if size == 0 { break }
            }
        } else {
            let length = Int(header("content-length") ?? "0") ?? 0
            while pending.count < length {
                guard fill() else { return nil }
            }
            body = Array(pending[..<length])
            pending.removeFirst(length)
        }
        return (head, body)
    }

    /// Reads until the blank line that ends a request head (or the peer closes).
    private func countBody(_ client: Int32) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            let count = recv(client, &buffer, buffer.count, 0)
            if count <= 0 { return finish(client) }
            received.append(contentsOf: buffer[0..<count])
            headEnd = received.indices.dropLast(3).first { received[$0..<$0 + 4].elementsEqual(separator) }
        }
        let head = String(decoding: received[..<headEnd!], as: UTF8.self)
        func header(_ name: String) -> String? {
            head.split(separator: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
                .map { $0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces) }
        }
        let length = Int(header("Content-Length") ?? "") ?? 0
        var count = received.count - headEnd! - 4
        while count < length {
            let got = recv(client, &buffer, buffer.count, 0)
            if got <= 0 { break }
            count += got
        }
        let answer = "\(count) \(header("Content-Type") ?? "-")"
        write(client, "HTTP/1.1 200 OK\r\nContent-Length: \(answer.utf8.count)\r\nConnection: close\r\n\r\n\(answer)")
        finish(client)
    }

    private func readHead(_ client: Int32) -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !received.isEmpty ? !String(decoding: received, as: UTF8.self).contains("\r\n\r\n") : true {
            let count = recv(client, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Writes all of `bytes`; returns `false` when the peer is gone.
    @discardableResult
    private func write(_ client: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = send(client, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    /// Writes all of `text`; returns `false` when the peer is gone.
    @discardableResult
    private func write(_ client: Int32, _ text: String) -> Bool {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { send(client, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    /// A port on 127.0.0.1 where nothing listens: bound, never listening, and kept so for the
    /// rest of the process — a connection is refused, and no other server (a test running
    /// beside, given a port by the system) can be handed it, which happened when it was closed
    /// again at once.
    static func closedPort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let found = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard found else {
            close(socket)
            throw POSIXError(.EADDRINUSE)
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// A file a ``RawServer/Behaviour/resource(_:)`` server serves, changeable between requests.
final class RangedResource: Sendable {
    struct Settings {
        var content: [UInt8]
        var entityTag: String? = "\"v1\""
        var lastModified: String?
        var supportsRanges = true
        /// Send only this many body bytes of the next response (announcing all), then close.
        var cutNextAfter: Int?
    }

    private let settings: Locked<Settings>
    private let ranges = Locked<[String]>([])

    init(_ settings: Settings) {
        self.settings = Locked(settings)
    }

    /// Changes the settings for the requests to come.
    func change(_ change: (inout Settings) -> Void) {
        settings.withLock(change)
    }

    /// The `Range` header of each request received (`-` for none).
    var receivedRanges: [String] {
        ranges.withLock { $0 }
    }

    /// The response head and the body bytes to send for a request head.
    func answer(to head: String) -> (head: String, body: ArraySlice<UInt8>) {
        func header(_ name: String) -> String? {
            for line in head.split(separator: "\r\n") {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2, parts[0].lowercased() == name.lowercased() { return parts[1].trimmingCharacters(in: .whitespaces) }
            }
            return nil
        }
        let range = header("Range")
        ranges.withLock { $0.append(range ?? "-") }
        return settings.withLock { settings in
            let size = settings.content.count
            var validators = ""
            if let tag = settings.entityTag { validators += "ETag: \(tag)\r\n" }
            if let date = settings.lastModified { validators += "Last-Modified: \(date)\r\n" }
            let ifRange = header("If-Range")
            let validatorMatches = ifRange == nil || ifRange == settings.entityTag || ifRange == settings.lastModified
            var start = 0
            var status = "200 OK"
            var contentRange = ""
            if settings.supportsRanges, validatorMatches, let range, range.hasPrefix("bytes="), range.hasSuffix("-"),
                let first = Int(range.dropFirst("bytes=".count).dropLast())
            {
                guard first < size else {
                    return ("HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */\(size)\r\n\(validators)Content-Length: 0\r\nConnection: close\r\n\r\n", [])
                }
                start = first
                status = "206 Partial Content"
                contentRange = "Content-Range: bytes \(first)-\(size - 1)/\(size)\r\n"
            }
            var body = settings.content[start...]
            if let cut = settings.cutNextAfter {
                body = body.prefix(cut)
                settings.cutNextAfter = nil
            }
            let head = "HTTP/1.1 \(status)\r\n\(contentRange)\(validators)Content-Length: \(size - start)\r\nConnection: close\r\n\r\n"
            return (head, body)
        }
    }
}

/// `date` as servers write it in `Date` (an IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`).
private func imfFixdate(_ date: Date) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    return formatter.string(from: date)
}
