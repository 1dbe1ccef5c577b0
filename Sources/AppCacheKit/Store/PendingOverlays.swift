/// The items a read showed for a collection with pending changes, kept so that the next read
/// of it is a memory hit again: while neither the collection's confirmed items (the same
/// array, held here so its storage cannot be reused) nor the outbox's queue changed, the items
/// shown are the same.
///
/// A queue is unchanged while its epoch (every change this process makes to it, every kind
/// registered) and the disk's change count (every change another process makes) are the ones
/// the items were computed at. Kept for the current version of the queue only, and for at most
/// ``limit`` collections.
///
/// Thread safety: a value inside the store's state lock.
struct PendingOverlays {
    /// The confirmed items and the items shown for one collection.
    struct Overlay {
        var base: ErasedItems
        var shown: ErasedItems
    }

    /// The queue's epoch and the disk's change count the overlays were computed at.
    private var stamp: (epoch: UInt64, change: UInt64)?
    private var overlays: [MemoryKey: Overlay] = [:]

    /// The most collections kept.
    static let limit = 256

    /// The items to show for `key` when memory's entry still holds `base`'s array and the
    /// queue is still the one the overlay was computed from.
    ///
    /// - Complexity: O(1); one hash look-up.
    func shown(for key: MemoryKey, epoch: UInt64, change: UInt64) -> Overlay? {
        guard let stamp, stamp.epoch == epoch, stamp.change == change else { return nil }
        return overlays[key]
    }

    /// Keeps `shown` for `key`, computed from `base` at the queue's `epoch` and the disk's
    /// change count `change`; overlays of another version of the queue go.
    mutating func keep(_ shown: ErasedItems, base: ErasedItems, for key: MemoryKey, epoch: UInt64, change: UInt64) {
        if stamp?.epoch != epoch || stamp?.change != change || overlays.count >= Self.limit {
            overlays = [:]
            stamp = (epoch, change)
        }
        overlays[key] = Overlay(base: base, shown: shown)
    }
}
