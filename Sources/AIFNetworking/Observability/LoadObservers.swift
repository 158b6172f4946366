/// A proxy's observers, asked together when a load starts.
struct LoadObservers: Sendable {
    let all: [any APIProxy.LoadObserver]

    /// What hears the load: the one observation, all of them together, or `nil` when no
    /// observer wants it.
    func observation(of load: ObservedLoad) -> (any APIProxy.LoadObservation)? {
        if all.count == 1 { return all[0].observation(of: load) }
        let parts = all.compactMap { $0.observation(of: load) }
        if parts.count <= 1 { return parts.first }
        return CombinedObservation(parts)
    }
}

/// Several observations of one load, told in the order of the proxy's observers.
private final class CombinedObservation: APIProxy.LoadObservation {
    private let parts: [any APIProxy.LoadObservation]

    init(_ parts: [any APIProxy.LoadObservation]) {
        self.parts = parts
    }

    func attemptWillStart(_ attempt: Int) {
        for part in parts { part.attemptWillStart(attempt) }
    }

    func attemptDidEnd(_ attempt: ObservedLoad.Attempt) {
        for part in parts { part.attemptDidEnd(attempt) }
    }

    func loadWillRetry(_ retry: RetryPolicy.Attempt) {
        for part in parts { part.loadWillRetry(retry) }
    }

    func loadWillRenewCredential() {
        for part in parts { part.loadWillRenewCredential() }
    }

    func cacheDidAnswer(from tier: ResponseCache.Tier) {
        for part in parts { part.cacheDidAnswer(from: tier) }
    }

    func loadDidEnd(_ outcome: ObservedLoad.Outcome) {
        for part in parts { part.loadDidEnd(outcome) }
    }
}
