import AppCacheKit
import Foundation

/// What the app's `BGAppRefreshTask` handler does, as a launch of its own: the system wakes the
/// app in the background with nothing loaded yet, and gives it a few seconds. One call
/// refetches the stale feeds the reader used recently (the cache recorded those uses in earlier
/// runs, for the types with a registered fetch), sends queued changes, flushes and trims
/// memory, and returns before the deadline with what it did.
enum BackgroundRefresh {
    static func run(cache: AppCache, deadline: Duration) async {
        print("[background] the system gave the app \(deadline.wholeMilliseconds) ms (a BGAppRefreshTask)")
        let started = ContinuousClock.Instant.now
        let due = started + deadline
        let report = await cache.refreshInBackground(until: due)
        let returned = ContinuousClock.Instant.now
        func list(_ collections: [BackgroundRefreshReport.Collection]) -> String {
            collections.isEmpty ? "" : ": " + collections.map(\.description).joined(separator: ", ")
        }
        print("[background] refreshed \(report.refreshed.count)\(list(report.refreshed))")
        print("[background] not modified \(report.notModified.count)\(list(report.notModified))")
        for failure in report.failed { print("[background] failed \(failure.collection): \(failure.error)") }
        print("[background] cancelled at the deadline \(report.cancelled.count)\(list(report.cancelled)), skipped \(report.skipped.count)")
        print("[background] changes sent \(report.sentMutations), still queued \(report.pendingMutations)")
        print("[background] flushed: \(report.isFlushed ? "yes" : "no"), \(report.trimmedEntries) collection(s) left memory")
        print("[background] returned after \((returned - started).wholeMilliseconds) ms, \(returned < due ? "before" : "AFTER") the deadline; everything done: \(report.finishedInTime ? "yes" : "no")")
    }
}

extension Duration {
    /// Whole milliseconds.
    var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
