@_spi(Benchmarks) import AppCacheKit
import Foundation
import MenuModel

/// Who waits for a slow disk: the calls that used to write or wipe on the caller's thread
/// (`switchUser`, `signOut(removingData:)`, a `cacheItems` past the memory limit), timed as the
/// caller sees them with every file operation delayed, beside the same calls on the disk as it
/// is (the caller's wait must not grow with the disk's) and the synchronous `flush()` of the
/// same data on the slow disk (what the caller would wait were the work on its thread).
extension Scenarios {
    func slowDisk() throws {
        let delay: Duration = quick ? .milliseconds(5) : .milliseconds(20)
        let delayText = "\(delay.nanoseconds / 1e6) ms per file operation"
        let runs = quick ? 3 : 7
        let collections = 10
        let menus = (0..<collections).map { MenuItem.sampleMenu(count: 20, seed: $0) }

        func openCache(_ name: String, slow: Bool, entries: Int = 1000) throws -> AppCache {
            var settings = configuration(root(name))
            settings.writeBackDelay = nil  // written only when memory lets go, or on a flush
            settings.memoryEntryLimit = entries
            settings.simulatedFileOperationDelay = slow ? delay : nil
            return try AppCache(configuration: settings)
        }
        func fill(_ cache: AppCache) throws {
            for (index, menu) in menus.enumerated() { try cache.cacheItems(menu, forKey: "menu-\(index)") }
        }
        /// `switchUser` away from a user with ten dirty collections.
        func switchWait(slow: Bool) throws -> Measurement {
            let cache = try openCache("switch", slow: slow)
            return try Measurement.each(runs: runs, setup: {
                try cache.switchUser(to: "alice")
                try fill(cache)
            }) { _ in
                try cache.switchUser(to: "bob")
            }
        }
        /// `signOut(removingData: true)` of a user with ten collections on disk; with
        /// `waitingForTheDisk`, followed by a `flush()`, which returns once the removal is on disk.
        func signOutWait(slow: Bool, waitingForTheDisk: Bool = false) throws -> Measurement {
            let cache = try openCache("sign-out", slow: slow)
            return try Measurement.each(runs: runs, setup: {
                try cache.switchUser(to: "carol")
                try fill(cache)
                try cache.flush()
            }) { _ in
                try cache.signOut(removingData: true)
                if waitingForTheDisk { try cache.flush() }
            }
        }
        /// Ten `cacheItems` past the memory limit: each pushes a dirty collection out.
        func spillWait(slow: Bool) throws -> Measurement {
            let cache = try openCache("spill", slow: slow, entries: 1)
            defer { try? cache.flush() }
            return try Measurement.each(runs: runs, setup: { try cache.flush() }) { _ in
                try fill(cache)
            }
        }
        let flushing = try openCache("flush", slow: true)
        let flushWait = try Measurement.each(runs: runs, setup: { try fill(flushing) }) { _ in
            try flushing.flush()
        }
        let removalWait = try signOutWait(slow: true, waitingForTheDisk: true)
        let writes = "flush() of the same \(collections) collections on the slow disk (the wait were the work on the caller's thread)"
        let removal = "the same, then flush() until the removal is on disk (the wait were it on the caller's thread)"
        let cases: [(String, String, (Bool) throws -> Measurement, (String, Measurement))] = [
            ("switchUser away from a user with \(collections) dirty collections", "AppCache.switchUser", { try switchWait(slow: $0) },
             (writes, flushWait)),
            ("signOut(removingData: true) of a user with \(collections) collections on disk", "AppCache.signOut(removingData: true)",
             { try signOutWait(slow: $0) }, (removal, removalWait)),
            ("\(collections) cacheItems past the memory limit, each spilling one (for all ten)", "AppCache.cacheItems, spilling",
             { try spillWait(slow: $0) }, (writes, flushWait)),
        ]
        // The goal: the caller waits for none of the disk work, so a small share of what that
        // work takes (its baseline on the disk as it is, in microseconds, is too noisy for a
        // ratio: it is shown for reference).
        for (what, subject, measure, onCallersThread) in cases {
            let slow = try measure(true)
            let fast = try measure(false)
            report.add(
                "slow-disk: \(what), \(delayText) (the caller's wait)", parameter: collections,
                subject: (subject, slow), baselines: [onCallersThread, ("the same on the disk as it is, no delay", fast)],
                goal: (onCallersThread.0, 0.01))
        }
    }
}
