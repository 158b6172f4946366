@testable import AIFNetworking
@testable import TestSupport
import Foundation
@_spi(CrossModule) import AIFTransport

/// A clock a test moves by hand: its waits run when the test advances it past their end, never
/// on their own; and its jitter is none (a wait drawn up to a ceiling is the ceiling), so that
/// every wait is known.
final class ManualLoadClock: LoadClock {
    private struct State {
        var now = Duration.seconds(1_000)
        var waits: [(end: Duration, length: Duration, work: @Sendable () -> Void)] = []
        /// The loads' deadlines, apart from the waits: they run as the time passes them, unless
        /// their load ended first.
        var deadlines: [(end: Duration, id: Int, work: @Sendable () -> Void)] = []
        var nextDeadline = 0
        /// Tests waiting for a number of waits to be pending.
        var watchers: [(count: Int, arrived: @Sendable ([Duration]) -> Void)] = []
    }
    private let state = Locked(State())
    /// Signalled once for each wait asked for, for a transport that blocks until then.
    let scheduled = DispatchSemaphore(value: 0)

    var now: Duration { state.withLock { $0.now } }
    var date: Date { Date(timeIntervalSince1970: 1_700_000_000) + state.withLock { $0.now.timeInterval } }

    /// The lengths of the waits not yet over, in the order they were asked for.
    var pendingWaits: [Duration] { state.withLock { $0.waits.map(\.length) } }

    /// Returns the lengths of the waits not yet over once there are `count` of them (`nil`
    /// when the test was cancelled first): no polling, no time of its own.
    func waitUntilWaiting(_ count: Int = 1) async -> [Duration]? {
        await event { (arrived: @escaping @Sendable ([Duration]) -> Void) in
            let now = state.withLock { state -> [Duration]? in
                if state.waits.count >= count { return state.waits.map(\.length) }
                state.watchers.append((count, arrived))
                return nil
            }
            if let now { arrived(now) }
        }
    }

    func jitter(upTo ceiling: Duration) -> Duration { ceiling }

    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) {
        let (ready, waits) = state.withLock { state in
            state.waits.append((end: state.now + delay, length: delay, work: work))
            let count = state.waits.count
            defer { state.watchers.removeAll { $0.count <= count } }
            return (state.watchers.filter { $0.count <= count }.map(\.arrived), state.waits.map(\.length))
        }
        scheduled.signal()
        for arrived in ready { arrived(waits) }
    }

    /// The deadlines of loads that have not ended.
    var pendingDeadlines: [Duration] { state.withLock { state in state.deadlines.map { $0.end - state.now } } }

    func scheduleDeadline(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any CancellableTransfer {
        let id = state.withLock { state in
            state.nextDeadline += 1
            state.deadlines.append((end: state.now + delay, id: state.nextDeadline, work: work))
            return state.nextDeadline
        }
        return Deadline(clock: self, id: id)
    }

    private struct Deadline: CancellableTransfer {
        let clock: ManualLoadClock
        let id: Int

        func cancel() {
            clock.state.withLock { $0.deadlines.removeAll { $0.id == id } }
        }
    }

    /// Moves the time on, running the waits and deadlines that end by then.
    func advance(by step: Duration) {
        let due = state.withLock { state -> [@Sendable () -> Void] in
            state.now += step
            let now = state.now
            let due = state.waits.filter { $0.end <= now }.map(\.work) + state.deadlines.filter { $0.end <= now }.map(\.work)
            state.waits.removeAll { $0.end <= now }
            state.deadlines.removeAll { $0.end <= now }
            return due
        }
        for work in due { work() }
    }
}
