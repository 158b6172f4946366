/// A fixed-capacity map that forgets the least recently used entry when full.
///
/// A value type with no locking of its own (``ResponseCache`` keeps one behind its lock).
/// Lookups, insertions and removals are O(1): entries sit in an array of slots linked in use
/// order, and a dictionary maps each key to its slot.
struct LRUStorage<Key: Hashable, Value> {
    private struct Slot {
        var key: Key
        var value: Value
        var newer: Int?
        var older: Int?
    }

    /// How many entries it holds at most.
    let capacity: Int
    private var slots: [Slot?] = []
    private var freeSlots: [Int] = []
    private var index: [Key: Int] = [:]
    private var newest: Int?
    private var oldest: Int?

    init(capacity: Int) {
        precondition(capacity > 0, "an LRU storage needs room for at least one entry")
        self.capacity = capacity
    }

    /// The number of entries.
    var count: Int { index.count }

    /// The keys, most recently used first.
    var keysByRecency: [Key] {
        var keys: [Key] = []
        var cursor = newest
        while let slot = cursor, let entry = slots[slot] {
            keys.append(entry.key)
            cursor = entry.older
        }
        return keys
    }

    /// Every value, in no particular order.
    var values: [Value] {
        index.values.map { slots[$0]!.value }
    }

    /// The value for `key`, marking it most recently used.
    mutating func value(for key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        moveToFront(slot)
        return slots[slot]!.value
    }

    /// Stores a value, marking it most recently used.
    ///
    /// - Returns: The entry evicted to make room, if any.
    @discardableResult
    mutating func set(_ value: Value, for key: Key) -> (key: Key, value: Value)? {
        if let slot = index[key] {
            slots[slot]!.value = value
            moveToFront(slot)
            return nil
        }
        var evicted: (key: Key, value: Value)?
        if index.count >= capacity, let victim = oldest {
            evicted = (slots[victim]!.key, slots[victim]!.value)
            removeSlot(victim)
        }
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = Slot(key: key, value: value, newer: nil, older: newest)
        } else {
            slot = slots.count
            slots.append(Slot(key: key, value: value, newer: nil, older: newest))
        }
        if let front = newest { slots[front]!.newer = slot }
        newest = slot
        if oldest == nil { oldest = slot }
        index[key] = slot
        return evicted
    }

    /// Removes the entry for `key`.
    @discardableResult
    mutating func removeValue(for key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        let value = slots[slot]!.value
        removeSlot(slot)
        return value
    }

    /// Removes every entry whose key matches.
    mutating func removeAll(where matches: (Key) -> Bool) {
        for (key, slot) in index where matches(key) { removeSlot(slot) }
    }

    private mutating func unlink(_ slot: Int) {
        let entry = slots[slot]!
        if let newer = entry.newer { slots[newer]!.older = entry.older } else { newest = entry.older }
        if let older = entry.older { slots[older]!.newer = entry.newer } else { oldest = entry.newer }
    }

    private mutating func moveToFront(_ slot: Int) {
        guard newest != slot else { return }
        unlink(slot)
        slots[slot]!.older = newest
        slots[slot]!.newer = nil
        if let front = newest { slots[front]!.newer = slot }
        newest = slot
        if oldest == nil { oldest = slot }
    }

    private mutating func removeSlot(_ slot: Int) {
        unlink(slot)
        index[slots[slot]!.key] = nil
        slots[slot] = nil
        freeSlots.append(slot)
    }
}
