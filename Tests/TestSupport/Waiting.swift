@_spi(CrossModule) import AIFTransport
import Foundation

/// Counts completion calls per request, to prove each request ends exactly once; a test awaits
/// a number of calls (``wait(total:)``) rather than polling for it.
final class CompletionLedger: Sendable {
    private struct State {
        var calls: [Int: Int] = [:]
        var total = 0
        var waiting: [(total: Int, tell: @Sendable (()) -> Void)] = []
    }

    private let state = Locked(State())

    func record(_ id: Int) {
        let ready = state.withLock { state -> [@Sendable (()) -> Void] in
            state.calls[id, default: 0] += 1
            state.total += 1
            let total = state.total
            defer { state.waiting.removeAll { $0.total <= total } }
            return state.waiting.filter { $0.total <= total }.map(\.tell)
        }
        for tell in ready { tell(()) }
    }

    /// Returns once `total` completion calls are recorded, or when the waiting test is cancelled
    /// (past its time limit). No polling, no time of its own.
    func wait(total: Int) async {
        await event { (tell: @escaping @Sendable (()) -> Void) in
            let now = state.withLock { state -> Bool in
                if state.total >= total { return true }
                state.waiting.append((total, tell))
                return false
            }
            if now { tell(()) }
        }
    }

    /// Load IDs called other than exactly once, among `0..<count`.
    func anomalies(expecting count: Int) -> [Int: Int] {
        state.withLock { state in
            var result: [Int: Int] = [:]
            for id in 0..<count where state.calls[id, default: 0] != 1 { result[id] = state.calls[id, default: 0] }
            for (id, n) in state.calls where id >= count { result[id] = n }
            return result
        }
    }

    var total: Int {
        state.withLock { $0.total }
    }
}

/// A task's outcome, or `nil` when the waiting test was cancelled first — as Swift Testing
/// cancels a test past its time limit, so that a load that never ends fails its test instead of
/// hanging the run. No polling, no time of its own.
func outcome<Success: Sendable>(of task: Task<Success, any Error>) async -> Result<Success, any Error>? {
    await event { (tell: @escaping @Sendable (Result<Success, any Error>) -> Void) in
        Task { tell(await task.result) }
    }
}

/// Waits until the calling task is cancelled, then throws `CancellationError` — with no time of
/// its own: what a refresh or a producer that never comes back does in a test driven by a
/// manual clock.
func waitUntilCancelled() async throws -> Never {
    let (never, continuation) = AsyncStream<Never>.makeStream()
    for await _ in never {}
    withExtendedLifetime(continuation) {}
    throw CancellationError()
}

/// Waits for a value another thread hands over — or until the waiting task is cancelled, as
/// Swift Testing cancels a test that outlives its time limit, so that a test waiting for an
/// event that never comes fails at its limit instead of hanging the run. No polling, no time
/// of its own. `register` gets the function that hands the value over (called at once when the
/// value is there already); a second call of it is ignored.
///
/// - Returns: The value, or `nil` when the wait was cancelled first.
@discardableResult
func event<Value: Sendable>(_ register: (@escaping @Sendable (Value) -> Void) -> Void) async -> Value? {
    let pending = Locked<CheckedContinuation<Value?, Never>?>(nil)
    @Sendable func finish(_ value: Value?) {
        pending.withLock { continuation in
            defer { continuation = nil }
            return continuation
        }?.resume(returning: value)
    }
    return await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
            pending.withLock { $0 = continuation }
            register { finish($0) }
            if Task.isCancelled { finish(nil) }
        }
    } onCancel: {
        finish(nil)
    }
}

extension Task where Failure == any Error {
    /// The task's value, awaited so that cancelling the waiting task — a test past its time
    /// limit — cancels this one too (a load then ends, and the test with it).
    var linkedValue: Success {
        get async throws { try await withTaskCancellationHandler { try await value } onCancel: { cancel() } }
    }

    /// The task's result, awaited as ``linkedValue`` is.
    var linkedResult: Result<Success, any Error> {
        get async { await withTaskCancellationHandler { await result } onCancel: { cancel() } }
    }
}

extension Task where Failure == Never {
    /// The task's value, awaited so that cancelling the waiting task cancels this one too.
    var linkedValue: Success {
        get async { await withTaskCancellationHandler { await value } onCancel: { cancel() } }
    }
}
