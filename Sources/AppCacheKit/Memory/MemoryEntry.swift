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

/// A decoded collection, kept beside its bytes so a memory hit never decodes.
///
/// `@usableFromInline` so that the inlinable hit path can unwrap it in the caller's module,
/// specialised for the caller's model type.
@usableFromInline
final class ItemsBox<Model: Sendable>: Sendable {
    @usableFromInline let items: [Model]

    init(_ items: [Model]) {
        self.items = items
    }
}

/// What a memory hit hands back: the decoded items (an ``ItemsBox``), their cached moment,
/// and their expiry (`distantFuture` when none applies, also when pinned). Three words, with no
/// optional inside, so that it comes back in registers.
@usableFromInline
struct MemoryHit {
    @usableFromInline var items: AnyObject
    @usableFromInline var cachedDate: Date
    @usableFromInline var expiry: Date

    init(_ entry: borrowing MemoryEntry) {
        items = entry.items
        cachedDate = entry.cachedDate
        expiry = entry.isPinned ? .distantFuture : entry.expiry ?? .distantFuture
    }

    /// Whether an expiry applies at all.
    @usableFromInline var expires: Bool { expiry != .distantFuture }
}

/// One collection held in memory: its decoded items and cached moment (read on every hit, so
/// kept inline and small), whether the archive on disk is behind it, which archive file it
/// matches, and, behind one reference, the archive record and where it belongs on disk.
///
/// A dirty entry keeps its encoded payload until it is written; a clean one does not (the
/// archive holds it): what memory holds of a clean collection is its decoded items alone, and
/// its ``cost`` says so.
struct MemoryEntry {
    /// The facts a hit does not need, out of line so that entries stay small in the LRU.
    private final class Details: Sendable {
        let archiveKey: ArchiveKey
        let path: CachePath
        let record: ArchiveRecord

        init(archiveKey: ArchiveKey, path: CachePath, record: ArchiveRecord) {
            self.archiveKey = archiveKey
            self.path = path
            self.record = record
        }
    }

    /// An `ItemsBox` of the model type in the entry's ``MemoryKey``.
    var items: AnyObject
    /// The moment the items were cached; becomes the archive's modification date when written.
    private(set) var cachedDate: Date
    /// When the items stop being returned, unless pinned; `nil` for never.
    let expiry: Date?
    /// Whether the collection is pinned; changes without a new store.
    var isPinned: Bool
    /// Whether the archive on disk is older than this entry.
    var isDirty: Bool
    /// Bumped by every store, so a write that finishes after a newer store does not mark the
    /// newer one clean.
    var generation: UInt64 = 0
    /// Whether a read was served from this entry since the disk index last heard of it.
    var wasReadSinceRecorded = false
    /// The memory layer's validation epoch when this entry was last known to agree with the
    /// disk (see ``MemoryStore/epoch``); a hit needs it to be the current one.
    var epoch: UInt32 = 0
    /// The archive file this entry was read from or last written to; `nil` when none is known.
    /// Another process replacing the archive changes the file's identity.
    var diskIdentity: FileIdentity?
    /// What the entry counts against the memory byte limit: the estimated memory of its
    /// decoded items, plus its encoded payload while it keeps one (while dirty).
    private(set) var cost: Int
    /// The size of its encoded payload.
    let encodedSize: Int
    private var details: Details

    init(archiveKey: ArchiveKey, path: CachePath, record: ArchiveRecord, items: AnyObject, isDirty: Bool, diskIdentity: FileIdentity? = nil) {
        self.items = items
        cachedDate = record.cachedDate
        expiry = record.expiry
        isPinned = record.isPinned
        self.isDirty = isDirty
        self.diskIdentity = diskIdentity
        encodedSize = record.payload.count
        var kept = record
        if !isDirty { kept.payload = Data() }
        let decoded = record.decodedSize ?? 4 * record.payload.count
        cost = decoded + kept.payload.count
        details = Details(archiveKey: archiveKey, path: path, record: kept)
    }

    /// Whether it still holds its encoded payload (a dirty entry always does).
    var hasPayload: Bool { !details.record.payload.isEmpty || encodedSize == 0 }

    /// Marks the entry clean, dropping its payload (the archive now holds it).
    ///
    /// - Returns: by how much its cost fell.
    mutating func becomeClean() -> Int {
        isDirty = false
        guard !details.record.payload.isEmpty else { return 0 }
        var record = details.record
        let freed = record.payload.count
        record.payload = Data()
        details = Details(archiveKey: details.archiveKey, path: details.path, record: record)
        cost -= freed
        return freed
    }

    /// Dates the items as cached at `date` without changing them (the server said they are
    /// current); a dirty entry's archive will carry the new date when written.
    mutating func restamp(at date: Date) {
        cachedDate = date
        var record = details.record
        record.cachedDate = date
        details = Details(archiveKey: details.archiveKey, path: details.path, record: record)
    }

    /// Which collection it is.
    var archiveKey: ArchiveKey { details.archiveKey }
    /// Where its archive lives on disk.
    var path: CachePath { details.path }
    /// The bytes and facts an archive would hold, with the current pin (no bytes once clean:
    /// see ``hasPayload``).
    var record: ArchiveRecord {
        var record = details.record
        record.isPinned = isPinned
        return record
    }
}
