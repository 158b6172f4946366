/// Lets identical loads in flight at the same time share one transfer.
///
/// The first load with a key starts the transfer (a "flight"); later ones join it. Each waits
/// on a continuation of its own, so each can be cancelled on its own: a cancelled waiter leaves
/// at once with `CancellationError`, and when the last waiter leaves, the transfer itself is
/// cancelled and the key is free for a new flight.
final class Coalescer: Sendable {
    private struct Flight {
        var serial: UInt64
        var waiters: [RequestID: CheckedContinuation<HTTPResponse, any Error>]
        var task: Task<Void, Never>?
    }

    private struct State {
        var flights: [String: Flight] = [:]
        var nextSerial: UInt64 = 0
    }

    private let state = Locked(State())

    /// The number of transfers in flight (for tests).
    var flightCount: Int { state.withLock { $0.flights.count } }

    /// Joins the flight for `key`, or starts one with `start`.
    func response(
        for key: String,
        id: RequestID,
        start: @escaping @Sendable () async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                let newSerial = state.withLock { state -> UInt64? in
                    if state.flights[key] != nil {
                        state.flights[key]!.waiters[id] = continuation
                        return nil
                    }
                    state.nextSerial += 1
                    state.flights[key] = Flight(serial: state.nextSerial, waiters: [id: continuation])
                    return state.nextSerial
                }
                if let serial = newSerial {
                    let task = Task {
                        let result: Result<HTTPResponse, any Error>
                        do { result = .success(try await start()) } catch { result = .failure(error) }
                        self.land(key, serial: serial, result)
                    }
                    let keep = state.withLock { state -> Bool in
                        guard state.flights[key]?.serial == serial else { return false }
                        state.flights[key]!.task = task
                        return true
                    }
                    if !keep { task.cancel() }
                }
                // A cancellation that came before the waiter was registered found nothing to
                // remove; the flag it set is seen here.
                if Task.isCancelled { leave(key, id: id) }
            }
        } onCancel: {
            leave(key, id: id)
        }
    }

    private func land(_ key: String, serial: UInt64, _ result: Result<HTTPResponse, any Error>) {
        let waiters = state.withLock { state -> [CheckedContinuation<HTTPResponse, any Error>] in
            guard state.flights[key]?.serial == serial else { return [] }
            return Array(state.flights.removeValue(forKey: key)!.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: result) }
    }

    private func leave(_ key: String, id: RequestID) {
        let (waiter, orphaned) = state.withLock { state -> (CheckedContinuation<HTTPResponse, any Error>?, Task<Void, Never>?) in
            guard let waiter = state.flights[key]?.waiters.removeValue(forKey: id) else { return (nil, nil) }
            guard state.flights[key]!.waiters.isEmpty else { return (waiter, nil) }
            return (waiter, state.flights.removeValue(forKey: key)!.task)
        }
        waiter?.resume(throwing: CancellationError())
        orphaned?.cancel()
    }
}
