public import Foundation

/// How the memory layer finds an entry on the hot path: by model type, key and user, all cheap
/// to hash (the user is interned to a small number, the type is its identity).
struct MemoryKey: Hashable, Sendable {
    var type: ObjectIdentifier
    var key: String?
    var user: Int

    /// Type and user go in as one word: this hash runs on every memory hit.
    func hash(into hasher: inout Hasher) {
        hasher.combine(UInt(bitPattern: type) &+ UInt(bitPattern: user) &* 0x9E37_79B9_7F4A_7C15)
        if let key {
            hasher.combine(key)
        } else {
            hasher.combine(UInt8(0))
        }
    }
}

/// What a memory hit hands back: the decoded items, their cached moment, and their expiry
/// (`distantFuture` when none applies, also when pinned). Three words, with no optional
/// inside, so that it comes back in registers.
@usableFromInline
struct MemoryHit {
    @usableFromInline var items: ErasedItems
    @usableFromInline var cachedDate: Date
    @usableFromInline var expiry: Date

    init(_ entry: borrowing MemoryEntry) {
        items = entry.items
        cachedDate = entry.cachedDate
        expiry = entry.hitExpiry
    }

    /// The hit of `entry` showing `items` instead of its own (its pending changes applied).
    init(_ entry: borrowing MemoryEntry, showing items: ErasedItems) {
        self.items = items
        cachedDate = entry.cachedDate
        expiry = entry.hitExpiry
    }

    /// Whether an expiry applies at all.
    @usableFromInline var expires: Bool { expiry != .distantFuture }
}

/// One collection held in memory: what a hit reads (its decoded items, cached moment, expiry
/// as a hit sees it, and validation epoch) inline in 36 bytes, since a hit finds the entry in
/// the hash table's bucket and every byte there is memory a random hit brings in; everything
/// else (the pin, whether the archive on disk is behind it, which archive file it matches, its
/// generation and cost, the archive record and where it belongs on disk) behind one
/// copy-on-write reference.
///
/// A dirty entry keeps its encoded payload until it is written; a clean one does not (the
/// archive holds it): what memory holds of a clean collection is its decoded items alone, and
/// its ``cost`` says so.
struct MemoryEntry {
    /// The facts a hit does not need, out of line so that entries stay small in the table.
    ///
    /// Copy-on-write: changed in place only while uniquely referenced (see
    /// ``MemoryEntry/details``), so a copy of the entry taken out of the cache's lock never
    /// sees a change made inside it.
    private final class Details: @unchecked Sendable {
        let archiveKey: ArchiveKey
        let path: CachePath
        var record: ArchiveRecord
        var isDirty: Bool
        var isPinned: Bool
        var generation: UInt64 = 0
        var itemsGeneration: UInt64 = 0
        var diskIdentity: FileVersion?
        var cost: Int
        let encodedSize: Int

        init(
            archiveKey: ArchiveKey, path: CachePath, record: ArchiveRecord, isDirty: Bool, isPinned: Bool,
            diskIdentity: FileVersion?, cost: Int, encodedSize: Int
        ) {
            self.archiveKey = archiveKey
            self.path = path
            self.record = record
            self.isDirty = isDirty
            self.isPinned = isPinned
            self.diskIdentity = diskIdentity
            self.cost = cost
            self.encodedSize = encodedSize
        }

        func copy() -> Details {
            let copy = Details(
                archiveKey: archiveKey, path: path, record: record, isDirty: isDirty, isPinned: isPinned,
                diskIdentity: diskIdentity, cost: cost, encodedSize: encodedSize)
            copy.generation = generation
            copy.itemsGeneration = itemsGeneration
            return copy
        }
    }

    /// The decoded items, of the model type in the entry's ``MemoryKey``.
    var items: ErasedItems
    /// The moment the items were cached; becomes the archive's modification date when written.
    private(set) var cachedDate: Date
    /// When a hit stops returning the items: the expiry unless pinned, `distantFuture` when
    /// none applies.
    private(set) var hitExpiry: Date
    private var storedDetails: Details
    /// The validation epoch in the low 31 bits, whether a read was served in the top one.
    private var epochAndReadMark: UInt32 = 0
    /// Reads served from this entry (``CacheStatistics``); in the padding after the epoch, so
    /// an entry takes no more memory for it.
    var hits: UInt32 = 0

    /// - Parameter encodedSize: the size of the items' payload when `record` does not hold it
    ///   (a clean collection read from its archive); `nil`: the record's payload's.
    init(
        archiveKey: ArchiveKey, path: CachePath, record: consuming ArchiveRecord, items: ErasedItems, isDirty: Bool,
        diskIdentity: FileVersion? = nil, encodedSize: Int? = nil
    ) {
        self.items = items
        cachedDate = record.cachedDate
        hitExpiry = record.isPinned ? .distantFuture : record.expiry ?? .distantFuture
        let encodedSize = encodedSize ?? record.payload.count
        let decoded = record.decodedSize ?? 4 * encodedSize
        if !isDirty { record.payload = Data() }
        storedDetails = Details(
            archiveKey: archiveKey, path: path, record: record, isDirty: isDirty, isPinned: record.isPinned,
            diskIdentity: diskIdentity, cost: decoded + (isDirty ? encodedSize : 0), encodedSize: encodedSize)
    }

