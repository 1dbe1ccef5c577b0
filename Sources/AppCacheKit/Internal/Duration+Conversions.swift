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
    static func age(of date: Date, now: Date) -> Duration {
        .seconds(now.timeIntervalSince(date))
    }

    /// Whether items of `self`'s age are stale under `threshold`: older than it, or dated
    /// further in the future than it (a clock set back).
    func isStale(threshold: Duration) -> Bool {
        self > threshold || self < .zero - threshold
    }
}
