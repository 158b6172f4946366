package import Foundation
@_spi(CrossModule) import AIFTransport

/// Where the load engine reads the time and waits: the system's clocks in a proxy, a clock a
/// test moves by hand in the engine's tests.
package protocol LoadClock: Sendable {
    /// The monotonic time now, as the time since a fixed moment: what deadlines and waits are
    /// measured in. (A duration rather than an instant: the standard library's instant types
    /// may change their layout, so a value holding one is copied through run-time calls.)
    var now: Duration { get }
    /// The wall-clock time now: what a `Retry-After` date is read against.
    var date: Date { get }
    /// Runs `work` once, after `delay`.
    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void)
    /// Runs `work` once at a load's deadline, `delay` from now, unless the returned handle is
    /// cancelled first (as the load ends before it): the timer and what it holds go then.
    func scheduleDeadline(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any CancellableTransfer
    /// Draws the wait before a retry: a random duration from zero to `ceiling` ("full
    /// jitter"), so that loads failing together do not come back together.
    func jitter(upTo ceiling: Duration) -> Duration
    /// What tells `skew` of each response's `Date` header as received at this clock's ``date``.
    func dateObserver(for skew: ServiceRegistry.ClockSkew) -> any ResponseObserver
}

extension LoadClock {
    /// A deadline on ``schedule(after:_:)``: cancelling it keeps `work` from running (the
    /// clock's timer runs out on its own).
    package func scheduleDeadline(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any CancellableTransfer {
        let deadline = ScheduledDeadline(work)
        schedule(after: delay) { deadline.fire() }
        return deadline
    }

    /// A uniformly random duration from zero to `ceiling`.
    package func jitter(upTo ceiling: Duration) -> Duration {
        RetryPolicy.randomDuration(upTo: ceiling)
    }

    /// An observer that reads this clock's ``date`` for each response.
    package func dateObserver(for skew: ServiceRegistry.ClockSkew) -> any ResponseObserver {
        ClockedObserver(skew: skew, clock: self)
    }
}

/// Tells a server clock's tracker of each response as received at a load clock's time.
private struct ClockedObserver: ResponseObserver {
    let skew: ServiceRegistry.ClockSkew
    let clock: any LoadClock

    func record(_ response: HTTPResponse) {
        skew.record(response, receivedAt: clock.date)
    }
}

/// Work to run once at a deadline, unless cancelled first.
private final class ScheduledDeadline: CancellableTransfer {
    private let work: Locked<(@Sendable () -> Void)?>

    init(_ work: @escaping @Sendable () -> Void) {
        self.work = Locked(work)
    }

    func fire() {
        work.withLock { held in
            defer { held = nil }
            return held
        }?()
    }

    func cancel() {
        work.withLock { $0 = nil }
    }
}

/// The system's clocks; waits on a Dispatch timer.
package struct SystemLoadClock: LoadClock {
    /// The moment ``now`` counts from.
    private static let origin = ContinuousClock.now

    package init() {}

    package var now: Duration { ContinuousClock.now - Self.origin }
    package var date: Date { Date() }

    /// The tracker itself, which reads the system's time: no wrapper to allocate for every request.
    package func dateObserver(for skew: ServiceRegistry.ClockSkew) -> any ResponseObserver {
        skew
    }

    package func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) {
        let nanoseconds = max(Int(delay / .nanoseconds(1)), 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds), execute: work)
    }
}

