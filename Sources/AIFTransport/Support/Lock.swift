#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutual-exclusion lock over a `pthread_mutex_t`, owning the value it protects.
///
/// The project uses this rather than `Synchronization.Mutex`, after checking: with this type
/// rebuilt over `Mutex` (Swift 6.3.1, Linux x86_64), `swift test --sanitize=thread` reported
/// 8–10 "data race" / "Swift access race" warnings per run, every one between two accesses to
/// the event loop's inbox that both sit inside `withLock` — false positives: `Mutex` locks
/// with raw futex system calls, which TSan does not intercept, so it never learns that one
/// critical section happens before the next. Over `pthread_mutex_t`, which TSan does
/// intercept, the same suite reports nothing (the entries in `.tsan/suppressions.txt` concern
/// the standard library's continuations and the test server, not locks).
///
/// The package's other modules (the layers above, the disk cache) use it too; it is not public
/// API. SPI rather than package access, so that ``withLock(_:)`` is inlined and specialized in
/// those modules: this compiler inlines a package declaration into another module only when it
/// is public (as a generic call, each acquisition cost about 80 instructions more).
///
/// - Note: `@unchecked Sendable` is safe here because the protected value is only ever reached
///   through ``withLock(_:)``, which holds the mutex for the whole access.
@_spi(CrossModule) public final class Locked<Value>: @unchecked Sendable {
    // Allocated rather than stored inline: a pthread mutex must not move, and Swift does not
    // promise a stable address for a stored property passed with `&`. Allocated with `malloc`,
    // whose blocks are aligned for it: `UnsafeMutablePointer.allocate` asks the runtime for
    // "default" alignment, which on Linux it serves with `posix_memalign`, about 400
    // instructions against `malloc`'s 100 (a load makes two locks).
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    // Unchecked exclusivity: every access is inside `withLock`, under the mutex, and the mutex
    // is not recursive (a nested `withLock` on the same lock would deadlock before it could
    // overlap), so the runtime's dynamic check (two calls per access) would only cost time.
    @exclusivity(unchecked) @usableFromInline var value: Value

    /// Creates a lock owning `value`.
    public init(_ value: Value) {
        self.value = value
        guard let block = malloc(MemoryLayout<pthread_mutex_t>.size) else { fatalError("out of memory for a lock") }
        mutex = block.bindMemory(to: pthread_mutex_t.self, capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        free(mutex)
    }

    /// Runs `body` with exclusive access to the protected value.
    ///
    /// Inlinable, so that the modules above get it specialized for their values.
    @inlinable
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body(&value)
    }

    @usableFromInline
    func lock() { pthread_mutex_lock(mutex) }

    @usableFromInline
    func unlock() { pthread_mutex_unlock(mutex) }
}
