public import Foundation

extension HTTPRequest {
    /// A request body produced as it is sent: chunks from an `AsyncSequence`, with or without a
    /// known length (``HTTPRequest/Body/stream(_:)``).
    ///
    /// ```swift
    /// let chunks = AsyncStream<Data> { continuation in … }         // a recording, a pipe, a generator
    /// let request = HTTPRequest(method: .post, url: ingestURL, body: .stream(HTTPRequest.BodyStream(chunks)))
    /// ```
    ///
    /// Without a length the body goes as HTTP/1.1 chunked transfer coding (over HTTP/2, as plain
    /// DATA frames); with one, it is announced in `Content-Length`, and a sequence that yields
    /// fewer or more bytes fails the request, saying so. The transport reads ahead at most
    /// `bufferLimit` bytes: a sequence faster than the network waits, one slower pauses the
    /// upload until its next chunk. An error the sequence throws fails the request with
    /// ``TransportError/Code-swift.struct/bodySourceFailed`` and its description.
    ///
    /// A stream is sent once: it cannot be sent again after a 307/308 redirect, or by a retry —
    /// those fail with a ``TransportError`` that says so. It cannot be signed by a scheme that
    /// hashes the body (its bytes are not known in advance): send a file instead.
    public final class BodyStream: Sendable {
        /// The body's length in bytes, when known.
        public let length: Int64?
        /// How many bytes may be read ahead of the network.
        public let bufferLimit: Int
        let pipe: UploadPipe

        /// Describes a streamed body.
        ///
        /// - Parameters:
        ///   - chunks: The body's bytes, in order.
        ///   - length: Their total, if known (sent as `Content-Length`); `nil` for chunked.
        ///   - bufferLimit: How many bytes may wait to be sent; 256 KiB by default.
        public init<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks, length: Int64? = nil, bufferLimit: Int = 256 << 10) where Chunks.Element == Data {
            self.length = length
            self.bufferLimit = max(1, bufferLimit)
            pipe = UploadPipe(limit: max(1, bufferLimit), length: length) { pipe in
                do {
                    for try await chunk in chunks where !chunk.isEmpty {
                        guard await pipe.push(chunk) else { return }
                    }
                    pipe.finish(nil)
                } catch {
                    pipe.finish("the request body stream failed: \(error)")
                }
            }
        }
    }
}

/// The bytes between a body's producing task and the transport's read callback.
final class UploadPipe: Sendable {
    private struct State {
        var chunks: [Data] = []
        /// How far into the first chunk the reader has got.
        var offset = 0
        var buffered = 0
        /// The most bytes that ever waited (at most the limit plus one chunk).
        var mostBuffered = 0
        var total: Int64 = 0
        /// How many bytes the reader has taken.
        var consumed: Int64 = 0
        /// `nil` while producing; then `.success` at the end or `.failure(reason)`.
        var end: Result<Void, StreamFailure>?
        var started = false
        var closed = false
        /// The read callback found nothing and paused the upload.
        var readerWaiting = false
        /// The producer waits for room.
        var producerWaiting: CheckedContinuation<Bool, Never>?
        var wake: (@Sendable () -> Void)?
        var producer: Task<Void, Never>?
    }

    struct StreamFailure: Error {
        var reason: String
    }

    /// What the read callback gets.
    enum Read {
        case bytes(Int)
        case wait
        case end
        case failed(String)
    }

    private let state = Locked(State())
    private let limit: Int
    private let length: Int64?
    private let produce: @Sendable (UploadPipe) async -> Void

    init(limit: Int, length: Int64?, produce: @escaping @Sendable (UploadPipe) async -> Void) {
        self.limit = limit
        self.length = length
        self.produce = produce
    }

    /// Starts producing, once; `wake` is called (from the producer's thread) when bytes come
    /// after the reader found none. Returns `false` when the stream was started before.
    func start(wake: @escaping @Sendable () -> Void) -> Bool {
        let fresh = state.withLock { state -> Bool in
            guard !state.started else { return false }
            state.started = true
            state.wake = wake
            return true
        }
        guard fresh else { return false }
        let task = Task { await produce(self) }
        // A transfer that closed while the task was being made did not see it to cancel it.
        let closed = state.withLock { state -> Bool in
            state.producer = task
            return state.closed
        }
        if closed { task.cancel() }
        return true
    }

