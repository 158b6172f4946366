/// Sends HTTP requests. ``CurlTransport`` is the libcurl implementation; others (a stub for
/// tests, URLSession on Apple platforms) can stand in for it.
///
/// Every request submitted to a transport ends exactly once: its completion handler is called
/// once with a response or a ``TransportError`` — including when it is cancelled
/// (``TransportError/Code-swift.struct/cancelled``) or when the transport shuts down.
public protocol HTTPTransport: Sendable {
    /// Submits a request and returns at once.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - progress: Called as bytes go out and come in, or `nil`.
    ///   - completion: Called exactly once with the outcome. Implementations document the
    ///     thread it runs on; it should return quickly.
    /// - Returns: A handle that cancels the transfer.
    @discardableResult
    func send(
        _ request: HTTPRequest,
        progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> any CancellableTransfer

    /// Sends a request and waits for its response.
    ///
    /// Cancelling the calling `Task` cancels the transfer, which then throws
    /// ``TransportError/Code-swift.struct/cancelled``. A default implementation builds on the
    /// completion-handler requirement.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - progress: Called as bytes go out and come in, or `nil`.
    /// - Returns: The response, whatever its status code.
    /// - Throws: ``TransportError`` when no response arrived.
    func send(
        _ request: HTTPRequest,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws(TransportError) -> HTTPResponse

    /// How many redirects a request follows when it does not say (``HTTPRequest/redirects``):
    /// the requests of managers included, whose hops a signed service signs afresh.
    /// ``HTTPRequest/RedirectPolicy/default`` by default; a transport that wraps another says the other's.
    var redirects: HTTPRequest.RedirectPolicy { get }

    /// Stops the transport for good, as the process that uses it shuts down (an `APIProxy`'s
    /// graceful shutdown calls it once its loads have ended): transfers still in flight end,
    /// connections close, and later requests fail with
    /// ``TransportError/Code-swift.struct/transportShutDown``. A transport that holds nothing
    /// open has nothing to stop, the default; ``CurlTransport/shared``, which lives as long as
    /// the process, ignores it.
    func shutdown()
}

/// A handle on one submitted transfer.
public protocol CancellableTransfer: Sendable {
    /// Cancels the transfer. Safe from any thread, at any moment, any number of times: if the
    /// transfer has not ended yet, it ends as ``TransportError/Code-swift.struct/cancelled``;
    /// otherwise nothing happens.
    func cancel()
}

/// How far a transfer has got.
public struct TransferProgress: Sendable, Hashable {
    /// Body bytes sent so far.
    public var bytesSent: Int64
    /// The size of the request body, when known.
    public var totalBytesToSend: Int64?
    /// Body bytes received so far.
    public var bytesReceived: Int64
    /// The expected size of the response body, when the server announced it.
    public var totalBytesToReceive: Int64?
    /// Bytes a second, both ways together, since the report before — in the throttled reports
    /// of a manager's load (`nil` in the transport's raw reports).
    public var bytesPerSecond: Double?

    /// Creates a progress report.
    public init(bytesSent: Int64, totalBytesToSend: Int64?, bytesReceived: Int64, totalBytesToReceive: Int64?, bytesPerSecond: Double? = nil) {
        self.bytesSent = bytesSent
        self.totalBytesToSend = totalBytesToSend
        self.bytesReceived = bytesReceived
        self.totalBytesToReceive = totalBytesToReceive
        self.bytesPerSecond = bytesPerSecond
    }

    /// How much of the transfer is done, from 0 to 1, when the totals are known: the upload's
    /// share while it runs, then the download's.
    public var fractionCompleted: Double? {
        if let totalBytesToReceive, totalBytesToReceive > 0, bytesReceived > 0 {
            return min(1, Double(bytesReceived) / Double(totalBytesToReceive))
        }
        if let totalBytesToSend, totalBytesToSend > 0 {
            return min(1, Double(bytesSent) / Double(totalBytesToSend))
        }
        return nil
    }

    /// A stream of progress reports and the closure that feeds it, for code that prefers to
    /// `for await` them: pass `report` as the `progress` of a load, read `updates` in a task
    /// of its own. The stream keeps only the newest report when the reader is behind, and
    /// ends when `report` is let go of.
    ///
    /// ```swift
    /// let (updates, report) = TransferProgress.makeStream()
    /// Task { for await progress in updates { bar.value = progress.fractionCompleted ?? 0 } }
    /// let file = try await manager.download(["id": 7], to: target, progress: report)
    /// ```
    public static func makeStream() -> (updates: AsyncStream<TransferProgress>, report: @Sendable (TransferProgress) -> Void) {
        let (stream, continuation) = AsyncStream<TransferProgress>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let feeder = ProgressFeeder(continuation)
        return (stream, { feeder.continuation.yield($0) })
    }
}

/// Ends a progress stream when its last feeding closure is let go of.
private final class ProgressFeeder: Sendable {
    let continuation: AsyncStream<TransferProgress>.Continuation

    init(_ continuation: AsyncStream<TransferProgress>.Continuation) {
        self.continuation = continuation
    }

    deinit {
        continuation.finish()
    }
}

extension HTTPTransport {
    /// Up to ten redirects.
    public var redirects: HTTPRequest.RedirectPolicy { .default }

    /// Nothing to stop: a transport that holds no connections or threads of its own.
    public func shutdown() {}

    /// Submits a request without progress reporting.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - completion: Called exactly once with the outcome.
    /// - Returns: A handle that cancels the transfer.
    @discardableResult
    public func send(
        _ request: HTTPRequest,
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> any CancellableTransfer {
        send(request, progress: nil, completion: completion)
    }

    /// Sends a request and waits for its response, without progress reporting.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The response, whatever its status code.
    /// - Throws: ``TransportError`` when no response arrived; cancelling the calling `Task`
    ///   cancels the transfer.
    public func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        try await send(request, progress: nil)
    }


    /// The default async face: bridges the completion-handler requirement to async/await.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - progress: Called as bytes go out and come in, or `nil`.
    /// - Returns: The response, whatever its status code.
    /// - Throws: ``TransportError`` when no response arrived.
    public func send(
        _ request: HTTPRequest,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws(TransportError) -> HTTPResponse {
        let cancellation = AsyncCancellation()
        let result = await withTaskCancellationHandler {
            // An unsafe continuation is sound here: the transport calls completion exactly
            // once, which is the contract this protocol states and the transport's tests prove.
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Result<HTTPResponse, TransportError>, Never>) in
                let transfer = send(request, progress: progress) { result in
                    continuation.resume(returning: result)
                }
                cancellation.attach(transfer)
            }
        } onCancel: {
            cancellation.cancel()
        }
        return try result.get()
    }
}

/// A transport that hands the completions of a batch of finished transfers over at once and
/// offers its own thread for loads' work — the capability ``CurlTransport`` has, and a wrapping
/// transport can pass on. A speed mechanism of the package's, not public API; the library
/// sends through any other transport one exchange at a time.
package protocol BatchingTransport: HTTPTransport {
    /// Sends a request as one exchange — no redirect following of its own: the library's
    /// redirect loop calls this for every hop — and calls `completion` through `executor`.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - progress: Called as bytes go out and come in, or `nil`.
    ///   - executor: Where `completion` runs: handed over with the other transfers that
    ///     finished with it when the executor ``StepExecutor/takesWorkInBatches``.
    ///   - completion: Called exactly once, on `executor`.
    /// - Returns: A handle that cancels the transfer.
    func exchange(
        _ request: HTTPRequest,
        progress: (@Sendable (TransferProgress) -> Void)?,
        completingOn executor: any StepExecutor,
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> any CancellableTransfer

    /// The transport's own thread as a place to run loads' work without a thread hand-off, or
    /// `nil` when it has none.
    var ownThreadExecutor: (any StepExecutor)? { get }
}

/// How a request goes through a transport as one exchange, its completion run on an executor:
/// as a ``BatchingTransport`` does, or else through ``HTTPTransport/send(_:progress:completion:)``
/// with redirects off. Which of the two is decided when the route is made — whether a transport
/// is a batching one is a conformance looked up at run time, not a cheap one — so that a
/// sender keeping a route for its transport pays for it once rather than for every request.
package struct ExchangeRoute: Sendable {
    private let transport: any HTTPTransport
    private let batching: (any BatchingTransport)?

    /// The route through `transport`.
    package init(_ transport: any HTTPTransport) {
        self.transport = transport
        batching = transport as? any BatchingTransport
    }

    /// Sends a request as one exchange, its completion run on `executor`.
    package func exchange(
        _ request: HTTPRequest, progress: (@Sendable (TransferProgress) -> Void)?, through executor: any StepExecutor,
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> any CancellableTransfer {
        if let batching {
            return batching.exchange(request, progress: progress, completingOn: executor, completion: completion)
        }
        var single = request
        single.redirects = .never
        return transport.send(single, progress: progress) { result in
            executor.run { completion(result) }
        }
    }
}

extension HTTPTransport {
    /// Sends a request as one exchange, its completion run on `executor` (see ``ExchangeRoute``).
    package func exchange(
        _ request: HTTPRequest, progress: (@Sendable (TransferProgress) -> Void)?, through executor: any StepExecutor,
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> any CancellableTransfer {
        ExchangeRoute(self).exchange(request, progress: progress, through: executor, completion: completion)
    }

    /// The transport's own thread, when it is a ``BatchingTransport`` that has one.
    package var threadForLoads: (any StepExecutor)? {
        (self as? any BatchingTransport)?.ownThreadExecutor
    }
}
