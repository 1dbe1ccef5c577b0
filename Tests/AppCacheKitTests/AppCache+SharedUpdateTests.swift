import Foundation
import Testing

@testable import AppCacheKit

/// `updateItems` is atomic across instances and processes sharing a root: each reads the
/// newest archive and writes under the lock file only if nobody replaced it meanwhile.
@Suite struct AppCacheSharedUpdateTests {
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
}
