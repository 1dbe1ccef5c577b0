import Foundation

/// How the memory layer finds an entry on the hot path: by model type, key and user, all cheap
/// to hash (the user is interned to a small number, the type is its identity).
struct MemoryKey: Hashable, Sendable {
    var type: ObjectIdentifier
    var key: String?
    var user: Int
}

/// A decoded collection, kept beside its bytes so a memory hit never decodes.
final class ItemsBox<Model: Sendable>: Sendable {
    let items: [Model]

    init(_ items: [Model]) {
        self.items = items
    }
}

/// One collection held in memory: its archive record (encoded payload and cached moment), its
/// decoded items, and whether the archive on disk is behind it.
struct MemoryEntry {
    /// Where the collection lives on disk.
    var archiveKey: ArchiveKey
    /// The bytes and facts an archive would hold; `cachedDate` is the moment the items were
    /// cached, and becomes the archive's modification date when it is written.
    var record: ArchiveRecord
    /// An `ItemsBox` of the model type in the entry's ``MemoryKey``.
    var items: AnyObject
    /// Whether the archive on disk is older than this entry.
    var isDirty: Bool
    /// Bumped by every store, so a write that finishes after a newer store does not mark the
    /// newer one clean.
    var generation: UInt64 = 0

    /// What the entry counts against the memory byte limit: its encoded size.
    var cost: Int { record.payload.count }
}