    /// The most bytes that waited to be sent at any moment.
    var mostBuffered: Int {
        state.withLock { $0.mostBuffered }
    }

    /// Adds a chunk, waiting while the buffer is full; returns `false` once the transfer ended.
    func push(_ chunk: Data) async -> Bool {
        while true {
            let (accepted, wake) = state.withLock { state -> (Bool?, (@Sendable () -> Void)?) in
                if state.closed || state.end != nil { return (false, nil) }
                guard state.buffered < limit else { return (nil, nil) }
                state.chunks.append(chunk)
                state.buffered += chunk.count
                state.mostBuffered = max(state.mostBuffered, state.buffered)
                state.total += Int64(chunk.count)
                if let length, state.total > length {
                    state.end = .failure(StreamFailure(reason: "the request body stream yielded more than the \(length) bytes announced"))
                }
                return (true, takeWake(&state))
            }
            wake?()
            if let accepted { return accepted }
            let goOn = await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.closed || state.buffered < limit { return true }
                    state.producerWaiting = continuation
                    return false
                }
                if resumeNow { continuation.resume(returning: true) }
            }
            if !goOn { return false }
        }
    }

    /// Ends the body: `failure` names what went wrong, `nil` for a clean end.
    func finish(_ failure: String?) {
        let wake = state.withLock { state -> (@Sendable () -> Void)? in
            guard state.end == nil else { return nil }
            if let failure {
                state.end = .failure(StreamFailure(reason: failure))
            } else if let length, state.total != length {
                state.end = .failure(StreamFailure(reason: "the request body stream ended after \(state.total) of the \(length) bytes announced"))
            } else {
                state.end = .success(())
            }
            return takeWake(&state)
        }
        wake?()
    }

    /// The wake-up for a waiting reader, taken (the reader waits no more).
    private func takeWake(_ state: inout State) -> (@Sendable () -> Void)? {
        guard state.readerWaiting else { return nil }
        state.readerWaiting = false
        return state.wake
    }

    /// Copies up to `capacity` bytes for the read callback (on the transport's thread).
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Read {
        var producer: CheckedContinuation<Bool, Never>?
        let read = state.withLock { state -> Read in
            if case .failure(let failure)? = state.end { return .failed(failure.reason) }
            var allowed = buffer.count
            if let length, state.end == nil {
                // The last announced byte waits until the stream has ended, so that a stream
                // yielding more than announced is caught before libcurl calls the body sent.
                let room = length - state.consumed - 1
                if room < Int64(allowed) { allowed = max(0, Int(room)) }
            }
            guard !state.chunks.isEmpty, allowed > 0 else {
                if state.end != nil { return .end }
                state.readerWaiting = true
                return .wait
            }
            var copied = 0
            while copied < allowed, !state.chunks.isEmpty {
                let chunk = state.chunks[0]
                let count = min(allowed - copied, chunk.count - state.offset)
                let start = chunk.startIndex + state.offset
                chunk.copyBytes(to: UnsafeMutableRawBufferPointer(rebasing: buffer[copied..<(copied + count)]), from: start..<(start + count))
                copied += count
                state.offset += count
                if state.offset == chunk.count {
                    state.chunks.removeFirst()
                    state.offset = 0
                }
            }
            state.buffered -= copied
            state.consumed += Int64(copied)
            if state.buffered < limit {
                producer = state.producerWaiting
                state.producerWaiting = nil
            }
            return .bytes(copied)
        }
        producer?.resume(returning: true)
        return read
    }

    /// The transfer ended: stops the producer and lets go of what waits.
    func close() {
        let (producer, task) = state.withLock { state -> (CheckedContinuation<Bool, Never>?, Task<Void, Never>?) in
            state.closed = true
            state.chunks = []
            state.buffered = 0
            state.wake = nil
            defer { state.producerWaiting = nil }
            return (state.producerWaiting, state.producer)
        }
        producer?.resume(returning: false)
        task?.cancel()
    }
}
