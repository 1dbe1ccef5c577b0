import Foundation

/// The memory layer: encoded collections with their decoded items, in exact LRU order, within a
/// byte limit and an entry limit.
///
/// Pure bookkeeping with no I/O: it lives inside the cache's lock, and tells the cache which
/// entries to write (spill) rather than writing them itself. An entry evicted while dirty is
/// *detached*: out of the LRU order but still held, and still answering reads, until its archive
/// is in place; if writing it fails it stays detached, and dirty, for the next flush.
///
/// At most one entry exists per archive: storing a collection replaces any entry for the same
/// archive, whatever its model type.
struct MemoryStore {
    /// The most encoded bytes the LRU part may hold.
    var byteLimit: Int
    /// The most entries the LRU part may hold.
    var entryLimit: Int
    /// Whether hits mark their entries for ``takeReadArchives()`` (only a disk budget needs it).
    var tracksReads = false

    private var lru = LRUDictionary<MemoryKey, MemoryEntry>()
    private var detached: [MemoryKey: MemoryEntry] = [:]
    /// Which entry holds each archive.
    private var owners: [ArchiveKey: MemoryKey] = [:]
    private var lruBytes = 0
    private var detachedBytes = 0
    /// The dirty entries still in the LRU order, so a flush visits only them.
    private var lruDirtyKeys: Set<MemoryKey> = []
    private var lastGeneration: UInt64 = 0
    /// The key a hit missed last, while no entry has been stored since: no entry has it (only
    /// ``store(_:for:)`` and ``storeLoaded(_:for:ifUnchangedSince:)`` add keys, and both clear
    /// it). A read that misses looks again before it goes to disk, and this spares that look
    /// its hash (see ``peek(_:)``).
    private var lastMiss: MemoryKey?

    /// Counts every change to what a key could read from disk; a collection loaded from disk
    /// is only kept if nothing changed while it was being read.
    private(set) var mutations: UInt64 = 0
    /// The validation epoch: an entry whose ``MemoryEntry/epoch`` differs must be checked
    /// against its archive before a hit may return it. Moves on (``requireRecheck()``) when
    /// another process or instance is seen to have changed the disk.
    private(set) var epoch: UInt32 = 0
    private(set) var hits = 0
    private(set) var misses = 0
    private(set) var spills = 0
    /// Memory hits of entries that have left (and of detached ones), by key, for
    /// ``CacheStatistics``; the entries in memory count their own (``MemoryEntry/hits``).
    private var retiredHits: [MemoryKey: UInt64] = [:]
    /// Whether evictions are kept in ``evicted`` (someone observes the events).
    var notesEvictions = false
    /// The keys evicted since ``takeEvicted()``, while ``notesEvictions``.
    private var evicted: [MemoryKey] = []

    init(byteLimit: Int, entryLimit: Int, tracksReads: Bool = false) {
        self.byteLimit = byteLimit
        self.entryLimit = entryLimit
        self.tracksReads = tracksReads
        // Room for the first entries a new cache takes in, without rehashing as they arrive.
        let initial = min(entryLimit, Self.initialCapacity)
        owners.reserveCapacity(initial)
        lru.reserveCapacity(initial)
    }

    /// How many entries the layer makes room for at once.
    static let initialCapacity = 256

    /// The entry for `key`, made the most recently used; counts a hit or a miss.
    ///
    /// An entry not checked in the current epoch is not returned (nor counted): the caller
    /// checks it against its archive first (`AppCache.checkedEntry`, by
    /// ``MemoryEntry/agrees(withDisk:epoch:)``).
    ///
    /// - Complexity: O(1) on average.
    @inline(__always)
    mutating func hit(_ key: MemoryKey) -> MemoryHit? {
        hit(key) { MemoryHit($0) }
    }

