@_spi(CrossModule) import AIFTransport
/// Lets identical loads in flight at the same time share one transfer.
///
/// The first load with a key starts the transfer (a "flight"); later ones join it. Each keeps
/// its own completion and can leave on its own: a load that leaves is told at once that it was
/// cancelled, and when the last one leaves, the transfer itself is cancelled and the key is
/// free for a new flight. When the transfer lands, every load still aboard gets its outcome.
final class Coalescer: Sendable {
    typealias Completion = @Sendable (Result<HTTPResponse, any Error>) -> Void

    private struct Flight {
        var serial: UInt64
        var waiters: [LoadID: Completion]
        var transfer: (any CancellableTransfer)?
    }

    private struct State {
        var flights: [String: Flight] = [:]
        var nextSerial: UInt64 = 0
        /// Tests waiting for a number of loads aboard flights, and what tells each.
        var watchers: [(count: Int, reached: @Sendable () -> Void)] = []

        var aboard: Int { flights.values.reduce(0) { $0 + $1.waiters.count } }

        /// Takes out the watchers whose count is reached.
        mutating func reachedWatchers() -> [@Sendable () -> Void] {
            guard !watchers.isEmpty else { return [] }
            let aboard = aboard
            defer { watchers.removeAll { $0.count <= aboard } }
            return watchers.filter { $0.count <= aboard }.map(\.reached)
        }
    }

    private let state = Locked(State())

    /// The number of transfers in flight (for tests).
    var flightCount: Int { state.withLock { $0.flights.count } }

    /// Calls `reached` once `count` loads are aboard flights at the same time — at once, if
    /// they are (for tests, which wait for it as an event rather than poll).
    func whenAboard(_ count: Int, _ reached: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            guard state.aboard < count else { return true }
            state.watchers.append((count, reached))
            return false
        }
        if now { reached() }
    }

    /// Joins the flight for `key`, or starts one with `start`.
    ///
    /// - Parameters:
    ///   - key: What makes loads identical.
    ///   - id: The joining load.
    ///   - completion: Called exactly once: with the flight's outcome, or as cancelled when the
    ///     load leaves first.
    ///   - start: Starts the transfer, which calls the completion it is given exactly once.
    /// - Returns: The load's seat: cancelling it makes the load leave.
    func join(
        _ key: String, id: LoadID, completion: @escaping Completion,
        start: @Sendable (_ landed: @escaping Completion) -> any CancellableTransfer
    ) -> any CancellableTransfer {
        let (newSerial, watchers) = state.withLock { state -> (UInt64?, [@Sendable () -> Void]) in
            if state.flights[key] != nil {
                state.flights[key]!.waiters[id] = completion
                return (nil, state.reachedWatchers())
            }
            state.nextSerial += 1
            state.flights[key] = Flight(serial: state.nextSerial, waiters: [id: completion])
            return (state.nextSerial, state.reachedWatchers())
        }
        for reached in watchers { reached() }
        if let serial = newSerial {
            let transfer = start { [self] result in land(key, serial: serial, result) }
            let kept = state.withLock { state -> Bool in
                guard state.flights[key]?.serial == serial else { return false }
                state.flights[key]!.transfer = transfer
                return true
            }
            // Everyone left before the transfer was recorded: nobody waits for it.
            if !kept { transfer.cancel() }
        }
        return Seat(coalescer: self, key: key, id: id)
    }

    private func land(_ key: String, serial: UInt64, _ result: Result<HTTPResponse, any Error>) {
        let waiters = state.withLock { state -> [Completion] in
            guard state.flights[key]?.serial == serial else { return [] }
            return Array(state.flights.removeValue(forKey: key)!.waiters.values)
        }
        for waiter in waiters { waiter(result) }
    }

    fileprivate func leave(_ key: String, id: LoadID) {
        let (waiter, orphaned) = state.withLock { state -> (Completion?, (any CancellableTransfer)?) in
            guard let waiter = state.flights[key]?.waiters.removeValue(forKey: id) else { return (nil, nil) }
            guard state.flights[key]!.waiters.isEmpty else { return (waiter, nil) }
            return (waiter, state.flights.removeValue(forKey: key)!.transfer)
        }
        waiter?(.failure(CancellationError()))
        orphaned?.cancel()
    }

    /// One load's place in a flight.
    private struct Seat: CancellableTransfer {
        let coalescer: Coalescer
        let key: String
        let id: LoadID

        func cancel() {
            coalescer.leave(key, id: id)
        }
    }
}
