import CCurl

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// libcurl's process-wide initialisation, done once, before the first handle is made: with
/// the C library's memory functions, unless a program asked for ``CurlMemory``'s first
/// (``CurlTransport/recycleLibcurlTransferBuffers()``).
enum CurlGlobal {
    private enum State {
        case uninitialized
        case initialized(withRecyclingMemory: Bool)
    }

    private static let state = Locked(State.uninitialized)

    /// Initialises libcurl the plain way, if nothing has yet.
    static func initialize() {
        state.withLock { state in
            guard case .uninitialized = state else { return }
            _ = curl_global_init(aif_curl_global_all)
            state = .initialized(withRecyclingMemory: false)
        }
    }

    /// Initialises libcurl with ``CurlMemory``'s functions, if nothing has yet.
    ///
    /// - Returns: Whether libcurl now uses them.
    static func initializeWithRecyclingMemory() -> Bool {
        state.withLock { state in
            switch state {
            case .uninitialized:
                let code = CurlMemory.initializeLibcurl()
                state = .initialized(withRecyclingMemory: code == CURLE_OK)
                return code == CURLE_OK
            case .initialized(let recycling):
                return recycling
            }
        }
    }
}

/// Memory functions for libcurl that a program may choose: the C library's, except that the
/// buffer libcurl allocates for every transfer (16 KiB, `malloc`ed when the transfer starts and
/// `free`d when it ends) is kept for the next transfer instead of going back to `malloc`.
///
/// Why: the buffer is allocated on the transport's thread, whose `malloc` arena also takes back
/// the responses and requests other threads free. With that traffic, freeing the buffer often
/// joins it to a top chunk past glibc's trim threshold, and the arena gives the memory back to
/// the kernel (`madvise`) — to fault it in again a transfer later, a page fault every few
/// requests (see `Benchmarks/history/notes.md`). Kept here, the buffer never reaches `free`, and the
/// cycle is gone.
///
/// The functions are process-wide — every libcurl user in the process gets them, Foundation's
/// URLSession included — so the library installs them only when a program asks
/// (``CurlTransport/recycleLibcurlTransferBuffers()``), and only if libcurl has not been
/// initialised in this process yet. Every block comes from the C library's `malloc`, so blocks
/// pass freely between these functions and the C library's.
enum CurlMemory {
    /// The size libcurl asks for its transfer buffer: the default `CURLOPT_BUFFERSIZE`
    /// (`CURL_MAX_WRITE_SIZE`) plus a terminating byte.
    @inline(__always) static var transferBufferSize: Int { Int(CURL_MAX_WRITE_SIZE) + 1 }

    /// The kept transfer buffers: at most 64 (1 MiB).
    static let transferBuffers = BlockShelf(blockSize: transferBufferSize, capacity: 64)

    /// Initialises libcurl with these functions (when it was not initialised before in this
    /// process; otherwise libcurl keeps the functions it has).
    static func initializeLibcurl() -> CURLcode {
        curl_global_init_mem(
            aif_curl_global_all,
            { size in CurlMemory.allocate(size) },
            { block in CurlMemory.release(block) },
            { block, size in realloc(block, size) },
            { text in text.flatMap { strdup($0) } },
            { count, size in calloc(count, size) }
        )
    }

    /// `malloc`, answering a request of the transfer buffer's size with a kept buffer if any.
    static func allocate(_ size: Int) -> UnsafeMutableRawPointer? {
        if size == transferBufferSize, let block = transferBuffers.take() { return block }
        return malloc(size)
    }

    /// `free`, unless the shelf keeps the block. (Most blocks are told apart by their size
    /// alone, before the shelf is touched: libcurl frees some hundred blocks a transfer.)
    static func release(_ block: UnsafeMutableRawPointer?) {
        guard let block else { return }
        if BlockShelf.fits(block, size: transferBufferSize), transferBuffers.keep(block) { return }
        free(block)
    }
}

/// Blocks from `malloc` of one size, kept for reuse instead of freed: a bounded stack.
final class BlockShelf: Sendable {
    /// The size every block handed out has room for.
    let blockSize: Int
    /// How many blocks are kept at most.
    let capacity: Int

    private struct Shelf {
        var blocks: [UnsafeMutableRawPointer] = []
        var hits = 0
    }

    // Raw pointers are not `Sendable`; sharing these is safe: a block on the shelf is held by
    // no one else, and it is put on and taken off only under the lock.
    private let shelf: Locked<Shelf>

    /// Creates an empty shelf for blocks of `blockSize` bytes.
    init(blockSize: Int, capacity: Int) {
        self.blockSize = blockSize
        self.capacity = capacity
        var shelf = Shelf()
        shelf.blocks.reserveCapacity(capacity)
        self.shelf = Locked(shelf)
    }

    deinit {
        for block in shelf.withLock({ $0.blocks }) { free(block) }
    }

    /// A kept block, or `nil` when none is.
    func take() -> UnsafeMutableRawPointer? {
        shelf.withLock { shelf in
            guard let block = shelf.blocks.popLast() else { return nil }
            shelf.hits += 1
            return block
        }
    }

    /// Whether `block` can serve as a block of `size` bytes on a shelf: its usable size — all
    /// `free` can learn of a block — is at least `size`, and not much more.
    @inline(__always) static func fits(_ block: UnsafeMutableRawPointer, size: Int) -> Bool {
        let usable = aif_malloc_usable_size(block)
        return usable >= size && usable < size + 64
    }

    /// Keeps `block` if it fits (see ``fits(_:size:)``) and the shelf has room; otherwise the
    /// caller frees it.
    func put(_ block: UnsafeMutableRawPointer) -> Bool {
        Self.fits(block, size: blockSize) && keep(block)
    }

    /// Keeps `block`, already known to fit, if the shelf has room.
    func keep(_ block: UnsafeMutableRawPointer) -> Bool {
        shelf.withLock { shelf in
            guard shelf.blocks.count < capacity else { return false }
            shelf.blocks.append(block)
            return true
        }
    }

    /// How many blocks are kept.
    var count: Int {
        shelf.withLock { $0.blocks.count }
    }

    /// How many blocks were handed out again so far.
    var hits: Int {
        shelf.withLock { $0.hits }
    }
}