    /// What `answer` makes of the entry for `key`, read in place, the entry made the most
    /// recently used; counts a hit or a miss as ``hit(_:)`` does.
    @inline(__always)
    mutating func hit<Answer>(_ key: MemoryKey, _ answer: (inout MemoryEntry) -> Answer) -> Answer? {
        let epoch = epoch
        let tracksReads = tracksReads
        var saturated = false
        let found = lru.updatingValue(forKey: key) { entry -> Answer? in
            guard entry.epoch == epoch else { return nil }
            if tracksReads { entry.wasReadSinceRecorded = true }
            if entry.hits == .max {
                saturated = true
                entry.hits = 0
            }
            entry.hits &+= 1
            return answer(&entry)
        }
        switch found {
        case .some(.some(let hit)):
            hits += 1
            if saturated { retiredHits[key, default: 0] += UInt64(UInt32.max) }
            return hit
        case .some(.none):
            return nil
        case .none:
            if var entry = detached[key] {
                guard entry.epoch == epoch else { return nil }
                hits += 1
                retiredHits[key, default: 0] += 1
                return answer(&entry)
            }
            misses += 1
            lastMiss = key
            return nil
        }
    }

    /// Counts a hit the caller served after checking the entry.
    mutating func countHit(_ key: MemoryKey) {
        hits += 1
        retiredHits[key, default: 0] += 1
    }

    /// The memory hits of every collection since the store opened, by key.
    ///
    /// - Complexity: O(n) in the entries and the keys ever hit.
    var hitCounts: [MemoryKey: UInt64] {
        var counts = retiredHits
        for (key, entry) in lru.elementsFromMostRecent where entry.hits > 0 {
            counts[key, default: 0] += UInt64(entry.hits)
        }
        return counts
    }

    /// The keys evicted since the last call (while ``notesEvictions``).
    mutating func takeEvicted() -> [MemoryKey] {
        defer { evicted = [] }
        return evicted
    }

    /// Keeps the hits of an entry that leaves.
    private mutating func retire(_ key: MemoryKey, _ entry: MemoryEntry) {
        if entry.hits > 0 { retiredHits[key, default: 0] += UInt64(entry.hits) }
    }

    /// Starts a new validation epoch: every entry must be checked against its archive before
    /// it is served again.
    mutating func requireRecheck() {
        epoch = (epoch &+ 1) & MemoryEntry.epochMask
    }

    /// Marks the entry for `key` as agreeing with the archive file `identity` in `epoch`,
    /// unless it changed since it was checked (its generation moved on) or the epoch did.
    mutating func markChecked(_ key: MemoryKey, generation: UInt64, epoch: UInt32, identity: FileVersion?) {
        guard epoch == self.epoch else { return }
        let update = { (entry: inout MemoryEntry) in
            guard entry.generation == generation else { return }
            entry.epoch = epoch
            entry.diskIdentity = identity
        }
        if lru.modifyValue(forKey: key, update) == nil, var entry = detached[key] {
            update(&entry)
            detached[key] = entry
        }
    }

    /// The entry for `key`, without touching the order or the counters.
    ///
    /// A key a hit has just missed is answered without hashing it, while nothing has been
    /// stored since: a read that misses looks again before it goes to disk.
    func peek(_ key: MemoryKey) -> MemoryEntry? {
        if let lastMiss, lastMiss == key { return nil }
        return lru.peekValue(forKey: key) ?? detached[key]
    }

    /// The key of the entry holding `archiveKey`, of whatever model type.
    func owner(of archiveKey: ArchiveKey) -> MemoryKey? {
        owners[archiveKey]
    }

