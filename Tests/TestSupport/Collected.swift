import AIFTransport

/// Values a test collects as other threads hand them over, awaited by count: no polling, no time
/// of its own.
final class Collected<Value: Sendable>: Sendable {
    private struct State {
        var values: [Value] = []
        var waiting: [(count: Int, tell: @Sendable ([Value]) -> Void)] = []
    }

    private let state = Locked(State())

    init() {}

    /// The values so far, in the order they came.
    var values: [Value] { state.withLock { $0.values } }

    /// Adds a value; tells the tests waiting for as many.
    func append(_ value: Value) {
        let (values, ready) = state.withLock { state in
            state.values.append(value)
            let count = state.values.count
            defer { state.waiting.removeAll { $0.count <= count } }
            return (state.values, state.waiting.filter { $0.count <= count }.map(\.tell))
        }
        for tell in ready { tell(values) }
    }

    /// Returns the values once there are `count` of them — or those there are when the waiting
    /// test is cancelled (past its time limit).
    func wait(count: Int) async -> [Value] {
        await event { (tell: @escaping @Sendable ([Value]) -> Void) in
            let now = state.withLock { state -> [Value]? in
                if state.values.count >= count { return state.values }
                state.waiting.append((count, tell))
                return nil
            }
            if let now { tell(now) }
        } ?? values
    }
}
