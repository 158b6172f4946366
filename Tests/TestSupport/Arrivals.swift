@_spi(CrossModule) import AIFTransport
import Foundation

/// Requests the test routes have received, by a tag the test puts in their query (`?tag=…`): a
/// test awaits a request's arrival at the server — to cancel it while it is under way, say —
/// instead of sleeping for long enough. No polling, no time of its own.
final class Arrivals: Sendable {
    /// The registry the in-process test servers report to.
    static let shared = Arrivals()

    private struct State {
        var counts: [String: Int] = [:]
        var waiting: [(tag: String, count: Int, arrived: @Sendable (Bool) -> Void)] = []
    }

    private let state = Locked(State())

    /// A fresh tag, for one test's requests.
    static func tag() -> String { UUID().uuidString }

    /// A route received a request with `tag`.
    func arrived(_ tag: String) {
        let ready = state.withLock { state -> [@Sendable (Bool) -> Void] in
            state.counts[tag, default: 0] += 1
            let count = state.counts[tag]!
            let ready = state.waiting.filter { $0.tag == tag && $0.count <= count }.map(\.arrived)
            state.waiting.removeAll { $0.tag == tag && $0.count <= count }
            return ready
        }
        for arrived in ready { arrived(true) }
    }

    /// Returns once `count` requests with `tag` have arrived (`false` when the waiting test was
    /// cancelled first, as Swift Testing cancels a test past its time limit).
    @discardableResult
    func wait(for tag: String, count: Int = 1) async -> Bool {
        await event { (arrived: @escaping @Sendable (Bool) -> Void) in
            let now = state.withLock { state -> Bool in
                if state.counts[tag, default: 0] >= count { return true }
                state.waiting.append((tag, count, arrived))
                return false
            }
            if now { arrived(true) }
        } ?? false
    }
}
