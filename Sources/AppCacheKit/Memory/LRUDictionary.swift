/// A dictionary that keeps its keys in exact least-recently-used order.
///
/// A doubly linked list threaded through an array of nodes, plus a hash index from key to node,
/// so that every operation is O(1). Reading with ``value(forKey:)`` or writing with
/// ``updateValue(_:forKey:)`` makes a key the most recently used; ``peekValue(forKey:)`` and
/// ``modifyValue(forKey:_:)`` leave the order alone. Not thread-safe: it lives inside the cache's
/// lock.
struct LRUDictionary<Key: Hashable, Value> {
    /// A node: its contents (`nil` while the node is free) and its place in the list, side by
    /// side, so that a hit reads the value and relinks the node in the same cache line.
    ///
    /// The links come first and the key last: a hit touches the links and the start of the
    /// value (where ``MemoryEntry`` keeps what a hit reads), and with many keys each cache line
    /// a hit touches is a read from memory.
    private struct Slot {
        /// Towards the most recently used end; `-1` at the head.
        var newer: Int = -1
        /// Towards the least recently used end; `-1` at the tail.
        var older: Int = -1
        var value: Value?
        var key: Key?

        init(key: Key?, value: Value?) {
            self.key = key
            self.value = value
        }
    }

    private var slots: [Slot] = []
    private var index: [Key: Int] = [:]
    private var freeNodes: [Int] = []
    /// The most recently used node, or `-1`.
    private var head = -1
    /// The least recently used node, or `-1`.
    private var tail = -1

    init() {}

    /// Makes room for `capacity` keys.
    mutating func reserveCapacity(_ capacity: Int) {
        slots.reserveCapacity(capacity)
        index.reserveCapacity(capacity)
    }

    /// The number of keys.
    var count: Int { index.count }

    var isEmpty: Bool { index.isEmpty }

    /// The value for `key`, making `key` the most recently used.
    ///
    /// - Complexity: O(1) on average.
    mutating func value(forKey key: Key) -> Value? {
        guard let node = index[key] else { return nil }
        moveToHead(node)
        return slots[node].value
    }

    /// A projection of the value for `key`, making `key` the most recently used; cheaper than
    /// copying out a large value.
    ///
    /// - Complexity: O(1) on average.
    mutating func value<Projection>(forKey key: Key, _ project: (borrowing Value) -> Projection) -> Projection? {
        guard let node = index[key] else { return nil }
        moveToHead(node)
        return project(slots[node].value.unsafelyUnwrapped)
    }

    /// Like ``value(forKey:_:)``, but `body` may also change the value in place.
    ///
    /// - Complexity: O(1) on average.
    @inline(__always)
    mutating func updatingValue<Projection>(forKey key: Key, _ body: (inout Value) -> Projection) -> Projection? {
        guard let node = index[key] else { return nil }
        moveToHead(node)
        return body(&slots[node].value!)
    }

    /// The value for `key`, leaving the order as it is.
    ///
    /// - Complexity: O(1) on average.
    func peekValue(forKey key: Key) -> Value? {
        index[key].flatMap { slots[$0].value }
    }

    /// Changes the value for `key` in place, leaving the order as it is.
    ///
    /// - Returns: what `body` returns, or `nil` when `key` is absent.
    /// - Complexity: O(1) on average.
    mutating func modifyValue<Result>(forKey key: Key, _ body: (inout Value) -> Result) -> Result? {
        guard let node = index[key] else { return nil }
        return body(&slots[node].value!)
    }