    /// Stores `entry` as the most recently used, replacing any entry for the same archive, then
    /// evicts least recently used entries until both limits hold.
    ///
    /// Pass the caller's only copy (`consume`, or `Optional.moveOut()` from inside a closure): the
    /// store numbers the entry in its copy-on-write details, which are then changed in place.
    ///
    /// - Returns: the keys of dirty entries that were evicted and must now be written (spilled).
    /// - Complexity: O(1) on average, plus O(1) per evicted entry.
    mutating func store(_ entry: consuming MemoryEntry, for key: MemoryKey) -> [MemoryKey] {
        typealias Facts = (cost: Int, isDirty: Bool)
        lastMiss = nil
        number(&entry)
        let epoch = epoch
        entry.epoch = epoch
        mutations += 1
        if let owner = owners[entry.archiveKey] {
            // The same collection again, the usual case: the entry changes where it is, with
            // no removal from the tables and insertion again. (An entry in the LRU order is
            // never also detached.)
            if owner == key, let (old, new) = lru.updatingValue(forKey: key, { stored -> (old: Facts, new: Facts) in
                entry.inheritDiskIdentity(from: stored, checkedIn: epoch)
                entry.hits = stored.hits
                swap(&stored, &entry)
                return ((entry.cost, entry.isDirty), (stored.cost, stored.isDirty))
            }) {
                lruBytes += new.cost - old.cost
                if new.isDirty != old.isDirty {
                    if new.isDirty { lruDirtyKeys.insert(key) } else { lruDirtyKeys.remove(key) }
                }
                return evictOverLimits()
            }
            if let replaced = peek(owner) { entry.inheritDiskIdentity(from: replaced, checkedIn: epoch) }
            discard(owner)
        }
        owners[entry.archiveKey] = key
        lru.updateValue(entry, forKey: key)
        lruBytes += entry.cost
        if entry.isDirty { lruDirtyKeys.insert(key) }
        return evictOverLimits()
    }

    /// Stores a collection just read from disk as a clean entry, unless anything changed since
    /// `mutations` was read (the disk may then hold something newer than what was read) or an
    /// entry for the archive exists.
    ///
    /// - Returns: the keys of dirty entries evicted to make room.
    mutating func storeLoaded(_ entry: consuming MemoryEntry, for key: MemoryKey, ifUnchangedSince mutations: UInt64) -> [MemoryKey] {
        guard mutations == self.mutations else { return [] }
        lastMiss = nil
        // One hash of the archive key: claim it, and give it back if it had an owner.
        if let owner = owners.updateValue(key, forKey: entry.archiveKey) {
            owners[entry.archiveKey] = owner
            return []
        }
        number(&entry)
        lru.updateValue(entry, forKey: key)
        lruBytes += entry.cost
        return evictOverLimits()
    }

    /// Removes the entry holding `archiveKey`, dirty or not.
    mutating func remove(_ archiveKey: ArchiveKey) {
        mutations += 1
        if let owner = owners[archiveKey] { discard(owner) }
    }

    /// Removes every entry of the user interned as `user`, dirty or not.
    ///
    /// - Complexity: O(n).
    mutating func removeAll(user: Int) {
        mutations += 1
        for key in allKeys where key.user == user {
            discard(key)
        }
    }

    /// Removes every entry of every user, dirty or not (a newer app version removed the
    /// version directory they belong to).
    ///
    /// - Complexity: O(n).
    mutating func removeEverything() {
        mutations += 1
        for key in allKeys {
            discard(key)
        }
    }

    /// Takes entries out of the LRU order: clean ones are dropped, dirty ones detached.
    ///
    /// - Parameter user: only this user's entries; `nil` for all (a memory warning).
    /// - Returns: the keys of every detached entry of those users, to be written.
    /// - Complexity: O(n).
    mutating func evictAll(user: Int? = nil) -> [MemoryKey] {
        for (key, _) in lru.elementsFromMostRecent where user == nil || key.user == user {
            evict(key)
        }
        return detached.keys.filter { user == nil || $0.user == user }
    }

    /// Takes one entry out of the LRU order: dropped if clean, detached if dirty.
    ///
    /// - Returns: its key if it is now detached and must be written.
    @discardableResult
    mutating func evict(_ key: MemoryKey) -> MemoryKey? {
        guard var entry = lru.removeValue(forKey: key) else { return detached[key] == nil ? nil : key }
        lruBytes -= entry.cost
        retire(key, entry)
        if notesEvictions { evicted.append(key) }
        entry.hits = 0
        guard entry.isDirty else {
            owners[entry.archiveKey] = nil
            return nil
        }
        lruDirtyKeys.remove(key)
        detached[key] = entry
        detachedBytes += entry.cost
        return key
    }

