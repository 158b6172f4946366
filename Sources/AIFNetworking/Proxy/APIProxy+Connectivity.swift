import Synchronization
@_spi(CrossModule) import AIFTransport

extension APIProxy {
    /// Whether a proxy's requests reach their servers, as their outcomes show. Linux has no
    /// reachability API, so the proxy judges by what happens to real requests: any response, of
    /// any status, means online; requests that fail before any server answers — the name not
    /// resolved, the host or network unreachable, the connection refused or not made in time —
    /// several times in a row, with no response between, mean offline.
    ///
    /// ```swift
    /// for await state in proxy.connectivityChanges() where state == .online {
    ///     break   // back online: resume paging
    /// }
    /// ```
    public enum Connectivity: Sendable, Hashable, CustomStringConvertible {
        /// No request has ended yet.
        case unknown
        /// The last outcome was a response.
        case online
        /// The last requests failed before reaching any server.
        case offline

        /// `online`, `offline` or `unknown`.
        public var description: String {
            switch self {
            case .unknown: "unknown"
            case .online: "online"
            case .offline: "offline"
            }
        }
    }
}

/// Follows a proxy's request outcomes and tells its watchers of each change of
/// ``APIProxy/Connectivity``. A response while online — nearly every outcome — costs one atomic load.
final class ConnectivityMonitor: Sendable {
    private struct State {
        var connectivity = APIProxy.Connectivity.unknown
        /// Failures to connect since the last response.
        var failuresInARow = 0
        var watchers: [Int: AsyncStream<APIProxy.Connectivity>.Continuation] = [:]
        var nextWatcher = 0
    }

    /// Failures to connect in a row, with no response between, that mean offline.
    let failuresToGoOffline: Int
    private let state = Locked(State())
    /// Online with no failure since the last response: a response changes nothing.
    private let steadilyOnline = Atomic(false)

    init(failuresToGoOffline: Int) {
        self.failuresToGoOffline = max(1, failuresToGoOffline)
    }

    var connectivity: APIProxy.Connectivity {
        state.withLock { $0.connectivity }
    }

    /// Learns from a request's outcome: a response, or a failure to connect. Other failures
    /// (a timeout after the connection was made, a dropped connection, a TLS failure, a
    /// cancellation) say nothing either way.
    func record(_ outcome: Result<HTTPResponse, any Error>) {
        switch outcome {
        case .success:
            if steadilyOnline.load(ordering: .relaxed) { return }
            update { state in
                state.failuresInARow = 0
                return .online
            }
        case .failure(let error as TransportError) where error.isCannotConnect || error.code == .connectTimeout:
            update { state in
                state.failuresInARow += 1
                return state.failuresInARow >= failuresToGoOffline ? .offline : state.connectivity
            }
        case .failure:
            return
        }
    }

    /// How many streams are being watched.
    var watcherCount: Int {
        state.withLock { $0.watchers.count }
    }

    /// A stream of the connectivity: the current one first, then each change, in order.
    func changes() -> AsyncStream<APIProxy.Connectivity> {
        let (stream, continuation) = AsyncStream.makeStream(of: APIProxy.Connectivity.self, bufferingPolicy: .bufferingNewest(16))
        let id = state.withLock { state in
            let id = state.nextWatcher
            state.nextWatcher += 1
            state.watchers[id] = continuation
            continuation.yield(state.connectivity)
            return id
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.watchers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Changes the state as `change` says and tells the watchers if the connectivity changed.
    /// Under the lock, so that watchers hear the changes in the order they happened.
    private func update(_ change: (inout State) -> APIProxy.Connectivity) {
        state.withLock { state in
            let next = change(&state)
            steadilyOnline.store(next == .online && state.failuresInARow == 0, ordering: .relaxed)
            guard next != state.connectivity else { return }
            state.connectivity = next
            for watcher in state.watchers.values { watcher.yield(next) }
        }
    }
}
