import Foundation
import MenuModel
import Testing

@testable import AppCacheKit

/// A pack's checkpoint (`.pack-checkpoint`, ``PackCheckpoint``): the first read after launch
/// finds a collection through it without reading the pack's records before it, answers exactly
/// what reading the whole pack would (the records written after it included), and a checkpoint
/// that is damaged, another pack's or outdated costs speed, never an answer.
struct PackCheckpointTests {
    /// Enough one-item collections to write several checkpoints' worth of records.
    static let count = 2_200

    private func item(_ index: Int, version: Int = 0) -> [MenuItem] {
        var items = MenuItem.sampleMenu(count: 1, seed: index)
        items[0].reviewCount = version
        return items
    }

    private func checkpointPath(_ fixture: Fixture, user: String = "alice") -> String {
        fixture.layout().userPath(user) + "/" + PackCheckpoint.name
    }

    private func packSize(_ fixture: Fixture) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: fixture.layout().userPath("alice") + "/" + PackFile.name)[.size]) as? Int) ?? 0
    }

    /// Fills alice's pack with `count` collections written through, then changes a few after
    /// the last checkpoint: one rewritten, one removed.
    private func filled(_ fixture: Fixture) throws {
        let cache = try fixture.openCache()
        for index in 0..<Self.count { try cache.cacheItems(item(index), forKey: "k\(index)") }
        try cache.cacheItems(item(5, version: 1), forKey: "k5")
        try cache.removeItems(MenuItem.self, forKey: "k6")
    }

    /// Every collection, read by a fresh instance, is what was written last.
    private func expectEveryCollection(_ fixture: Fixture, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let reader = try fixture.openCache()
        for index in 0..<Self.count {
            let expected: [MenuItem]? = index == 6 ? nil : item(index, version: index == 5 ? 1 : 0)
            #expect(try reader.getCachedItems(MenuItem.self, forKey: "k\(index)") == expected, "k\(index)", sourceLocation: sourceLocation)
        }
    }

    @Test func theFirstReadAfterLaunchReadsOnlyTheRecordsAfterTheCheckpoint() throws {
        let fixture = try Fixture()
        try filled(fixture)
        #expect(FileManager.default.fileExists(atPath: checkpointPath(fixture)), "the writer checkpointed the pack")

        let reader = try fixture.openCache()
        let packs = reader.store.disk.store.packs
        let before = packs.scannedBytes
        #expect(try reader.getCachedItems(MenuItem.self, forKey: "k700") == item(700))
        #expect(try reader.getCachedItems(MenuItem.self, forKey: "k5") == item(5, version: 1), "rewritten after the checkpoint")
        #expect(try reader.getCachedItems(MenuItem.self, forKey: "k6") == nil, "removed after the checkpoint")
        #expect(try reader.getCachedItems(MenuItem.self, forKey: "absent") == nil)
        let scanned = packs.scannedBytes - before
        #expect(scanned <= PackTable.checkpointInterval + 64 << 10, "scanned \(scanned) of \(packSize(fixture)) bytes")
        #expect(packSize(fixture) > 2 * PackTable.checkpointInterval, "the pack is larger than what was scanned")
        try expectEveryCollection(fixture)
    }

    @Test func aListingOrAWriteAfterLookupsReadsThePackWhole() throws {
        let fixture = try Fixture()
        try filled(fixture)
        let reader = try fixture.openCache()
        #expect(try reader.getCachedItems(MenuItem.self, forKey: "k10") == item(10))
        #expect(try reader.entries().count == Self.count - 1, "every collection listed, the removed one not")
        try reader.cacheItems(item(10, version: 2), forKey: "k10")
        #expect(try fixture.openCache().getCachedItems(MenuItem.self, forKey: "k10") == item(10, version: 2))
    }

    @Test(arguments: ["a page's byte", "the header", "the directory", "cut short", "another pack's"])
    func aCheckpointThatFailsACheckIsSetAside(_ damage: String) throws {
        let fixture = try Fixture()
        try filled(fixture)
        let path = checkpointPath(fixture)
        var bytes = [UInt8](try Data(contentsOf: URL(filePath: path)))
        let pages = Int(bytes[48]) | Int(bytes[49]) << 8
        switch damage {
        case "a page's byte": bytes[PackCheckpoint.headerLength + pages * 8 + 3 * PackCheckpoint.pageSize / 2 + 17] ^= 0x40
        case "the header": bytes[30] ^= 0x01
        case "the directory": bytes[PackCheckpoint.headerLength + 9] ^= 0x80
        case "cut short": bytes.removeLast(PackCheckpoint.pageSize + 100)
        default:
            // The checkpoint of another user's pack, of the same size and layout.
            let other = try fixture.openCache(user: "bob")
            for index in 0..<Self.count { try other.cacheItems(item(index + 1), forKey: "k\(index)") }
            bytes = [UInt8](try Data(contentsOf: URL(filePath: checkpointPath(fixture, user: "bob"))))
        }
        try Data(bytes).write(to: URL(filePath: path))
        // Whether the pages' fault is met at the first lookup or a later one, every answer is
        // the pack's own.
        try expectEveryCollection(fixture)
        if damage == "the header" {
            let reader = try fixture.openCache()
            let before = reader.store.disk.store.packs.scannedBytes
            _ = try reader.getCachedItems(MenuItem.self, forKey: "k1")
            #expect(reader.store.disk.store.packs.scannedBytes - before == packSize(fixture), "the pack was read whole")
        }
    }

    /// A collection re-dated before the checkpoint was written keeps its new date and
    /// identity for a reader that finds it through the checkpoint, as for one that reads the
    /// pack whole.
    @Test func aRedatingTheCheckpointCoversIsWhatALookupFinds() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        for index in 0..<100 { try cache.cacheItems(item(index), forKey: "k\(index)") }
        fixture.clock.advance(by: .seconds(3_600))
        let redated = fixture.clock.now
        guard case .redated(let date) = try cache.store.redate(MenuItem.self, key: "k7", session: cache.store.session) else {
            Issue.record("k7 was not re-dated")
            return
        }
        #expect(date == redated)
        for index in 100..<Self.count { try cache.cacheItems(item(index), forKey: "k\(index)") }
        #expect(FileManager.default.fileExists(atPath: checkpointPath(fixture)))

        let lookup = try fixture.openCache()
        #expect(lookup.cachedDate(MenuItem.self, forKey: "k7") == redated, "through the checkpoint")
        let path = fixture.layout().archivePath(for: ArchiveKey(user: "alice", cacheName: MenuItem.cacheName, key: "k7"))
        let lookedUp = try #require(lookup.store.disk.store.facts(of: path))
        let whole = try fixture.openCache()
        #expect(try whole.entries().count == Self.count, "a listing reads the pack whole")
        #expect(whole.store.disk.store.facts(of: path) == lookedUp, "the same date and identity either way")
        #expect(whole.cachedDate(MenuItem.self, forKey: "k8") != redated)
    }

    /// A writer that cuts a torn tail off replaces the checkpoint: the old one may cover the
    /// bytes cut, and readers opening the pack afterwards must read the records appended there.
    @Test func cuttingATornTailReplacesTheCheckpoint() throws {
        let fixture = try Fixture()
        try filled(fixture)
        let old = try Data(contentsOf: URL(filePath: checkpointPath(fixture)))
        let pack = fixture.layout().userPath("alice") + "/" + PackFile.name
        let handle = try #require(FileHandle(forWritingAtPath: pack))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0xAC, 0x50, 1, 0, 0xFF]))  // an append cut short
        try handle.close()
        try fixture.openCache().cacheItems(item(3, version: 7), forKey: "k3")
        let new = try Data(contentsOf: URL(filePath: checkpointPath(fixture)))
        let covered = new[24..<32].withUnsafeBytes { Int(UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self))) }
        #expect(new != old && covered == packSize(fixture), "a checkpoint of the pack as cut and appended to")
        #expect(try fixture.openCache().getCachedItems(MenuItem.self, forKey: "k3") == item(3, version: 7))
        #expect(try fixture.openCache().getCachedItems(MenuItem.self, forKey: "k900") == item(900))
    }

    /// A checkpoint is rewritten in place: a reader that opened the old one goes on answering
    /// exactly, whether the pages it reads are the old checkpoint's or the new one's.
    @Test func aReaderOfTheOldCheckpointAnswersRightWhileItIsRewritten() throws {
        let fixture = try Fixture()
        try filled(fixture)
        let reader = try fixture.openCache()
        #expect(try reader.getCachedItems(MenuItem.self, forKey: "k1") == item(1), "the reader holds the checkpoint")
        let before = try Data(contentsOf: URL(filePath: checkpointPath(fixture)))
        let writer = try fixture.openCache()
        // More collections (more pages) and new versions of some, until a new checkpoint.
        var round = 0
        while try Data(contentsOf: URL(filePath: checkpointPath(fixture))) == before {
            round += 1
            try #require(round < 20, "no new checkpoint was written")
            for index in 0..<200 {
                try writer.cacheItems(item(Self.count + round * 200 + index), forKey: "n\(round)-\(index)")
                try writer.cacheItems(item(index * 7, version: round), forKey: "k\(index * 7)")
            }
        }
        for index in 0..<Self.count {
            let rewritten = index % 7 == 0 && index / 7 < 200 && index != 6
            let expected: [MenuItem]? = index == 6 ? nil : item(index, version: rewritten ? round : (index == 5 ? 1 : 0))
            #expect(try reader.getCachedItems(MenuItem.self, forKey: "k\(index)") == expected, "k\(index)")
        }
        #expect(try reader.getCachedItems(MenuItem.self, forKey: "n1-5") == item(Self.count + 200 + 5))
    }

    @Test func aCompactedPackIsNotReadThroughTheOldPacksCheckpoint() throws {
        let fixture = try Fixture()
        try filled(fixture)
        let old = try Data(contentsOf: URL(filePath: checkpointPath(fixture)))
        let cache = try fixture.openCache()
        // Replace most records until the pack is compacted (its inode changes).
        let number = try #require(FileManager.default.attributesOfItem(atPath: fixture.layout().userPath("alice") + "/" + PackFile.name)[.systemFileNumber] as? Int)
        var round = 0
        while (try FileManager.default.attributesOfItem(atPath: fixture.layout().userPath("alice") + "/" + PackFile.name)[.systemFileNumber] as? Int) == number {
            round += 1
            for index in 0..<200 { try cache.cacheItems(item(index, version: round), forKey: "k\(index)") }
            try #require(round < 50, "the pack was never compacted")
        }
        // The old checkpoint put back beside the new pack: it does not describe it.
        try old.write(to: URL(filePath: checkpointPath(fixture)))
        let reader = try fixture.openCache()
        for index in [0, 150, 199, 200, 1_000] {
            let expected = index == 6 ? nil : item(index, version: index < 200 ? round : 0)
            #expect(try reader.getCachedItems(MenuItem.self, forKey: "k\(index)") == expected, "k\(index)")
        }
    }
}
