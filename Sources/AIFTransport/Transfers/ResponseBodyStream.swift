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
///
/// The bytes libcurl hands over in one go (up to a read buffer's worth, in pieces of at most
/// 16 KiB) are gathered into one chunk, and a waiting reader is woken once for all of them, at
/// the end of the burst (``endOfBurst()``) — not once a piece, which cost a bulk download two
/// thread switches each 16 KiB. A reader that asks meanwhile takes what has been gathered.
package final class StreamBuffer: Sendable {
    private struct State {
        var chunks: [Data] = []
        var head = 0
        /// The bytes of the current burst, not yet a chunk.
        var gathering = Data()
        /// Every byte not yet taken, those gathered included.
        var buffered = 0
        var holding = false
        /// How many times `holding` changed: the number of its latest change, for the control.
        var holdChanges = 0
        var end: Result<Void, TransportError>?
        var waiter: UnsafeContinuation<Result<Data?, TransportError>, Never>?

        /// Makes the gathered bytes a chunk.
        mutating func seal() {
            guard !gathering.isEmpty else { return }
            chunks.append(gathering)
            gathering = Data()
        }

        /// Takes the next chunk, or the gathered bytes when `gathered` allows; lets the transfer
        /// receive again once the reader has taken half of what held it (a change of `holding`
        /// goes to `changed`, for the control).
        mutating func take(limit: Int, gathered: Bool, changed: inout HoldChange?) -> Data? {
            let chunk: Data
            if head < chunks.count {
                chunk = chunks[head]
                head += 1
                if head == chunks.count {
                    chunks.removeAll(keepingCapacity: true)
                    head = 0
                }
            } else if gathered, !gathering.isEmpty {
                chunk = gathering
                gathering = Data()
            } else {
                return nil
            }
            buffered -= chunk.count
            if holding, buffered <= limit / 2 {
                holding = false
                holdChanges += 1
                changed = HoldChange(held: false, number: holdChanges)
            }
            return chunk
        }

        /// Counts `count` more bytes waiting; holds the transfer once they reach `limit`.
        mutating func add(_ count: Int, limit: Int) -> HoldChange? {
            buffered += count
            guard buffered >= limit, !holding else { return nil }
            holding = true
            holdChanges += 1
            return HoldChange(held: true, number: holdChanges)
        }
    }

    /// A decision to hold the transfer or let it go, numbered in the order the buffer made them.
    /// The control is told outside the lock — on the transport's thread, letting a transfer go
    /// may deliver bytes at once, which would come back here — and ignores a decision older
    /// than one it was told: a hold that lost the race to the release that answers it would
    /// otherwise keep the transfer held with nothing left to read.
    private struct HoldChange {
        var held: Bool
        var number: Int
    }

    private func tell(_ change: HoldChange?) {
        if let change { control.setHeld(change.held, change: change.number) }
    }

    /// The largest chunk gathered: bigger bursts are handed over in pieces of this size.
    static let chunkCapacity = 64 << 10
    /// A piece this large (libcurl's most per call) announces a bulk transfer: its chunk is
    /// given room for a whole chunk at once, rather than grown piece by piece.
    private static let bulkPiece = 16 << 10

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

    /// Whether a reader waits for bytes.
    var readerIsWaiting: Bool {
        state.withLock { $0.waiter != nil }
    }

    private typealias Waiter = UnsafeContinuation<Result<Data?, TransportError>, Never>

    /// Adds bytes of the current burst (on the transport's thread); holds the transfer once the
    /// reader is a whole limit behind. A waiting reader is woken at the burst's end
    /// (``endOfBurst()``), or when a chunk is full.
    func append(_ bytes: UnsafeRawBufferPointer) {
        var changes: (HoldChange?, HoldChange?)
        let handed = state.withLock { state -> (Waiter, Data)? in
            if !state.gathering.isEmpty {
                bytes.withMemoryRebound(to: UInt8.self) { state.gathering.append($0) }
            } else if bytes.count < Self.bulkPiece {
                state.gathering = Data(bytes)
            } else {
                state.gathering.reserveCapacity(Self.chunkCapacity)
                bytes.withMemoryRebound(to: UInt8.self) { state.gathering.append($0) }
            }
            changes.0 = state.add(bytes.count, limit: limit)
            guard state.gathering.count >= Self.chunkCapacity else { return nil }
            state.seal()
            return handOver(&state, changed: &changes.1)
        }
        tell(changes.0)
        tell(changes.1)
        if let (waiter, chunk) = handed { waiter.resume(returning: .success(chunk)) }
    }

    /// Adds a whole body kept in memory (a redirect's, when none is followed) as one chunk.
    func append(_ chunk: Data) {
        var changes: (HoldChange?, HoldChange?)
        let handed = state.withLock { state -> (Waiter, Data)? in
            state.seal()
            state.chunks.append(chunk)
            changes.0 = state.add(chunk.count, limit: limit)
            return handOver(&state, changed: &changes.1)
        }
        tell(changes.0)
        tell(changes.1)
        if let (waiter, chunk) = handed { waiter.resume(returning: .success(chunk)) }
    }

    /// The bytes libcurl handed over in one go have all arrived: they become a chunk, and a
    /// waiting reader gets it.
    func endOfBurst() {
        var changed: HoldChange?
        let handed = state.withLock { state -> (Waiter, Data)? in
            state.seal()
            return handOver(&state, changed: &changed)
        }
        tell(changed)
        if let (waiter, chunk) = handed { waiter.resume(returning: .success(chunk)) }
    }

    /// The waiting reader and the chunk to give it, if both are there.
    private func handOver(_ state: inout State, changed: inout HoldChange?) -> (Waiter, Data)? {
        guard let waiter = state.waiter, let chunk = state.take(limit: limit, gathered: false, changed: &changed) else { return nil }
        state.waiter = nil
        return (waiter, chunk)
    }

    /// Ends the body (once), after the bytes gathered so far; later calls change nothing.
    package func finish(_ outcome: Result<Void, TransportError>) {
        var changed: HoldChange?
        let woken = state.withLock { state -> (Waiter, Result<Data?, TransportError>)? in
            guard state.end == nil else { return nil }
            state.end = outcome
            state.seal()
            if let (waiter, chunk) = handOver(&state, changed: &changed) { return (waiter, .success(chunk)) }
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            return (waiter, outcome.map { nil })
        }
        tell(changed)
        if let (waiter, result) = woken { waiter.resume(returning: result) }
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

    /// A chunk (or the bytes gathered so far) or the end if either is there; otherwise records
    /// `waiter` (when given).
    func take(orWaitWith waiter: UnsafeContinuation<Result<Data?, TransportError>, Never>? = nil) -> Result<Data?, TransportError>? {
        var changed: HoldChange?
        let ready = state.withLock { state -> Result<Data?, TransportError>? in
            if let chunk = state.take(limit: limit, gathered: true, changed: &changed) { return .success(chunk) }
            if let end = state.end { return end.map { nil } }
            if let waiter { state.waiter = waiter }
            return nil
        }
        tell(changed)
        return ready
    }
}
