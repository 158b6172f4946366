import AIFTransport
import Foundation

/// Counts completion calls per request, to prove each request ends exactly once.
final class CompletionLedger: Sendable {
    private let calls = Locked([Int: Int]())

    func record(_ id: Int) {
        calls.withLock { $0[id, default: 0] += 1 }
    }

    /// Load IDs called other than exactly once, among `0..<count`.
    func anomalies(expecting count: Int) -> [Int: Int] {
        calls.withLock { calls in
            var result: [Int: Int] = [:]
            for id in 0..<count where calls[id, default: 0] != 1 { result[id] = calls[id, default: 0] }
            for (id, n) in calls where id >= count { result[id] = n }
            return result
        }
    }

    var total: Int {
        calls.withLock { $0.values.reduce(0, +) }
    }
}

/// Waits, at most `timeout`, until `condition` holds; returns whether it did. The default is
/// long (30 s) because it only bounds a failure: under the thread sanitizer, with the whole
/// suite on two cores, a delivery that takes milliseconds alone has been seen to take 13 s.
@discardableResult
func eventually(timeout: Duration = .seconds(30), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

/// A task's outcome, or `nil` when it has not ended within `timeout` (30 s by default, for the
/// reason given on ``eventually(timeout:_:)``): so that a load that never ends fails its test
/// instead of hanging the run.
func outcome<Success: Sendable>(of task: Task<Success, any Error>, within timeout: Duration = .seconds(30)) async -> Result<Success, any Error>? {
    let ended = Locked<Result<Success, any Error>?>(nil)
    let watcher = Task { ended.withLock { [result = await task.result] in $0 = result } }
    defer { watcher.cancel() }
    await eventually(timeout: timeout) { ended.withLock { $0 != nil } }
    return ended.withLock { $0 }
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
