import Foundation
import Logging

/// The libcurl ``HTTPTransport``: one multi handle driven by one thread, connection reuse,
/// HTTP/2 over TLS, and exactly-once completion for every request.
///
/// ```swift
/// let transport = CurlTransport()
/// defer { transport.shutdown() }
/// let response = try await transport.send(HTTPRequest(url: url))
/// ```
///
/// Completion handlers and progress handlers run on the transport's own thread: keep them
/// short, and hand longer work to another executor. Any number of requests may be in flight;
/// they share connections (up to the configured caps).
///
/// A transport owns a thread and connections until ``shutdown()`` (or until it is released,
/// which shuts it down without waiting). ``shared`` is a transport that lives for the whole
/// process and cannot be shut down.
public final class CurlTransport: HTTPTransport {
    /// A transport for the whole process, with the default ``Configuration`` or the one given
    /// to ``configureShared(_:)`` before first use. Calling ``shutdown()`` on it does nothing
    /// (and logs a warning through its logger).
    public static var shared: CurlTransport { sharedInstance.value }

    private static let sharedInstance = SharedInstance("CurlTransport.shared") {
        CurlTransport(configuration: Configuration(), isShared: true)
    }

    /// Sets the configuration ``shared`` is made with. Call it once at start-up, before
    /// anything uses ``shared`` (every AIFNetworking `APIProxy` made without a transport of its own does,
    /// `APIProxy.shared` among them).
    ///
    /// ```swift
    /// try CurlTransport.configureShared(.init(connectionPool: .init(maxConnectionsPerHost: 16)))
    /// ```
    ///
    /// - Parameter configuration: The shared transport's configuration.
    /// - Throws: ``CurlTransport/SharedInstanceError`` when ``shared`` is in use already.
    public static func configureShared(_ configuration: Configuration) throws(CurlTransport.SharedInstanceError) {
        try sharedInstance.configure { CurlTransport(configuration: configuration, isShared: true) }
    }

    /// The configuration the transport was created with.
    public let configuration: Configuration
    private let loop: CurlEventLoop
    private let isShared: Bool

    /// Creates a transport, starting its thread.
    ///
    /// - Parameter configuration: Timeouts, connection limits, TLS, proxy and defaults.
    public convenience init(configuration: Configuration = Configuration()) {
        self.init(configuration: configuration, isShared: false)
    }

    private init(configuration: Configuration, isShared: Bool) {
        self.configuration = configuration
        self.isShared = isShared
        loop = CurlEventLoop(configuration: configuration, threadName: isShared ? "aif-curl-shared" : "aif-curl")
        if configuration.tls.certificateVerification == .dangerouslyDisabledForDevelopmentOnly {
            configuration.logger.warning(
                "TLS certificate verification is DISABLED for this CurlTransport: any server, or anyone between, can impersonate every HTTPS host it talks to. Use it for local development only; trust a custom CA instead."
            )
        }
    }

    deinit {
        loop.shutdown(wait: false)
    }

    /// Submits a request and returns at once.
    ///
    /// Redirects are followed as the request's ``HTTPRequest/redirects`` (or the
    /// configuration's) allow, by the rules of ``HTTPRequest/redirected(by:)``: each hop is a
    /// transfer of its own, and libcurl itself never follows a redirect.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - progress: Called on the transport's thread as bytes go out and come in, or `nil`.
    ///   - completion: Called exactly once, on the transport's thread, with the response or
    ///     the error. After ``shutdown()`` it is called at once, on the caller's thread, with
    ///     ``TransportError/Code-swift.struct/transportShutDown``.
    /// - Returns: A handle that cancels the transfer.
    @discardableResult
    public func send(
        _ request: HTTPRequest,
        progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> any CancellableTransfer {
        let transfer = Transfer(request: request, progress: progress, completion: nil, loop: loop)
        start(transfer, completingInBatches: false, completion: completion)
        return transfer
    }

    /// Sends a request and waits for its response.
    ///
    /// Cancelling the calling `Task` cancels the transfer, which then throws
    /// ``TransportError/Code-swift.struct/cancelled``. The task resumes on its own executor
    /// (for a task that prefers ``taskExecutor``, on the transport's thread without a hop).
    /// Redirects are followed as in ``send(_:progress:completion:)``.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - progress: Called on the transport's thread as bytes go out and come in, or `nil`.
    /// - Returns: The response, whatever its status code.
    /// - Throws: ``TransportError`` when no response arrived.
    public func send(
        _ request: HTTPRequest,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws(TransportError) -> HTTPResponse {
        // The transfer exists before it is submitted, so a cancellation that races ahead of the
        // submission has something to name: the loop notes it and ends the transfer as
        // cancelled when the start command arrives (see TransferStateMachine).
        let transfer = Transfer(request: request, progress: progress, completion: nil)
        let result = await withTaskCancellationHandler { [loop] in
            // An unsafe continuation is sound: the send's completion runs exactly once (the
            // transfer state machine and the redirect loop each guarantee it).
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Result<HTTPResponse, TransportError>, Never>) in
                start(transfer, completingInBatches: !loop.isOnLoopThread) { continuation.resume(returning: $0) }
            }
        } onCancel: { [loop] in
            Self.cancel(transfer, on: loop)
        }
        return try result.get()
    }

