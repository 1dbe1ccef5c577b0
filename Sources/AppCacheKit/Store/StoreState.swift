import Foundation

/// What the store's one lock guards: the memory layer, the user sessions, the disk change count
/// memory agrees with, the counters of updates under way, the digest of the outbox's pending
/// changes, and what the store knows of removals, version removal and model types.
///
/// Thread safety: only inside ``CollectionStore/state``'s lock; nothing in it does I/O.
struct StoreState {
    /// The current user and the sessions bound to users.
    var sessions: UserTable
    var memory: MemoryStore
    /// What the store knows of each model type used (the first without hashing).
    var types = FirstInlineDictionary<ObjectIdentifier, CollectionStore.TypeInfo>()
    /// Whether anyone reads the events (``CacheEventHub/isObserved``), kept here by the hub so
    /// that a memory hit, already holding this lock, asks nothing more.
    var eventsObserved = false
    /// The types whose collections the binary codec left to JSON, told to `diagnostics`.
    var typesStoredAsJSON: Set<ObjectIdentifier> = []
    /// The type looked up last: reads of one type in a row find it without hashing.
    var lastType: (id: ObjectIdentifier, info: CollectionStore.TypeInfo)?
    /// The invalidations as read when the disk's change count was `invalidationsChange`.
    var invalidations = InvalidationLog()
    var invalidationsChange: UInt64?
    /// Set once another app schema version removed this one's directory: every write throws
    /// it from then on (see ``CollectionStore/noteVersionRemoved(_:)``).
    var versionRemoval: AppCacheError?
    var versionRemovalReported = false
    /// Removals whose archives are still to leave the disk.
    var dueWipes = DueWipes()
    /// Trash directories a batch's wipes made, deleted when it ends.
    var trashesToDelete: [String] = []
    /// The signed-in user still to be recorded in the root for following extensions
    /// (`.some(nil)`: signed out); `nil` when nothing is to be recorded.
    var signedInUserDue: String??
    /// The coordinator's change count when memory was last known to agree with the disk.
    var syncedChange: UInt64
    /// Which model types the outbox may hold pending changes for, pushed by the ``Outbox``: a
    /// memory hit of a type it may touch takes the slow path, which applies them.
    var pending = PendingDigest()
    /// What reads last showed of collections with pending changes applied.
    var overlays = PendingOverlays()
    /// The collections an `updateItems` is working on: how many updates, and how many
    /// writes each has had since (an update stores its result only if none came between).
    var updateCounters: [MemoryKey: (writes: UInt64, updaters: Int)] = [:]
    /// Which collections hold which item ids, for the types writes by id used.
    var itemIndex = ItemIndex()

    /// Starts following writes of `key` for an update; returns the count to compare with.
    mutating func beginUpdate(_ key: MemoryKey) -> UInt64 {
        updateCounters[key, default: (0, 0)].updaters += 1
        return updateCounters[key]!.writes
    }

    /// Stops following writes of `key` for one update.
    mutating func endUpdate(_ key: MemoryKey) {
        guard let counters = updateCounters[key] else { return }
        if counters.updaters <= 1 { updateCounters[key] = nil } else { updateCounters[key]!.updaters -= 1 }
    }

    /// Counts a write of `key` for the updates working on it.
    mutating func noteWrite(_ key: MemoryKey) {
        if !updateCounters.isEmpty, updateCounters[key] != nil { updateCounters[key]!.writes &+= 1 }
    }

    /// The current user; `nil` for the shared space.
    var user: String? { sessions.user }
    /// The current user's number in memory keys.
    var userSlot: Int { sessions.slot }
    /// The current user, as a session for writes bound to them.
    var session: CacheSession { sessions.current }

    /// The root's shared record of removals (``PendingRemovals``), once the disk is open.
    var removals: PendingRemovals?
    /// How many removals of the shared record memory has taken into account.
    var seenRemovals: UInt64 = 0
    /// The numbers of this cache's own removals in the shared record (it dropped their
    /// users' entries itself, and what it holds of them since is newer).
    var ownRemovals: Set<UInt64> = []

    /// Takes note of the coordinator's change count: a count someone else moved on means
    /// every entry must be checked against its archive before it is served again, and the
    /// entries of users another process removed go, dirty ones too.
    mutating func syncWithDisk(change: UInt64) {
        guard change != syncedChange else { return }
        memory.requireRecheck()
        syncedChange = change
        forgetRemovedUsers()
    }

    /// Drops what memory holds of users whose data another process removed since this cache
    /// last looked: dirty entries written back after the removal would bring removed data
    /// back. Removals it can no longer tell apart (more than the shared record holds) drop
    /// every user's.
    private mutating func forgetRemovedUsers() {
        guard let removals else { return }
        let recorded = removals.recordedCount
        guard recorded != seenRemovals else { return }
        defer {
            seenRemovals = recorded
            ownRemovals = ownRemovals.filter { $0 >= recorded }
        }
        guard let entries = removals.recorded(since: seenRemovals) else {
            memory.removeEverything()
            return
        }
        var hashes: Set<UInt64> = []
        for (number, entry) in zip(seenRemovals..., entries) where !ownRemovals.contains(number) {
            switch entry {
            case .directory(let hash): hashes.insert(hash)
            case .allUsers, .unknown:
                memory.removeEverything()
                return
            }
        }
        guard !hashes.isEmpty else { return }
        for user in sessions.knownUsers where hashes.contains(PendingRemovals.hash(of: CacheLayout.userDirectoryName(user))) {
            if let slot = sessions.slot(of: user) { memory.removeAll(user: slot) }
        }
    }
}
