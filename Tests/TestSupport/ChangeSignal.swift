@_spi(CrossModule) import AIFTransport

/// Tells the tests waiting on it that some state changed, so that each checks its condition
/// again: a test awaits a condition over state kept elsewhere (a server's counters, a manager's
/// loads) without polling and with no time of its own. Whatever changes the state calls
/// ``changed()`` after the change.
final class ChangeSignal: Sendable {
    private let waiting = Locked<[(condition: @Sendable () -> Bool, tell: @Sendable (()) -> Void)]>([])

    init() {}

    /// Some state changed: the waiting tests whose condition holds now go on.
    func changed() {
        let ready = waiting.withLock { waiting -> [@Sendable (()) -> Void] in
            var ready: [@Sendable (()) -> Void] = []
            waiting.removeAll { wait in
                guard wait.condition() else { return false }
                ready.append(wait.tell)
                return true
            }
            return ready
        }
        for tell in ready { tell(()) }
    }

    /// Returns once `condition` holds — checked now, then at each change — or when the waiting
    /// test is cancelled (past its time limit). The condition is checked under this signal's
    /// lock, so a change told while it is registered is not missed.
    func wait(until condition: @escaping @Sendable () -> Bool) async {
        await event { (tell: @escaping @Sendable (()) -> Void) in
            let now = waiting.withLock { waiting -> Bool in
                if condition() { return true }
                waiting.append((condition, tell))
                return false
            }
            if now { tell(()) }
        }
    }
}
