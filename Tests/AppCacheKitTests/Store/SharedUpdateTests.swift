import AppCacheTestSupport
import Foundation
import Testing

@testable import AppCacheKit

/// `updateItems` is atomic across instances and processes sharing a root: each reads the
/// newest archive and writes under the lock file only if nobody replaced it meanwhile.
@Suite struct SharedUpdateTests {
    @Test func twoInstancesAppendingAtOnceKeepEveryItem() async throws {
        let fixture = try Fixture()
        // Write-back caches, as an app and its widget would open: their memory does not see
        // each other's writes until checked against the disk.
        let app = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        let widget = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        let perWriter = 1_000
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (offset, cache) in [app, widget].enumerated() {
                group.addTask {
                    for index in 0..<perWriter {
                        try cache.updateItems(Plain.self, forKey: "log") { $0.append(Plain(value: offset * perWriter + index)) }
                    }
                }
            }
            try await group.waitForAll()
        }
        let reopened = try fixture.openCache()
        let values = try #require(try reopened.getCachedItems(Plain.self, forKey: "log")).map(\.value)
        #expect(values.count == 2 * perWriter, "no append was lost")
        #expect(Set(values) == Set(0..<(2 * perWriter)))
        // Each writer's appends keep their order.
        #expect(values.filter { $0 < perWriter } == Array(0..<perWriter))
        #expect(try app.getCachedItems(Plain.self, forKey: "log")?.count == 2 * perWriter)
        #expect(try widget.getCachedItems(Plain.self, forKey: "log")?.count == 2 * perWriter)
    }

    // Steps in after an archive file's rename: each collection a file of its own.
    /// Another writer's archive is in place but its batch has not yet moved the change count
    /// (it is appending its journal lines): an update must not change this process's older copy
    /// in memory and write it over the new archive.
    @Test func anUpdateNeverChangesAStaleCopyOfANewerArchive() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let app = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try app.cacheItems([Plain(value: 1)], forKey: "log")
        try app.flush()
        #expect(try app.getCachedItems(Plain.self, forKey: "log") == [Plain(value: 1)])  // clean, in memory

        let transformed = TestLock(false)
        let updated = TestLock(false)
        let phase = TestLock(0)  // 1: the archive is in place; 2: the app was started
        // The widget's write: once its archive is renamed into place, while it appends the
        // outcome to the journal (before the change count moves), the app updates.
        let widget = try fixture.openCache(memory: .diskOnly) { operation, path in
            if operation == .rename, path.hasSuffix("Plains+log.archive") { phase.withLock { $0 = max($0, 1) } }
            guard operation == .write, path.hasSuffix("/.index"), phase.withLock({ phase in
                defer { if phase == 1 { phase = 2 } }
                return phase == 1
            }) else { return nil }
            Thread {
                _ = try? app.updateItems(Plain.self, forKey: "log") { items in
                    items.append(Plain(value: 3))
                    transformed.withLock { $0 = true }
                }
                updated.withLock { $0 = true }
            }.start()
            // The app has read and changed its items; it now waits for the lock this batch holds.
            let deadline = Date().addingTimeInterval(30)
            while !transformed.withLock({ $0 }) && Date() < deadline { usleep(1000) }
            return nil
        }
        try widget.cacheItems([Plain(value: 1), Plain(value: 2)], forKey: "log")
        let deadline = Date().addingTimeInterval(30)
        while !updated.withLock({ $0 }) && Date() < deadline { usleep(1000) }

        #expect(updated.withLock { $0 })
        #expect(try fixture.openCache().getCachedItems(Plain.self, forKey: "log")?.map(\.value) == [1, 2, 3], "the widget's item is kept")
    }
}
