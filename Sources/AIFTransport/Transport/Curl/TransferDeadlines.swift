/// The running transfers' total deadlines, earliest first: a binary min-heap in which each
/// transfer knows its place (``Transfer/deadlineIndex``), so a transfer that ends before its
/// deadline leaves at once and nothing outlives it.
///
/// The event loop keeps these itself instead of leaving the total timeout to libcurl, whose
/// timers lose a transfer in two ways (libcurl 7.88): one waiting for a connection
/// (`CURLMOPT_MAX_HOST_CONNECTIONS`) is never checked against its timeouts, and when it finally
/// starts connecting its timers start again from then — it times out late, or at once with
/// "Connection timed out after 0 milliseconds" once its total time is spent; and a timer due in
/// under a millisecond when its transfer runs for another reason is dropped. Here a deadline
/// is a number the loop compares with its clock on every turn.
///
/// Used on the event loop's thread alone.
struct TransferDeadlines {
    private var heap: [Transfer] = []

    /// The earliest deadline, in ``TransferSteering/now()`` nanoseconds, if any.
    var earliest: UInt64? { heap.first?.deadline }

    var isEmpty: Bool { heap.isEmpty }

    /// Adds a transfer whose ``Transfer/deadline`` is set.
    mutating func insert(_ transfer: Transfer) {
        transfer.deadlineIndex = heap.count
        heap.append(transfer)
        siftUp(heap.count - 1)
    }

    /// Takes a transfer out; harmless if it is not in.
    mutating func remove(_ transfer: Transfer) {
        let index = transfer.deadlineIndex
        guard index >= 0, index < heap.count, heap[index] === transfer else { return }
        transfer.deadlineIndex = -1
        let last = heap.removeLast()
        guard index < heap.count else { return }
        heap[index] = last
        last.deadlineIndex = index
        siftDown(index)
        siftUp(index)
    }

    /// Takes out and returns the transfer with the earliest deadline if that is at or before
    /// `now`.
    mutating func popExpired(now: UInt64) -> Transfer? {
        guard let first = heap.first, first.deadline <= now else { return nil }
        remove(first)
        return first
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { return }
            swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            let right = left + 1
            let smaller = right < heap.count && heap[right].deadline < heap[left].deadline ? right : left
            guard heap[smaller].deadline < heap[parent].deadline else { return }
            swapAt(parent, smaller)
            parent = smaller
        }
    }

    private mutating func swapAt(_ first: Int, _ second: Int) {
        heap.swapAt(first, second)
        heap[first].deadlineIndex = first
        heap[second].deadlineIndex = second
    }
}
