import Dispatch
import Foundation

/// A signal given once by one thread — the last request ended, the last load finished — and
/// awaited by another for at most a time limit: what the in-flight helper and the soak wait on
/// instead of polling a count.
///
/// Unchecked for Sendable, with a reason: its two fields are read and written under `lock`
/// alone (an `NSLock`, whose pthread mutex the thread sanitizer sees; the helper runs under it).
public final class OnceSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var given = false
    private var waiter: CheckedContinuation<Void, Never>?

    public init() {}

    /// Gives the signal; a second time does nothing.
    public func give() {
        takeWaiter(marking: true)?.resume()
    }

    /// Returns once the signal is given, or when `limit` passes first.
    public func wait(atMost limit: Duration) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if given {
                lock.unlock()
                return continuation.resume()
            }
            waiter = continuation
            lock.unlock()
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(max(0, Int(limit / .milliseconds(1))))) {
                self.takeWaiter(marking: false)?.resume()
            }
        }
    }

    private func takeWaiter(marking: Bool) -> CheckedContinuation<Void, Never>? {
        lock.lock()
        defer { lock.unlock() }
        if marking { given = true }
        defer { waiter = nil }
        return waiter
    }
}