    /// Pins or unpins the entry holding `archiveKey` in memory; the caller rewrites the
    /// archive with the new pin.
    mutating func setPinned(_ pinned: Bool, for archiveKey: ArchiveKey) {
        guard let key = owners[archiveKey] else { return }
        if var entry = detached[key] {
            entry.isPinned = pinned
            detached[key] = entry
            return
        }
        lru.modifyValue(forKey: key) { $0.isPinned = pinned }
    }

    /// Dates the entry holding `archiveKey` as cached at `date`, items unchanged; a clean entry
    /// takes `identity` as its archive file (the file re-dated on disk).
    ///
    /// A dirty entry gets a new generation, so that a write of it already under way (with the
    /// old date) does not mark it clean; its items generation stays, as its items do.
    ///
    /// - Returns: whether memory holds the collection.
    @discardableResult
    mutating func redate(_ archiveKey: ArchiveKey, at date: Date, identity: FileVersion?) -> Bool {
        guard let key = owners[archiveKey] else { return false }
        mutations += 1
        lastGeneration += 1
        let generation = lastGeneration
        func update(_ entry: inout MemoryEntry) {
            entry.redate(at: date)
            if entry.isDirty {
                entry.generation = generation
            } else if let identity {
                entry.diskIdentity = identity
            }
        }
        if var entry = detached[key] {
            update(&entry)
            detached[key] = entry
        } else {
            lru.modifyValue(forKey: key) { update(&$0) }
        }
        return true
    }

    /// The entries of the user interned as `user` (`nil`: every user), for listings.
    ///
    /// - Complexity: O(n).
    func entries(user: Int?) -> [MemoryEntry] {
        (lru.elementsFromMostRecent.map(\.value) + Array(detached.values)).filter { entry in
            user == nil || owners[entry.archiveKey]?.user == user
        }
    }

    /// The archives of the entries read since the last call, least recently used first, so the
    /// disk index can count those reads as uses; the marks are cleared.
    ///
    /// - Complexity: O(n).
    mutating func takeReadArchives() -> [CachePath] {
        var read: [CachePath] = []
        lru.modifyEachFromLeastRecent { _, entry in
            if entry.wasReadSinceRecorded {
                entry.wasReadSinceRecorded = false
                read.append(entry.path)
            }
        }
        return read
    }

    /// The keys of every detached entry (evicted while dirty, not written yet).
    var detachedKeys: [MemoryKey] { Array(detached.keys) }

    /// The detached entries among `keys`, for writing.
    func detachedEntries(_ keys: [MemoryKey]) -> [(key: MemoryKey, entry: MemoryEntry)] {
        keys.compactMap { key in detached[key].map { (key, $0) } }
    }

    /// Every dirty entry, detached or not, for a flush, in the order they were stored (so the
    /// archives are written, and the disk index records them, oldest first).
    ///
    /// - Complexity: O(d log d), d the number of dirty entries.
    func dirtyEntries() -> [(key: MemoryKey, entry: MemoryEntry)] {
        var found: [(key: MemoryKey, entry: MemoryEntry)] = []
        found.reserveCapacity(detached.count + lruDirtyKeys.count)
        for (key, entry) in detached { found.append((key, entry)) }
        for key in lruDirtyKeys {
            if let entry = lru.peekValue(forKey: key) { found.append((key, entry)) }
        }
        // Ordered by sorting the generations with their positions (plain integers, each read
        // once), then moving each entry once: sorting the entries themselves read every
        // generation through its entry's details at each comparison.
        var order = found.withUnsafeBufferPointer { found in
            found.indices.map { (generation: found[$0].entry.generation, position: $0) }
        }
        order.sort { $0.generation < $1.generation }
        return found.withUnsafeBufferPointer { found in order.map { found[$0.position] } }
    }

