public import Foundation

extension HTTPResponse {
    /// A response whose body is read as it arrives (``HTTPTransport/stream(_:bufferLimit:)``).
    public struct Streaming: Sendable {
        /// The status code.
        public let statusCode: Int
        /// The header fields.
        public let headers: HTTPHeaders
        /// The body, chunk by chunk.
        public let body: HTTPResponse.Streaming.Body

        package init(statusCode: Int, headers: HTTPHeaders, body: HTTPResponse.Streaming.Body) {
            self.statusCode = statusCode
            self.headers = headers
            self.body = body
        }
    }
}

extension HTTPResponse.Streaming {
    /// A response body as an asynchronous sequence of chunks, in order, as the transport receives
    /// them — with back-pressure: when the reader falls behind by more than the buffer limit, the
    /// transfer stops receiving (libcurl pauses it; the server's sending blocks) until the reader
    /// has taken half of what waits.
    ///
    /// One reader at a time. The sequence ends when the body does, and throws the
    /// ``TransportError`` of a transfer that failed mid-body (after the chunks that arrived).
    /// Cancelling the reading task cancels the transfer; so does letting go of the stream (and of
    /// every iterator made from it) before its end.
    public struct Body: AsyncSequence, Sendable {
        /// A chunk of the body.
        public typealias Element = Data
        /// How the body can fail.
        public typealias Failure = TransportError

        let buffer: StreamBuffer
        let lifetime: StreamLifetime

        package init(buffer: StreamBuffer, lifetime: StreamLifetime) {
            self.buffer = buffer
            self.lifetime = lifetime
        }

        /// The iterator.
        public struct AsyncIterator: AsyncIteratorProtocol {
            let buffer: StreamBuffer
            let lifetime: StreamLifetime

            /// The next chunk, or `nil` at the end of the body.
            ///
            /// - Throws: The transfer's ``TransportError`` if it failed, or
            ///   ``TransportError/Code-swift.struct/cancelled`` when the reading task was cancelled.
            public mutating func next() async throws(TransportError) -> Data? {
                try await buffer.next(cancelling: lifetime)
            }

            /// The next chunk, or `nil` at the end of the body.
            public mutating func next(isolation actor: isolated (any Actor)?) async throws(TransportError) -> Data? {
                try await buffer.next(cancelling: lifetime)
            }
        }

        /// Makes the (single) iterator.
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(buffer: buffer, lifetime: lifetime)
        }

        /// Reads the rest of the body into memory (for a short one, or an error page).
        ///
        /// - Parameter limit: The most bytes to accept.
        /// - Throws: The transfer's ``TransportError``, or
        ///   ``TransportError/Code-swift.struct/responseTooLarge`` past `limit`.
        public func collect(upTo limit: Int) async throws(TransportError) -> Data {
            var all = Data()
            var iterator = makeAsyncIterator()
            while let chunk = try await iterator.next() {
                guard chunk.count <= limit - all.count else {
                    lifetime.cancel()
                    throw TransportError(.responseTooLarge, url: buffer.url, detail: "the body passed \(limit) bytes")
                }
                all += chunk
            }
            return all
        }
    }
}

/// Cancels the transfer when the reader lets go of the stream before its end (a cancellation
/// that comes before the transfer is attached waits for it).
package final class StreamLifetime: Sendable {
    private let cancellation = AsyncCancellation()

    package init() {}

    package func attach(_ transfer: any CancellableTransfer) {
        cancellation.attach(transfer)
    }

    package func cancel() {
        cancellation.cancel()
    }

    deinit {
        cancellation.cancel()
    }
}

/// The chunks between the transport's thread and the reader.
package final class StreamBuffer: Sendable {
    private struct State {
        var chunks: [Data] = []
        var head = 0
        var buffered = 0
        var holding = false
        var end: Result<Void, TransportError>?
        var waiter: UnsafeContinuation<Result<Data?, TransportError>, Never>?
    }

    private let state = Locked(State())
    private let limit: Int
    /// The transfer's control, which the buffer holds and lets go.
    let control: TransferControl
    package let url: String

    package init(limit: Int, control: TransferControl, url: String) {
        self.limit = max(1, limit)
        self.control = control
        self.url = url
    }

    /// How many bytes wait for the reader.
    var bufferedBytes: Int {
        state.withLock { $0.buffered }
    }

    /// Adds a chunk (on the transport's thread); holds the transfer once the reader is a
    /// whole limit behind.
    func append(_ chunk: Data) {
        var hold = false
        let waiter = state.withLock { state -> UnsafeContinuation<Result<Data?, TransportError>, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.chunks.append(chunk)
            state.buffered += chunk.count
            if state.buffered >= limit, !state.holding {
                state.holding = true
                hold = true
            }
            return nil
        }
        if hold { control.hold() }
        waiter?.resume(returning: .success(chunk))
    }

    /// Ends the body (once); later calls change nothing.
    package func finish(_ outcome: Result<Void, TransportError>) {
        let waiter = state.withLock { state -> UnsafeContinuation<Result<Data?, TransportError>, Never>? in
            guard state.end == nil else { return nil }
            state.end = outcome
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: outcome.map { nil })
    }

    /// The next chunk, waiting for one; cancelling the task cancels the transfer.
    func next(cancelling lifetime: StreamLifetime) async throws(TransportError) -> Data? {
        if let ready = take() { return try ready.get() }
        let result = await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Result<Data?, TransportError>, Never>) in
                if let ready = take(orWaitWith: continuation) { continuation.resume(returning: ready) }
            }
        } onCancel: {
            lifetime.cancel()
        }
        return try result.get()
    }

    /// A chunk or the end if either is there; otherwise records `waiter` (when given).
    private func take(orWaitWith waiter: UnsafeContinuation<Result<Data?, TransportError>, Never>? = nil) -> Result<Data?, TransportError>? {
        var release = false
        let ready = state.withLock { state -> Result<Data?, TransportError>? in
            if state.head < state.chunks.count {
                let chunk = state.chunks[state.head]
                state.head += 1
                state.buffered -= chunk.count
                if state.head == state.chunks.count {
                    state.chunks.removeAll(keepingCapacity: true)
                    state.head = 0
                }
                if state.holding, state.buffered <= limit / 2 {
                    state.holding = false
                    release = true
                }
                return .success(chunk)
            }
            if let end = state.end { return end.map { nil } }
            if let waiter { state.waiter = waiter }
            return nil
        }
        if release { control.releaseHold() }
        return ready
    }
}