    /// The largest validation epoch an entry holds; epochs wrap past it.
    static let epochMask: UInt32 = 0x7FFF_FFFF

    /// The memory layer's validation epoch when this entry was last known to agree with the
    /// disk (see ``MemoryStore/epoch``); a hit needs it to be the current one.
    var epoch: UInt32 {
        get { epochAndReadMark & Self.epochMask }
        set { epochAndReadMark = (epochAndReadMark & ~Self.epochMask) | (newValue & Self.epochMask) }
    }
    /// The memory/disk coherence rule, the one place it is stated: whether this entry may be
    /// served (or written) when the disk holds `onDisk` at its path (`nil`: no archive) and the
    /// memory layer's epoch is `epoch`.
    ///
    /// An entry checked in the current epoch agrees: nobody changed the disk since. Otherwise a
    /// clean entry agrees only with the very file it was read from or written to; a dirty one
    /// (memory's newer items, not yet written) stands unless the disk holds items cached later,
    /// by another process or instance. An entry that does not agree must leave memory unwritten.
    func agrees(withDisk onDisk: FileFacts?, epoch: UInt32) -> Bool {
        if self.epoch == epoch || onDisk?.identity == diskIdentity { return true }
        guard isDirty else { return false }
        return onDisk.map { $0.modificationDate <= cachedDate } ?? true
    }

    /// Whether a read was served from this entry since the disk index last heard of it.
    var wasReadSinceRecorded: Bool {
        get { epochAndReadMark & ~Self.epochMask != 0 }
        set { epochAndReadMark = newValue ? epochAndReadMark | ~Self.epochMask : epochAndReadMark & Self.epochMask }
    }
    /// When the items stop being returned, unless pinned; `nil` for never.
    var expiry: Date? { storedDetails.record.expiry }
    /// Whether the collection is pinned; changes without a new store.
    var isPinned: Bool {
        get { storedDetails.isPinned }
        set {
            details.isPinned = newValue
            hitExpiry = newValue ? .distantFuture : expiry ?? .distantFuture
        }
    }
    /// Whether the archive on disk is older than this entry.
    var isDirty: Bool { storedDetails.isDirty }
    /// Bumped by every store, so a write that finishes after a newer store does not mark the
    /// newer one clean.
    var generation: UInt64 {
        get { storedDetails.generation }
        set { details.generation = newValue }
    }
    /// The generation of the store that put these items in memory: a re-date (``redate(at:)``)
    /// gives the entry a new ``generation`` but keeps this, so that observers see the same
    /// items as the same.
    var itemsGeneration: UInt64 {
        get { storedDetails.itemsGeneration }
        set { details.itemsGeneration = newValue }
    }
    /// The archive file this entry was read from or last written to; `nil` when none is known.
    /// Another process replacing the archive changes the file's identity.
    var diskIdentity: FileVersion? {
        get { storedDetails.diskIdentity }
        set { details.diskIdentity = newValue }
    }
    /// What the entry counts against the memory byte limit: the estimated memory of its
    /// decoded items, plus its encoded payload while it keeps one (while dirty).
    var cost: Int { storedDetails.cost }
    /// The size of its encoded payload.
    var encodedSize: Int { storedDetails.encodedSize }

    /// Whether it still holds its encoded payload (a dirty entry always does).
    var hasPayload: Bool { !storedDetails.record.payload.isEmpty || storedDetails.encodedSize == 0 }

    /// Marks the entry clean, dropping its payload (the archive now holds it).
    ///
    /// - Returns: by how much its cost fell.
    mutating func becomeClean() -> Int {
        let details = details
        details.isDirty = false
        let freed = details.record.payload.count
        details.record.payload = Data()
        details.cost -= freed
        return freed
    }

    /// Takes the archive file `replaced` knew as this entry's, when this one knows none and
    /// `replaced` agreed with the disk in the current `epoch`: this entry is about to replace
    /// it, and the archive on disk is still that file.
    mutating func inheritDiskIdentity(from replaced: borrowing MemoryEntry, checkedIn epoch: UInt32) {
        if diskIdentity == nil, replaced.epoch == epoch { diskIdentity = replaced.diskIdentity }
    }

    /// Dates the items as cached at `date` without changing them (the server said they are
    /// current); a dirty entry's archive will carry the new date when written.
    mutating func redate(at date: Date) {
        cachedDate = date
        details.record.cachedDate = date
    }

    /// Which collection it is.
    var archiveKey: ArchiveKey { storedDetails.archiveKey }
    /// Where its archive lives on disk.
    var path: CachePath { storedDetails.path }
    /// The bytes and facts an archive would hold, with the current pin (no bytes once clean:
    /// see ``hasPayload``).
    var record: ArchiveRecord {
        var record = storedDetails.record
        record.isPinned = isPinned
        return record
    }

    /// The details, ready to change: copied first unless this entry alone holds them.
    private var details: Details {
        mutating get {
            if !isKnownUniquelyReferenced(&storedDetails) { storedDetails = storedDetails.copy() }
            return storedDetails
        }
    }
}