    /// Records that the archive of `key` now holds generation `generation`, as the file
    /// `identity`: the entry becomes clean if it is still that generation, and leaves memory if
    /// it was detached.
    ///
    /// - Parameter spilled: whether the write was a spill, for the statistics.
    mutating func didWrite(_ key: MemoryKey, generation: UInt64, identity: FileVersion, spilled: Bool) {
        if spilled { spills += 1 }
        // (Detached entries are rare: most writes are spared a hash of the key.)
        if !detached.isEmpty, let entry = detached[key], entry.generation == generation {
            detached[key] = nil
            detachedBytes -= entry.cost
            owners[entry.archiveKey] = nil
            return
        }
        let epoch = epoch
        let freed = lru.modifyValue(forKey: key) { entry -> Int? in
            guard entry.generation == generation else { return nil }
            entry.diskIdentity = identity
            entry.epoch = epoch
            guard entry.isDirty else { return nil }
            return entry.becomeClean()
        }
        if let freed = freed ?? nil {
            lruDirtyKeys.remove(key)
            lruBytes -= freed
        }
    }

    /// Forgets the entry for `key`, dirty or not, if it is still generation `generation`.
    mutating func remove(_ key: MemoryKey, generation: UInt64) {
        guard peek(key)?.generation == generation else { return }
        mutations += 1
        discard(key)
    }

    /// How many entries memory holds (detached ones included).
    var entryCount: Int { lru.count + detached.count }
    /// The bytes the entries held count against the limit.
    var byteCount: Int { lruBytes + detachedBytes }
    /// How many entries wait to be written.
    var dirtyCount: Int { lruDirtyKeys.count + detached.count }

    // MARK: - Private

    private var allKeys: [MemoryKey] {
        lru.elementsFromMostRecent.map(\.key) + Array(detached.keys)
    }

    private mutating func evictOverLimits() -> [MemoryKey] {
        var spill: [MemoryKey] = []
        while lru.count > entryLimit || lruBytes > byteLimit, let (key, _) = lru.leastRecentlyUsed {
            if let detachedKey = evict(key) { spill.append(detachedKey) }
        }
        return spill
    }

    /// Gives `entry`, about to be stored, a generation of its own, for it and for its items.
    private mutating func number(_ entry: inout MemoryEntry) {
        lastGeneration += 1
        entry.generation = lastGeneration
        entry.itemsGeneration = lastGeneration
    }

    /// Forgets the entry for `key` wherever it is, dirty or not.
    private mutating func discard(_ key: MemoryKey) {
        if let entry = lru.removeValue(forKey: key) {
            retire(key, entry)
            lruBytes -= entry.cost
            lruDirtyKeys.remove(key)
            owners[entry.archiveKey] = nil
        }
        if let entry = detached.removeValue(forKey: key) {
            detachedBytes -= entry.cost
            owners[entry.archiveKey] = nil
        }
    }
}

extension MemoryStore {
    /// Checks the bookkeeping against the entries, trapping on the first mismatch. Tests call it.
    ///
    /// - Complexity: O(n).
    func _checkInvariants() {
        lru._checkInvariants()
        let lruEntries = lru.elementsFromMostRecent
        precondition(lruBytes == lruEntries.reduce(0) { $0 + $1.value.cost }, "LRU bytes add up")
        precondition(detachedBytes == detached.values.reduce(0) { $0 + $1.cost }, "detached bytes add up")
        precondition(lruDirtyKeys == Set(lruEntries.filter(\.value.isDirty).map(\.key)), "the dirty set is the dirty entries")
        precondition(detached.values.allSatisfy(\.isDirty), "only dirty entries are detached")
        precondition(Set(lruEntries.map(\.key)).isDisjoint(with: detached.keys), "an entry is in the LRU or detached, not both")
        let all = lruEntries.map { ($0.key, $0.value) } + detached.map { ($0.key, $0.value) }
        precondition(owners.count == all.count, "one owner per entry")
        for (key, entry) in all {
            precondition(owners[entry.archiveKey] == key, "the owner index points at the entry")
        }
        precondition(lru.count <= max(entryLimit, 0) || lru.isEmpty, "the entry limit holds")
    }
}
