public import Foundation
public import Logging

extension APIProxy {
    /// Where a proxy's loads read the time and wait: every deadline, wait before a retry,
    /// credential lifetime, retry budget window, circuit breaker's pause and signing time is
    /// read on it. The system's clocks unless the proxy is given another — a test's, which it
    /// moves by hand, so that a test of a retry, a refresh or a timeout spends no real time.
    public protocol Clock: Sendable {
        /// The monotonic time now, as the time since a fixed moment of the clock's choosing.
        var now: Duration { get }
        /// The wall-clock time now: what signatures carry and `Retry-After` dates are read
        /// against.
        var date: Date { get }
        /// Runs `work` once, after `delay` on this clock. It must not run `work` before it
        /// returns.
        func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void)
    }

    /// Where a proxy's delegate-face loads (`loadData`) run their steps between the transport's
    /// I/O — signing, decoding, validation, hooks — and `.immediate` delivery: the library's
    /// own choice unless the proxy is given one (a test's, which runs each step when the test
    /// says).
    public protocol Executor: Sendable {
        /// Runs `work` later, never before returning; the work must not block.
        func run(_ work: @escaping @Sendable () -> Void)
    }

    /// Creates a proxy whose loads read the time and wait on `clock`, and whose delegate-face
    /// loads run their steps on `executor` when one is given.
    ///
    /// ```swift
    /// let clock = HandClock()                        // the test's: its waits run when it advances
    /// let proxy = APIProxy(transport: stub, clock: clock)
    /// let load = Task { try await APIManager(.report, proxy: proxy).load() }
    /// // … the stub answers 503 with Retry-After: 2; the load waits on the clock:
    /// clock.advance(by: .seconds(2))
    /// ```
    ///
    /// - Parameters:
    ///   - transport: Where requests go; the shared ``/AIFTransport/CurlTransport`` by default.
    ///   - logger: Where request and response lines go; disabled by default.
    ///   - retryBudget: Caps retries to a share of the loads (see ``init(transport:logger:retryBudget:offlineAfterFailures:recorder:observers:plugins:)``).
    ///   - offlineAfterFailures: How many requests in a row must fail to connect for
    ///     ``connectivity`` to become offline; 2 by default.
    ///   - recorder: Writes every response as a fixture; none by default.
    ///   - observers: What hears each load from start to end; none by default.
    ///   - plugins: What takes part in every load, before each manager's plugins; none by default.
    ///   - clock: Where the loads read the time and wait.
    ///   - executor: Where the delegate-face loads run their steps; the library's choice when `nil`.
    public convenience init(
        transport: any HTTPTransport = CurlTransport.shared,
        logger: Logger = Logger(label: "AIFNetworking.APIProxy", factory: { _ in SwiftLogNoOpLogHandler() }),
        retryBudget: RetryPolicy.Budget = RetryPolicy.Budget(),
        offlineAfterFailures: Int = 2,
        recorder: FixtureTransport.Recorder? = nil,
        observers: [any APIProxy.LoadObserver] = [],
        plugins: [any LoadPlugin] = [],
        clock: any Clock,
        executor: (any Executor)? = nil
    ) {
        self.init(
            transport: transport, logger: logger, retryBudget: retryBudget, offlineAfterFailures: offlineAfterFailures,
            loadExecutor: .automatic, recorder: recorder, observers: observers, plugins: plugins, clock: GivenClock(clock),
            executor: executor.map(GivenExecutor.init))
    }
}

/// A user's clock as the engine's.
private struct GivenClock: LoadClock {
    let base: any APIProxy.Clock

    init(_ base: any APIProxy.Clock) {
        self.base = base
    }

    var now: Duration { base.now }
    var date: Date { base.date }

    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) {
        base.schedule(after: delay, work)
    }
}

/// A user's executor as the engine's.
private final class GivenExecutor: StepExecutor {
    let base: any APIProxy.Executor

    init(_ base: any APIProxy.Executor) {
        self.base = base
    }

    func run(_ work: @escaping @Sendable () -> Void) {
        base.run(work)
    }
}
