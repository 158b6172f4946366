import Synchronization

/// A load in a proxy's table: a manager's ``Load``, or a load made of other loads (a batch, a
/// chain). The table holds these and nothing about them: each knows its group and its manager.
protocol InFlightLoad: AnyObject, Sendable {
    /// The load's ID.
    var id: LoadID { get }
    /// The group it was started in, if any.
    var group: APIProxy.LoadGroup? { get }
    /// Its manager's loads, if a manager started it.
    var owner: LoadOwner? { get }
    /// Cancels the load for `cause`, unless it has ended.
    func cancel(_ cause: LoadStateMachine.Cancellation)
}

/// One manager's loads as the proxy's table knows them: the table finds them by this object
/// (which they hold, so it outlives them), and it counts those in flight. The manager keeps no
/// list of its own.
final class LoadOwner: Sendable {
    private let inFlight = Atomic<Int>(0)

    /// Whether any of the manager's loads is in flight.
    var hasLoadsInFlight: Bool { inFlight.load(ordering: .relaxed) > 0 }

    /// A load of the manager entered the table.
    func loadEntered() {
        inFlight.add(1, ordering: .relaxed)
    }

    /// A load of the manager left the table.
    func loadLeft() {
        inFlight.subtract(1, ordering: .relaxed)
    }
}
