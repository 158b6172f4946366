import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A growable byte buffer on `malloc`, for collecting a response as libcurl delivers it.
///
/// Appending is a `memcpy` (no copy-on-write or exclusivity bookkeeping per chunk), and the
/// finished buffer becomes a `Data` without another copy (``takeData()``). Used on the event
/// loop's thread only; whoever owns one calls ``release()`` or a `take` method exactly once.
struct ResponseBytes {
    private(set) var base: UnsafeMutableRawPointer?
    private(set) var count = 0
    private var capacity = 0

    /// Appends `bytes`, growing the buffer (at least doubling) when needed.
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        if count + bytes.count > capacity {
            reserve(Swift.max(count + bytes.count, capacity * 2, 512))
        }
        (base! + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    /// Makes room for `total` bytes in all.
    mutating func reserve(_ total: Int) {
        guard total > capacity else { return }
        guard let grown = realloc(base, total) else { return }
        base = grown
        capacity = total
    }

    /// Forgets the contents, keeping the allocation.
    mutating func removeAll() {
        count = 0
    }

    /// The contents as `Data`, handing the allocation over to it; the buffer is empty after.
    mutating func takeData() -> Data {
        defer { self = ResponseBytes() }
        guard let base, count > 0 else {
            release()
            return Data()
        }
        return Data(bytesNoCopy: base, count: count, deallocator: .free)
    }

    /// A copy of the contents as an array; the buffer keeps its allocation.
    func copyBytes() -> [UInt8] {
        guard let base, count > 0 else { return [] }
        return [UInt8](UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Frees the allocation.
    mutating func release() {
        free(base)
        self = ResponseBytes()
    }
}
