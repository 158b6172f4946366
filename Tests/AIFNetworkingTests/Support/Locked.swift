import Foundation

/// A lock-protected value for test bookkeeping (NSLock: the tests need no more).
final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only reached through withLock, under `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// Counts completion calls per request, to prove each request ends exactly once.
final class CompletionLedger: Sendable {
    private let calls = Locked([Int: Int]())

    func record(_ id: Int) {
        calls.withLock { $0[id, default: 0] += 1 }
    }

    /// Request IDs called other than exactly once, among `0..<count`.
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

/// Waits until `condition` holds, polling every 10 ms, for at most `timeout`.
func waitUntil(timeout: Duration = .seconds(30), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}
