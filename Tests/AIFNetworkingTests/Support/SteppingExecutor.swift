@testable import AIFNetworking
@testable import TestSupport
@_spi(CrossModule) import AIFTransport

/// Where a test's loads run their steps one at a time, when the test says: each step handed
/// over waits, in order, until ``runNext()``. A test then stops a load between any two of its
/// steps — or just as the transport's answer has come, before the load has heard it.
final class SteppingExecutor: StepExecutor {
    private let state = Locked<(steps: [@Sendable () -> Void], waiting: [(count: Int, arrived: @Sendable (()) -> Void)])>(([], []))

    /// How many steps wait.
    var pending: Int { state.withLock { $0.steps.count } }

    func run(_ step: @escaping @Sendable () -> Void) {
        let ready = state.withLock { state -> [@Sendable (()) -> Void] in
            state.steps.append(step)
            let count = state.steps.count
            defer { state.waiting.removeAll { $0.count <= count } }
            return state.waiting.filter { $0.count <= count }.map(\.arrived)
        }
        for arrived in ready { arrived(()) }
    }

    /// Returns once `count` steps wait.
    func waitForSteps(_ count: Int) async {
        await event { (arrived: @escaping @Sendable (()) -> Void) in
            let now = state.withLock { state -> Bool in
                guard state.steps.count < count else { return true }
                state.waiting.append((count, arrived))
                return false
            }
            if now { arrived(()) }
        }
    }

    /// Runs the oldest step waiting; `false` when none waits.
    @discardableResult
    func runNext() -> Bool {
        let step = state.withLock { state in state.steps.isEmpty ? nil : state.steps.removeFirst() }
        step?()
        return step != nil
    }

    /// Runs steps until none waits, those they hand over included.
    func runAll() {
        while runNext() {}
    }
}
