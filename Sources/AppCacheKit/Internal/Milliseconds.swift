import Foundation

/// The cache's conversions of dates and durations to whole milliseconds, one per rounding, each
/// named for what it is used for so that the choice shows where it is made. None traps,
/// whatever the value (see ``Swift/Int64/init(clampingRounded:_:)``).
enum Milliseconds {
    /// A moment the cache records (an invalidation, a change enqueued, the start of a fetch),
    /// in milliseconds since 1970, rounded down: the millisecond a moment falls in, so that a
    /// write in the same millisecond as a recorded moment compares as not after it.
    static func moment(_ date: Date) -> Int64 {
        Int64(clampingRounded: date.timeIntervalSince1970 * 1000, .down)
    }

    /// A date that names an archive (the cached date a record of a model mismatch pins), in
    /// milliseconds since 1970, to the nearest: the same date read back from a pack record or a
    /// file's modification date gives the same number.
    static func nearest(_ date: Date) -> Int64 {
        Int64(clampingRounded: date.timeIntervalSince1970 * 1000, .toNearestOrAwayFromZero)
    }

    /// A limit written into an archive header (an expiry, a staleness threshold), in
    /// milliseconds, rounded up so that it never ends earlier than asked, and kept one inside
    /// `Int64`'s range, whose ends the header reserves.
    static func limit(seconds: Double) -> Int64 {
        let milliseconds = (seconds * 1000).rounded(.up)
        guard milliseconds.isFinite else { return milliseconds > 0 ? Int64.max - 1 : Int64.min + 1 }
        return milliseconds >= Double(Int64.max) ? Int64.max - 1 : Int64(max(milliseconds, Double(Int64.min + 1)))
    }
}
