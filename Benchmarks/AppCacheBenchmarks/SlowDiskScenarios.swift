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
        /// `signOut(removingData: true)` of a user with ten collections on disk.
        func signOutWait(slow: Bool) throws -> Measurement {
            let cache = try openCache("sign-out", slow: slow)
            return try Measurement.each(runs: runs, setup: {
                try cache.switchUser(to: "carol")
                try fill(cache)
                try cache.flush()
            }) { _ in
                try cache.signOut(removingData: true)
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
        let onCallersThread = "flush() of the same \(collections) collections on the slow disk (the wait were the work on the caller's thread)"
        let cases: [(String, String, (Bool) throws -> Measurement, Bool)] = [
            ("switchUser away from a user with \(collections) dirty collections", "AppCache.switchUser", switchWait, true),
            ("signOut(removingData: true) of a user with \(collections) collections on disk", "AppCache.signOut(removingData: true)", signOutWait, false),
            ("\(collections) cacheItems past the memory limit, each spilling one (for all ten)", "AppCache.cacheItems, spilling", spillWait, true),
        ]
        for (what, subject, measure, comparesWithFlush) in cases {
            let slow = try measure(true)
            let fast = try measure(false)
            var baselines = [("the same on the disk as it is, no delay", fast)]
            if comparesWithFlush { baselines.append((onCallersThread, flushWait)) }
            report.add(
                "slow-disk: \(what), \(delayText) (the caller's wait)", parameter: collections,
                subject: (subject, slow), baselines: baselines, goal: ("the same on the disk as it is, no delay", 3))
        }
    }
}