    /// Stores `value` for `key` and makes `key` the most recently used.
    ///
    /// - Returns: the value it replaced, if any.
    /// - Complexity: O(1) on average.
    @discardableResult
    mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        if let node = index[key] {
            let old = slots[node].value
            slots[node].value = value
            moveToHead(node)
            return old
        }
        let node: Int
        if let reused = freeNodes.popLast() {
            node = reused
            slots[node] = Slot(key: key, value: value)
        } else {
            node = slots.count
            slots.append(Slot(key: key, value: value))
        }
        index[key] = node
        linkAtHead(node)
        return nil
    }

    /// Removes `key`.
    ///
    /// - Returns: its value, if it was present.
    /// - Complexity: O(1) on average.
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        guard let node = index.removeValue(forKey: key) else { return nil }
        return release(node)
    }

    /// The least recently used key and its value, without changing the order.
    var leastRecentlyUsed: (key: Key, value: Value)? {
        guard tail >= 0 else { return nil }
        return (slots[tail].key!, slots[tail].value!)
    }

    /// Removes and returns the least recently used key and its value.
    ///
    /// - Complexity: O(1) on average.
    mutating func removeLeastRecentlyUsed() -> (key: Key, value: Value)? {
        guard tail >= 0 else { return nil }
        let node = tail
        let key = slots[node].key!
        index[key] = nil
        return (key, release(node)!)
    }

    /// Calls `body` on every key and value, from the least recently used to the most, leaving
    /// the order as it is.
    ///
    /// - Complexity: O(n).
    mutating func modifyEachFromLeastRecent(_ body: (Key, inout Value) -> Void) {
        var node = tail
        while node >= 0 {
            body(slots[node].key!, &slots[node].value!)
            node = slots[node].newer
        }
    }

    /// Removes everything.
    ///
    /// - Complexity: O(n).
    mutating func removeAll() {
        self = LRUDictionary()
    }

    /// The keys and values from the most recently used to the least.
    ///
    /// - Complexity: O(n).
    var elementsFromMostRecent: [(key: Key, value: Value)] {
        var elements: [(key: Key, value: Value)] = []
        elements.reserveCapacity(count)
        var node = head
        while node >= 0 {
            elements.append((slots[node].key!, slots[node].value!))
            node = slots[node].older
        }
        return elements
    }

    // MARK: - Private

    @inline(__always)
    private mutating func moveToHead(_ node: Int) {
        guard node != head else { return }
        unlink(node)
        linkAtHead(node)
    }

    @inline(__always)
    private mutating func linkAtHead(_ node: Int) {
        slots[node].newer = -1
        slots[node].older = head
        if head >= 0 { slots[head].newer = node }
        head = node
        if tail < 0 { tail = node }
    }

    @inline(__always)
    private mutating func unlink(_ node: Int) {
        let newer = slots[node].newer
        let older = slots[node].older
        if newer >= 0 { slots[newer].older = older } else { head = older }
        if older >= 0 { slots[older].newer = newer } else { tail = newer }
        slots[node].newer = -1
        slots[node].older = -1
    }

    /// Unlinks a node whose key has already left the index, frees it and returns its value.
    private mutating func release(_ node: Int) -> Value? {
        unlink(node)
        let value = slots[node].value
        slots[node] = Slot(key: nil, value: nil)
        freeNodes.append(node)
        return value
    }
}

extension LRUDictionary {
    /// Checks the structure's invariants, trapping on the first broken one. Tests call it after
    /// every operation.
    ///
    /// - Complexity: O(n).
    func _checkInvariants() {
        precondition(slots.count == index.count + freeNodes.count, "every node is either indexed or free")
        var seen = Set<Int>()
        var node = head
        var newer = -1
        while node >= 0 {
            precondition(seen.insert(node).inserted, "the list has no cycle")
            precondition(slots[node].newer == newer, "back links mirror forward links")
            let key = slots[node].key
            precondition(key != nil && slots[node].value != nil, "a linked node holds a key and a value")
            precondition(index[key!] == node, "the index points at the node holding the key")
            newer = node
            node = slots[node].older
        }
        precondition(tail == newer, "the tail is the last node of the list")
        precondition(seen.count == index.count, "every indexed node is on the list")
        for free in freeNodes {
            precondition(!seen.contains(free) && slots[free].key == nil && slots[free].value == nil, "free nodes are empty")
            precondition(slots[free].newer == -1 && slots[free].older == -1, "free nodes are unlinked")
        }
    }
}
