import Foundation
import Testing

@testable import AppCacheKit

/// Two `AppCache` instances on one root with the same store settings, in one process, are one
/// cache in effect: they share the store, the outbox and the query client, so what one
/// accepted (a write, a switch of user, a removal) the other reads at once, from the same
/// memory; instances whose store settings differ keep services of their own.
struct SharedServicesTests {
    static let notes = [Note.make(1), Note.make(2)]

    @Test func instancesWithTheSameStoreSettingsShareOneStoreAndOthersKeepTheirOwn() throws {
        let fixture = try Fixture()
        let first = try fixture.openCache(memory: .layer(), sharing: true)
        let second = try fixture.openCache(memory: .layer(), sharing: true)
        #expect(first.store === second.store && first.outbox === second.outbox && first.queries === second.queries)
        let otherLimits = try fixture.openCache(memory: .layer(bytes: 1 << 20), sharing: true)
        #expect(otherLimits.store !== first.store, "memory limits differ: a store of its own")
        let otherUser = try fixture.openCache(user: "bob", memory: .layer(), sharing: true)
        #expect(otherUser.store !== first.store, "another user to open with: a store of its own")
    }

    @Test func aWriteByOneIsReadByTheOtherFromTheSameMemoryBeforeItReachesTheDisk() throws {
        let fixture = try Fixture()
        let writer = try fixture.openCache(memory: .layer(), sharing: true)
        let reader = try fixture.openCache(memory: .layer(), sharing: true)
        try writer.cacheItems(Self.notes, forKey: "top")
        #expect(!fixture.hasArchive(Note.self, key: "top"), "written back only on a flush")
        #expect(try reader.getCachedItems(Note.self, forKey: "top") == Self.notes)
        #expect(reader.memoryStatistics.hits >= 1, "a memory hit, not a read of the disk")
    }

    /// The switched-away user's dirty collections wait for the write-back thread; meanwhile
    /// the other instance (now on the same new user) still finds them for that user's session.
    @Test func aSwitchAwayIsSeenAtOnceAndTheLeftUsersCollectionsStayReadableWhileTheirSpillWaits() throws {
        let fixture = try Fixture()
        let first = try fixture.openCache(memory: .layer(), sharing: true)
        let second = try fixture.openCache(memory: .layer(), sharing: true)
        try first.cacheItems(Self.notes, forKey: "top")
        let alice = second.session
        // Hold the write-back thread: the spill of alice's collection cannot start.
        let held = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        first.store.writeBack.queue.async {
            holding.signal()
            held.wait()
        }
        holding.wait()
        defer { held.signal() }
        try first.switchUser(to: "bob")
        #expect(second.user == "bob", "one current user")
        #expect(!fixture.hasArchive(Note.self, key: "top", user: "alice"), "the spill waits")
        #expect(try second.getCachedItems(Note.self, forKey: "top") == nil, "bob has none")
        let read = try second.updateItems(Note.self, forKey: "top", for: alice) { $0.append(Note.make(3)) }
        #expect(read == Self.notes + [Note.make(3)], "alice's items, found in memory while their spill waits")
    }

    @Test func aRemovalByOneIsSeenByTheOtherAtOnce() throws {
        let fixture = try Fixture()
        let first = try fixture.openCache(memory: .layer(), sharing: true)
        let second = try fixture.openCache(memory: .layer(), sharing: true)
        try first.cacheItems(Self.notes, forKey: "top")
        #expect(try second.getCachedItems(Note.self, forKey: "top") == Self.notes)
        try first.removeAllUsers()
        #expect(try second.getCachedItems(Note.self, forKey: "top") == nil)
        #expect(try second.entries().isEmpty)
    }

    // Looks at archive files: each collection a file of its own.
    @Test func everyInstancesDiagnosticsHearsTheStoresProblems() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let other = DiagnosticsRecorder()
        let first = try AppCache(configuration: fixture.configuration(sharing: true))
        var configuration = fixture.configuration(sharing: true)
        configuration.diagnostics = { other.record($0) }
        let second = try AppCache(configuration: configuration)
        #expect(first.store === second.store, "diagnostics are not a store setting")
        let path = fixture.archivePath(Note.self, key: "top")
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data("not an archive".utf8).write(to: URL(filePath: path))
        #expect(try first.getCachedItems(Note.self, forKey: "top") == nil)
        #expect(fixture.diagnostics.codes == [.corruptArchive])
        #expect(other.codes == [.corruptArchive], "told to the other instance's hook too")
        withExtendedLifetime(second) {}
    }

    @Test func servicesGoWithTheirLastInstance() throws {
        let fixture = try Fixture()
        weak var services: CacheServices?
        do {
            let first = try fixture.openCache(memory: .layer(), sharing: true)
            services = first.services
            try first.cacheItems(Self.notes, forKey: "top")
            do {
                let second = try fixture.openCache(memory: .layer(), sharing: true)
                #expect(second.services === services)
            }
            #expect(services != nil, "the first instance still holds them")
            withExtendedLifetime(first) {}
        }
        #expect(services == nil)
        let reopened = try fixture.openCache(memory: .layer(), sharing: true)
        #expect(reopened.memoryStatistics.entries == 0, "new services, new memory")
        #expect(try reopened.getCachedItems(Note.self, forKey: "top") == Self.notes, "the last instance flushed on its way out")
    }
}
