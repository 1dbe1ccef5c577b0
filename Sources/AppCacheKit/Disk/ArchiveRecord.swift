import Foundation

/// One collection as the disk layer stores it: encoded payload, header facts and the moment the
/// items were cached.
struct ArchiveRecord: Sendable {
    var payload: Data
    var codec: UInt16
    var schemaVersion: Int64
    /// When the items were cached: the archive file's modification date.
    var cachedDate: Date
    /// After this moment the items must not be returned (unless pinned); `nil` for never.
    var expiry: Date? = nil
    /// Whether the collection ignores its expiry and is the last to go from a full disk.
    var isPinned = false
    /// The staleness threshold of its type when it was written; `nil` when not recorded.
    var stalenessThreshold: Duration? = nil
    /// The memory its items take decoded, estimated; `nil` when not recorded.
    var decodedSize: Int? = nil
    /// The HTTP validators stored with the items; `nil` for none.
    var validators: CacheValidators? = nil
    /// The cursor of the collection's next page; `nil` when it has none (not paged, or the end
    /// reached).
    var nextPageCursor: String? = nil

    /// Whether the items must no longer be returned at `now` (read only when an expiry
    /// applies: most collections have none, and a read of the clock is not free).
    func isExpired(at now: @autoclosure () -> Date) -> Bool {
        guard let expiry, !isPinned else { return false }
        return expiry <= now()
    }
}
