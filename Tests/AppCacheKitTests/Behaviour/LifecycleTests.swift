import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

/// What the lifecycle observers rely on: a flush before suspension that the system may cut
/// short, and the platform-independent defaults.
struct LifecycleTests {
    /// When the system says time is up, the flush stops between two archives: those written are
    /// whole, the rest stay dirty in memory and reach disk with the next flush.
    @Test func aFlushCutShortLeavesTheRestDirtyForTheNextFlush() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        for index in 0..<5 {
            try cache.cacheItems(MenuItem.sampleMenu(count: 2, seed: index), forKey: "k\(index)")
            fixture.clock.advance(by: .seconds(1))
        }
        let asked = Locked(0)
        let failures = cache.store.writeDirtyEntries(until: { asked.withLock { $0 += 1; return $0 > 2 } })
        #expect(failures.isEmpty)
        #expect(cache.memoryStatistics.dirtyEntries == 3)
        // Oldest first: the first two cached are the two written.
        #expect((0..<5).map { fixture.hasArchive(MenuItem.self, key: "k\($0)") } == [true, true, false, false, false])
        try cache.flush()
        #expect(cache.memoryStatistics.dirtyEntries == 0)
        let reopened = try fixture.openCache()
        for index in 0..<5 {
            #expect(try reopened.getCachedItems(MenuItem.self, forKey: "k\(index)") == MenuItem.sampleMenu(count: 2, seed: index))
        }
    }

    /// `flushBeforeSuspension` flushes on the write-back thread (inside a background activity
    /// where the platform has them: see `SuspensionTests`).
    @Test func flushBeforeSuspensionWritesEverythingDirty() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try cache.cacheItems(MenuItem.sampleMenu(count: 2))
        cache.flushBeforeSuspension(thenClose: false)
        cache.store.waitForBackgroundWork()
        #expect(fixture.hasArchive(MenuItem.self))
        #expect(cache.memoryStatistics.dirtyEntries == 0)
        #expect(!cache.store.disk.gate.isClosed, "an app that goes to the background may go on writing until the system says time is up")
    }

    @Test func filesAreProtectedUntilFirstUnlockByDefault() {
        let configuration = AppCache.Configuration(schemaVersion: "1")
        #expect(configuration.fileProtection?.rawValue == FileProtectionType.completeUntilFirstUserAuthentication.rawValue)
        #expect(FileProtection(configuration.fileProtection)?.protectionClass == 3)
        #expect(FileProtection(.complete)?.protectionClass == 1)
        #expect(FileProtection(nil) == nil)
    }
}
