/// A dictionary that keeps its keys in exact least-recently-used order.
///
/// Values live in the hash table itself, beside their keys, so that a read touches the table's
/// bucket and nothing else at a random place in memory. The order is kept apart from the
/// values: every key has a small number (its *node*) and the moment of its last use (its
/// *stamp*, in a dense array), and every use appends the node and stamp to a log. A log entry is
/// *current* while its stamp is still its node's: the current entries, in log order, are the
/// keys from least to most recently used, one each. A use is therefore two writes to memory the
/// processor already holds, where a linked list would relink two neighbours at random places.
/// The log is compacted (its superseded entries dropped) once it is more than twice as long
/// as the dictionary (plus 64), so it costs amortised O(1) per use and at most two entries of
/// 8 bytes per key.
///
/// Reading with ``value(forKey:)`` or writing with ``updateValue(_:forKey:)`` makes a key the
/// most recently used; ``peekValue(forKey:)`` and ``modifyValue(forKey:_:)`` leave the order
/// alone. Not thread-safe: it lives inside its owner's lock.
struct LRUDictionary<Key: Hashable, Value> {
    /// A value and the number of its key's node.
    private struct Node {
        var value: Value
        let id: UInt32

        /// Calls `body` on the node where it is stored.
        @inline(__always)
        mutating func visit<Result>(_ body: (inout Node) -> Result) -> Result {
            body(&self)
        }
    }

    /// One use of a node: current while `stamps[node] == stamp`.
    private struct Use {
        var node: UInt32
        var stamp: UInt32
    }

    private var index: [Key: Node] = [:]
    /// The key of each node, `nil` while the node is free.
    private var nodeKeys: [Key?] = []
    /// The stamp of each node's last use, `0` while the node is free.
    private var stamps: [UInt32] = []
    private var freeNodes: [UInt32] = []
    /// Every use since the last compaction, oldest first; entries before ``firstUse`` are
    /// spent. The entry at `firstUse`, when there is one, is current: the least recently used.
    private var uses: [Use] = []
    private var firstUse = 0
    /// The last stamp handed out. Stamps wrap, skipping `0`; a superseded entry is dropped
    /// by the next compaction, long before its stamp could come round again (see
    /// ``maximumCount``).
    private var clock: UInt32 = 0

    /// The most keys it holds: stamps wrap after 2^32 uses, and a superseded log entry lives
    /// for fewer than `2 * maximumCount + 64` of them.
    static var maximumCount: Int { 1 << 30 }

    init() {}

    /// Makes room for `capacity` keys.
    mutating func reserveCapacity(_ capacity: Int) {
        index.reserveCapacity(capacity)
        nodeKeys.reserveCapacity(capacity)
        stamps.reserveCapacity(capacity)
        uses.reserveCapacity(2 * capacity)
    }

    /// The number of keys.
    var count: Int { index.count }

    var isEmpty: Bool { index.isEmpty }

    /// The value for `key`, making `key` the most recently used.
    ///
    /// - Complexity: O(1) on average.
    mutating func value(forKey key: Key) -> Value? {
        updatingValue(forKey: key) { $0 }
    }

    /// Calls `body` on the value for `key` in place and makes `key` the most recently used;
    /// cheaper than copying out a large value.
    ///
    /// - Returns: what `body` returns, or `nil` when `key` is absent.
    /// - Complexity: O(1) on average (amortised: a use may compact the log).
    @inline(__always)
    mutating func updatingValue<Projection>(forKey key: Key, _ body: (inout Value) -> Projection) -> Projection? {
        // One hash and probe, then the value changed where it is stored.
        guard let position = index.index(forKey: key) else { return nil }
        // The node's number read in place too: copying the node out would retain, and so
        // touch, everything its value refers to.
        let (id, result) = index.values[position].visit { node in (node.id, body(&node.value)) }
        use(id)
        return result
    }

    /// The value for `key`, leaving the order as it is.
    ///
    /// - Complexity: O(1) on average.
    func peekValue(forKey key: Key) -> Value? {
        index[key]?.value
    }

    /// Changes the value for `key` in place, leaving the order as it is.
    ///
    /// - Returns: what `body` returns, or `nil` when `key` is absent.
    /// - Complexity: O(1) on average.
    mutating func modifyValue<Result>(forKey key: Key, _ body: (inout Value) -> Result) -> Result? {
        index.index(forKey: key).map { body(&index.values[$0].value) }
    }