    /// Submits a request's first transfer; when it is answered with a redirect to follow, the
    /// redirect loop sends the hops after it, attached to the transfer's
    /// ``Transfer/laterHops()`` so that cancelling the first reaches them.
    ///
    /// With `completingInBatches`, the completion is called from the Dispatch block that ends
    /// each batch of finished transfers (see `CurlEventLoop.completeFinishedTransfers`), for
    /// completions that hand the outcome to another thread.
    private func start(
        _ transfer: Transfer, completingInBatches batches: Bool, completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) {
        let maxRedirects = (transfer.request.redirects ?? configuration.redirects).maxRedirects
        if maxRedirects < 0 {
            transfer.completion = completion
        } else {
            // The chain's deadline counts from here, on the transport's clock, when there is one.
            let deadline = transfer.request.timeouts?.total.map { ContinuousClock.now + $0 }
            // Captures its own transfer: the cycle ends when the transfer delivers (and lets go
            // of its completion), which it does exactly once. The loop, not the transport, is
            // captured: a transport released with requests in flight shuts down and cancels them.
            transfer.completion = { [loop] result in
                guard let redirect = result.redirectToFollow(maxRedirects: maxRedirects) else { return completion(result) }
                let progress = transfer.progress
                let hops = RedirectingSend(
                    request: transfer.request, timeLeft: Self.timeLeft(until: deadline), maxRedirects: maxRedirects, prepareHop: nil, mapError: { $0 }, cancellation: transfer.laterHops()
                ) { hop, done in
                    Self.submit(Transfer(request: hop, progress: progress, completion: done, loop: loop), on: loop, batches: batches)
                }
                hops.follow(redirect, completion: completion)
            }
        }
        Self.submit(transfer, on: loop, batches: batches)
    }

    /// What is left until `deadline` on the transport's clock, for a redirect chain; `nil` for none.
    private static func timeLeft(until deadline: ContinuousClock.Instant?) -> (@Sendable () -> Duration)? {
        guard let deadline else { return nil }
        return { deadline - ContinuousClock.now }
    }

    /// Cancels a request: its first transfer, and the hops that followed it after a redirect.
    static func cancel(_ transfer: Transfer, on loop: CurlEventLoop?) {
        loop?.cancel(transfer)
        transfer.laterHops().cancel()
    }

    /// One exchange: the request as one libcurl transfer (libcurl follows no redirect), its
    /// completion run on `executor`: the transport's thread hands it over as the transfer ends
    /// (one hop, none when `executor` is the transport's own thread).
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - progress: Called on the transport's thread as bytes go out and come in, or `nil`.
    ///   - executor: Where `completion` runs.
    ///   - completion: Called exactly once, on `executor`.
    /// - Returns: A handle that cancels the transfer.
    package func exchange(
        _ request: HTTPRequest,
        progress: (@Sendable (TransferProgress) -> Void)?,
        completingOn executor: any StepExecutor,
        completion: @escaping @Sendable (Result<HTTPResponse, TransportError>) -> Void
    ) -> any CancellableTransfer {
        // Handed over from the transport's thread as each transfer ends — measured as fast as
        // through a batch's Dispatch block or faster for the load executor (less CPU a
        // request), and a hop fewer — unless the executor wakes a task for each, as `send`'s
        // continuation does: then in batches, as `send` does, unless the task runs on the
        // transport's thread already (see `Benchmarks/history/notes.md`).
        let transfer = Transfer(request: request, progress: progress, completion: { result in
            executor.run { completion(result) }
        }, loop: loop)
        return Self.submit(transfer, on: loop, batches: executor.takesWorkInBatches && !loop.isOnLoopThread)
    }

