import Foundation

/// One archive a batch writes (``DiskWriter/Batch/write(_:until:)``): the collection's record,
/// whose it is, and where it goes.
///
/// A struct rather than a tuple: arrays of tuples are copied element by element through the
/// runtime's generic tuple copying, which made copies a quarter of a batched flush.
struct ArchiveWrite: Sendable {
    var record: ArchiveRecord
    var key: ArchiveKey
    var path: CachePath

    /// The user directory whose pack the archive goes into, if it is packed.
    var packDirectory: String {
        path.directory ?? CacheLayout.sharedDirectoryName
    }
}
