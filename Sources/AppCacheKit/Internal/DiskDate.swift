import Foundation

/// Dates read from disk (a pack record's cached date, an archive file's modification date, the
/// moments root record files hold), which are untrusted like any byte there.
///
/// A date that is not finite, or falls outside the years 1 to 9999 (proleptic Gregorian, UTC),
/// is damage: no write of the cache makes one, and one taken as a date would trap where it
/// becomes a `Duration` (NaN, infinity and 1e300 seconds do) or make nonsense of an age. The
/// range holds every date a cache writes, and every time to live an app may give, with room.
enum DiskDate {
    /// The first moment of year 1, in seconds since 2001-01-01.
    static let earliest: TimeInterval = -63_113_904_000
    /// The last second of year 9999, in seconds since 2001-01-01.
    static let latest: TimeInterval = 252_423_993_599

    /// Whether `seconds` since 2001-01-01 is a date the cache could have written.
    @inline(__always)
    static func isSane(_ seconds: TimeInterval) -> Bool {
        seconds >= earliest && seconds <= latest
    }

    /// The date `seconds` since 2001-01-01 stands for, or `nil` when it is not sane.
    static func date(sinceReferenceDate seconds: TimeInterval) -> Date? {
        isSane(seconds) ? Date(timeIntervalSinceReferenceDate: seconds) : nil
    }

    /// Whether `milliseconds` since 1970 (a root record file's moment) is a sane date.
    static func isSane(millisecondsSince1970 milliseconds: Int64) -> Bool {
        isSane(Double(milliseconds) / 1000 - Date.timeIntervalBetween1970AndReferenceDate)
    }

    /// Whether `date` is a sane date.
    static func isSane(_ date: Date) -> Bool {
        isSane(date.timeIntervalSinceReferenceDate)
    }
}