    /// The transport's thread, as a place for loads' work.
    package var ownThreadExecutor: (any StepExecutor)? { loop }

    /// The configuration's ``Configuration/redirects``.
    public var redirects: HTTPRequest.RedirectPolicy { configuration.redirects }

    /// Submits one transfer, its completion set; returns its handle.
    @discardableResult
    private static func submit(_ transfer: Transfer, on loop: CurlEventLoop, batches: Bool) -> Transfer {
        transfer.completesInBatches = batches
        if !loop.submit(transfer) {
            transfer.refuse(because: loop.refusal)
        }
        return transfer
    }

    /// Initialises libcurl, for the whole process, with memory functions that keep the 16 KiB
    /// buffer libcurl allocates for every transfer for the next one, instead of freeing it.
    ///
    /// Freed, that buffer kept tripping glibc's trimming of the transport thread's `malloc`
    /// arena once responses are consumed on other threads: memory handed back to the kernel
    /// and faulted in again a transfer later (see `Benchmarks/history/notes.md` for what it cost).
    ///
    /// It is an opt-in because it is process-wide: every user of libcurl in the process gets
    /// these functions, Foundation's URLSession included (they are the C library's `malloc`
    /// and `free` but for that one size, so nothing breaks). Call it once at start-up,
    /// before any transport is made; once libcurl is initialised it changes nothing.
    ///
    /// - Returns: Whether libcurl uses the recycling functions (`false` when a transport of
    ///   this library initialised libcurl without them first).
    @discardableResult
    @_spi(Performance)
    public static func recycleLibcurlTransferBuffers() -> Bool {
        CurlGlobal.initializeWithRecyclingMemory()
    }

    /// A task executor that runs jobs on the transport's own thread.
    ///
    /// A task that prefers it resumes from `await transport.send(…)` on the thread that
    /// completed the transfer, with no hop to another thread — the fastest way to drive many
    /// requests from async code:
    ///
    /// ```swift
    /// await withTaskGroup(of: Void.self) { group in
    ///     for url in urls {
    ///         group.addTask(executorPreference: transport.taskExecutor) {
    ///             _ = try? await transport.send(HTTPRequest(url: url))
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// Such tasks share the thread with every transfer: keep their work between awaits short.
    /// After ``shutdown()`` their jobs run on Dispatch's global queue.
    public var taskExecutor: any TaskExecutor { loop }

    /// Stops the transport: requests in flight end as cancelled, and its connections and its
    /// own descriptors are closed and its thread has exited before this returns (unless called from a completion handler, on the
    /// transport's own thread, in which case it returns at once). Requests submitted afterwards
    /// fail with ``TransportError/Code-swift.struct/transportShutDown``. Calling it again does
    /// nothing. On ``shared`` it does nothing at all: the shared transport lives as long as the
    /// process (an `APIProxy` over it shuts down without stopping it).
    public func shutdown() {
        if isShared {
            configuration.logger.info("CurlTransport.shared stays up until the process ends; shutdown() does nothing on it")
            return
        }
        loop.shutdown(wait: true)
    }
}

/// A transfer is the handle its caller cancels it with: no second object a request.
extension Transfer: CancellableTransfer {
    /// Cancels the transfer if it has not ended: its completion is then called with
    /// ``TransportError/Code-swift.struct/cancelled``. Safe from any thread, any number of times.
    func cancel() {
        CurlTransport.cancel(self, on: loop)
    }
}

extension CurlTransport: BatchingTransport {}