    /// Stores `value` for `key` and makes `key` the most recently used.
    ///
    /// - Returns: the value it replaced, if any.
    /// - Complexity: O(1) on average (amortised).
    @discardableResult
    mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        precondition(index.count < Self.maximumCount, "LRUDictionary holds at most 2^30 keys")
        // The node a new key takes is chosen first, so that one hash and probe both finds the
        // key and, when it is new, inserts it.
        let newID = freeNodes.last ?? UInt32(nodeKeys.count)
        let (id, old) = Self.store(value, newID: newID, in: &index[key])
        if old == nil {
            if id == freeNodes.last {
                freeNodes.removeLast()
                nodeKeys[Int(id)] = key
            } else {
                nodeKeys.append(key)
                stamps.append(0)
            }
        }
        use(id)
        return old
    }

    /// Puts `value` in `slot` (a key's place in the index): its node stays when it held one,
    /// `newID` is its node when it was empty.
    ///
    /// - Returns: the slot's node and the value it held.
    @inline(__always)
    private static func store(_ value: Value, newID: UInt32, in slot: inout Node?) -> (id: UInt32, old: Value?) {
        guard let id = slot?.id else {
            slot = Node(value: value, id: newID)
            return (newID, nil)
        }
        let old = slot?.value
        slot?.value = value
        return (id, old)
    }

    /// Removes `key`.
    ///
    /// - Returns: its value, if it was present.
    /// - Complexity: O(1) on average (amortised).
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        guard let node = index.removeValue(forKey: key) else { return nil }
        release(node.id)
        return node.value
    }

    /// The least recently used key and its value, without changing the order.
    ///
    /// - Complexity: O(1) on average.
    var leastRecentlyUsed: (key: Key, value: Value)? {
        guard firstUse < uses.count, let key = nodeKeys[Int(uses[firstUse].node)] else { return nil }
        return (key, index[key]!.value)
    }

    /// Removes and returns the least recently used key and its value.
    ///
    /// - Complexity: O(1) on average (amortised).
    mutating func removeLeastRecentlyUsed() -> (key: Key, value: Value)? {
        guard let (key, _) = leastRecentlyUsed else { return nil }
        return (key, removeValue(forKey: key)!)
    }

    /// Calls `body` on every key and value, from the least recently used to the most, leaving
    /// the order as it is.
    ///
    /// - Complexity: O(n).
    mutating func modifyEachFromLeastRecent(_ body: (Key, inout Value) -> Void) {
        for position in firstUse..<uses.count where isCurrent(uses[position]) {
            let key = nodeKeys[Int(uses[position].node)]!
            if let bucket = index.index(forKey: key) { body(key, &index.values[bucket].value) }
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
        for position in (firstUse..<uses.count).reversed() where isCurrent(uses[position]) {
            let key = nodeKeys[Int(uses[position].node)]!
            elements.append((key, index[key]!.value))
        }
        return elements
    }

    // MARK: - Private

    @inline(__always)
    private func isCurrent(_ use: Use) -> Bool {
        stamps[Int(use.node)] == use.stamp
    }

    /// Records a use of `node`, now the most recently used.
    @inline(__always)
    private mutating func use(_ node: UInt32) {
        clock &+= 1
        if clock == 0 { clock = 1 }
        stamps[Int(node)] = clock
        uses.append(Use(node: node, stamp: clock))
        if uses[firstUse].node == node { dropSpentUses() }  // its previous use was the oldest
        if uses.count > 2 * index.count + 64 { compact() }
    }

    /// Frees `node`, whose key has already left the index.
    private mutating func release(_ node: UInt32) {
        stamps[Int(node)] = 0
        nodeKeys[Int(node)] = nil
        freeNodes.append(node)
        if firstUse < uses.count, uses[firstUse].node == node { dropSpentUses() }
        if uses.count > 2 * index.count + 64 { compact() }
    }

    /// Moves ``firstUse`` past superseded entries, so that it is current again.
    private mutating func dropSpentUses() {
        while firstUse < uses.count, !isCurrent(uses[firstUse]) {
            firstUse += 1
        }
    }

    /// Keeps only the current entries, in order.
    private mutating func compact() {
        var kept = 0
        for position in firstUse..<uses.count where isCurrent(uses[position]) {
            uses[kept] = uses[position]
            kept += 1
        }
        uses.removeLast(uses.count - kept)
        firstUse = 0
    }
}

extension LRUDictionary {
    /// Checks the structure's invariants, trapping on the first broken one. Tests call it after
    /// every operation.
    ///
    /// - Complexity: O(n).
    func _checkInvariants() {
        precondition(nodeKeys.count == stamps.count, "every node has a key slot and a stamp")
        precondition(nodeKeys.count == index.count + freeNodes.count, "every node is either indexed or free")
        for (key, node) in index {
            precondition(nodeKeys[Int(node.id)] == key, "a node knows its key")
            precondition(stamps[Int(node.id)] != 0, "a used node has a stamp")
        }
        for free in freeNodes {
            precondition(nodeKeys[Int(free)] == nil && stamps[Int(free)] == 0, "free nodes are empty")
        }
        precondition(Set(freeNodes).count == freeNodes.count, "a node is freed once")
        precondition(firstUse <= uses.count && uses.count <= 2 * index.count + 64, "the log is bounded")
        precondition(firstUse == uses.count || isCurrent(uses[firstUse]), "the first entry is current")
        var seen = Set<UInt32>()
        for use in uses[firstUse...] where isCurrent(use) {
            precondition(seen.insert(use.node).inserted, "a node has one current entry")
            precondition(nodeKeys[Int(use.node)] != nil, "a current entry is of a used node")
        }
        precondition(seen.count == index.count, "every key has a current entry")
    }
}
