import Dispatch
import Foundation

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// When a `DispatchTime` deadline this long from now falls; `distantFuture` when it
    /// overflows, and never in the past.
    var dispatchDeadline: DispatchTime {
        let (seconds, attoseconds) = components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow else { return .distantFuture }
        let total = nanoseconds.partialValue.addingReportingOverflow(attoseconds / 1_000_000_000)
        guard !total.overflow else { return .distantFuture }
        return .now() + .nanoseconds(Int(clamping: max(total.partialValue, 0)))
    }

    /// How long ago `date` was at `now` (negative for a date in the future).
    ///
    /// Never traps: dates from disk are checked where they are read (``DiskDate``), and an
    /// interval that is not finite or past what a `Duration` holds is clamped to a thousand
    /// years either way, which every staleness check calls stale.
    static func age(of date: Date, now: Date) -> Duration {
        let seconds = now.timeIntervalSince(date)
        let bound = 1000 * 365.25 * 86400
        guard seconds.magnitude <= bound else { return .seconds(seconds < 0 ? -bound : bound) }
        return .seconds(seconds)
    }

    /// Whether items of `self`'s age are stale under `threshold`: older than it, or dated
    /// further in the future than it (a clock set back).
    func isStale(threshold: Duration) -> Bool {
        self > threshold || self < .zero - threshold
    }
}

extension Int64 {
    /// `value` rounded by `rule`, clamped to the values an `Int64` holds (not-a-number is 0):
    /// a conversion of a date or a duration that never traps, whatever the date.
    init(clampingRounded value: Double, _ rule: FloatingPointRoundingRule) {
        let rounded = value.rounded(rule)
        if rounded.isNaN {
            self = 0
        } else if let exact = Int64(exactly: rounded) {
            self = exact
        } else {
            // Past 2^63 either way (the one double in range that is not exact is 2^63 itself).
            self = rounded < 0 ? .min : .max
        }
    }
}
