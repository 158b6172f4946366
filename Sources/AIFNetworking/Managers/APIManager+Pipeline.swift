import Foundation
@_spi(CrossModule) import AIFTransport

/// A manager is what its loads are of: the engine reads its endpoint as it prepares a load,
/// decodes through it, and hands it the ending (``Load/run(of:_:delivery:then:)``).
extension APIManager: LoadSubject {
    /// Starts a load: its object in the proxy's table, counted among the manager's.
    func startLoad() -> Load {
        proxy.begin(group: group, owner: owner)
    }

    /// Records the outcome of a load that ended (cancellations aside) as the last one, and
    /// tells a subclass (``loadDidEnd(_:result:)``), before the delivery.
    func loadEnded(_ id: LoadID, with outcome: Result<APIResponse<Content>, APIError>) {
        if !outcome.isCancellation { state.withLock { $0.last = outcome } }
        loadDidEnd(id, result: outcome)
    }

    /// Tells the delegates of a load's outcome (never of a cancellation), unless a plugin
    /// says not to; the plugins hear before and after.
    func tellDelegates(_ outcome: Result<APIResponse<Content>, APIError>, _ observed: ObservedLoad.Outcome, plugins: LoadPlugins?) {
        let tell = plugins?.willDeliver(outcome) ?? true
        if tell, !outcome.isCancellation {
            // Both delegates asked for at once, in one lock; the main-actor one only as a flag,
            // of a type that needs no metadata made for this manager's content at run time.
            let (delegate, hasMainActorDelegate) = state.withLock { ($0.delegate, $0.mainActorDelegate != nil) }
            switch outcome {
            case .success(let response): delegate?.manager(self, didSucceedWith: response)
            case .failure(let error): delegate?.manager(self, didFailWith: error)
            }
            if hasMainActorDelegate, let mainActorDelegate { self.tell(mainActorDelegate, outcome) }
        }
        plugins?.didEnd(observed)
    }

    /// Tells `delegate`, the ``mainActorDelegate``: here when this runs on the main actor (the
    /// `.mainActor` callback executor), on the main actor later otherwise.
    private func tell(_ delegate: any MainActorManagerDelegate<Content>, _ outcome: Result<APIResponse<Content>, APIError>) {
        @MainActor func tell() {
            switch outcome {
            case .success(let response): delegate.manager(self, didSucceedWith: response)
            case .failure(let error): delegate.manager(self, didFailWith: error)
            }
        }
        if isOnMainActor() {
            MainActor.assumeIsolated { tell() }
        } else {
            DispatchQueue.main.async { MainActor.assumeIsolated { tell() } }
        }
    }
}
