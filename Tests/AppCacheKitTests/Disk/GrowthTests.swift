import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

/// Work that changes nothing keeps nothing: a read-only workload holds no more memory after
/// 100,000 reads than after a few. (Resident memory itself is measured by the torture program,
/// alone in its process: tests run side by side here and share one.)
struct GrowthTests {
    /// Disk reads are uses for the disk budget, noted for the journal; the notes are bounded,
    /// written out in batches of their own, and not kept at all without a budget.
    @Test(arguments: [false, true])
    func readsFromDiskKeepBoundedBookkeeping(budget: Bool) throws {
        let fixture = try Fixture()
        var configuration = fixture.configuration()  // no memory layer: every read goes to disk
        if budget { configuration.diskByteLimit = 1 << 30 }
        let cache = try AppCache(configuration: configuration)
        for key in 0..<64 { try cache.cacheItems([Plain(value: key)], forKey: "k\(key)") }
        var largest = 0
        for read in 0..<20_000 {
            _ = try cache.getCachedItems(Plain.self, forKey: "k\(read % 64)")
            largest = max(largest, cache.store.disk.pendingUseCount)
        }
        cache.store.writeBack.queue.sync {}
        #expect(largest <= (budget ? DiskWriter.pendingUsesCap : 0))
        #expect(cache.memoryStatistics.entries == 0)
    }
}
