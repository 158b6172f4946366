@_spi(CrossModule) import AIFTransport

/// Values a test collects as other threads hand them over, awaited by count: no polling, no time
/// of its own.
final class Collected<Value: Sendable>: Sendable {
    private struct State {
        var values: [Value] = []
        var waiting: [(count: Int, tell: @Sendable ([Value]) -> Void)] = []
        var watching: [(matches: @Sendable (Value) -> Bool, tell: @Sendable (Value) -> Void)] = []
    }

    private let state = Locked(State())

    init() {}

    /// The values so far, in the order they came.
    var values: [Value] { state.withLock { $0.values } }

    /// Adds a value; tells the tests waiting for as many.
    func append(_ value: Value) {
        let (values, ready, matched) = state.withLock { state in
            state.values.append(value)
            let count = state.values.count
            defer {
                state.waiting.removeAll { $0.count <= count }
                state.watching.removeAll { $0.matches(value) }
            }
            return (state.values, state.waiting.filter { $0.count <= count }.map(\.tell), state.watching.filter { $0.matches(value) }.map(\.tell))
        }
        for tell in ready { tell(values) }
        for tell in matched { tell(value) }
    }

    /// Returns the first value that `matches` — one there already, or the next to come — or
    /// `nil` when the waiting test is cancelled first (past its time limit).
    func first(where matches: @escaping @Sendable (Value) -> Bool) async -> Value? {
        await event { (tell: @escaping @Sendable (Value) -> Void) in
            let now = state.withLock { state -> Value? in
                if let found = state.values.first(where: matches) { return found }
                state.watching.append((matches, tell))
                return nil
            }
            if let now { tell(now) }
        }
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
