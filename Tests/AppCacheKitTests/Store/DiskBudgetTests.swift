import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

/// The disk index, disk usage and the disk budget.
///
/// On the file-per-collection layout: budgets are sums of archive sizes measured one file each
/// (a pack adds its own header); PackTests and DiskBudgetOnDiskTests hold the packed layout to
/// its budget.
struct DiskBudgetTests {
    /// The size of the archive of `[Plain(value: 1)]` for `user` and `key`: names are in the
    /// header, so they count.
    private func archiveSize(user: String = "alice", key: String) throws -> Int {
        let scratch = try Fixture(layout: .filePerCollection)
        try scratch.openCache(user: user).cacheItems([Plain(value: 1)], forKey: key)
        return try scratch.measuredUsage()
    }

    @Test func diskUsageFollowsWritesAndRemovalsAcrossRelaunches() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        #expect(try cache.bytesOnDisk() == 0)
        try cache.cacheItems(MenuItem.sampleMenu(count: 20), forKey: "a")
        try cache.cacheItems(MenuItem.sampleMenu(count: 5), forKey: "b")
        #expect(try cache.bytesOnDisk() == 0, "nothing is on disk before a flush")
        try cache.flush()
        #expect(try cache.bytesOnDisk() == (try fixture.measuredUsage()))
        try cache.removeItems(MenuItem.self, forKey: "a")
        try cache.switchUser(to: "bob")
        try cache.cacheItems(MenuItem.sampleMenu(count: 3))
        try cache.flush()
        let expected = try fixture.measuredUsage()
        #expect(try cache.bytesOnDisk() == expected)
        // A new instance reads the journal, not the directories, and agrees.
        #expect(try fixture.openCache().bytesOnDisk() == expected)
        try cache.removeAllUsers()
        #expect(try cache.bytesOnDisk() == 0)
    }

    @Test func theBudgetRemovesLeastRecentlyUsedUnpinnedArchivesOfAnyUser() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        // Users and keys of one length, so every archive has the same size.
        let one = try archiveSize(key: "a1")
        #expect(try archiveSize(user: "bobby", key: "b1") == one)
        var configuration = fixture.configuration(user: "alice")
        configuration.diskByteLimit = one * 3
        let cache = try AppCache(configuration: configuration)
        try cache.cacheItems([Plain(value: 1)], forKey: "a1")
        try cache.cacheItems([Plain(value: 1)], forKey: "a2")
        try cache.pin(Plain.self, forKey: "a2")
        try cache.switchUser(to: "bobby")
        try cache.cacheItems([Plain(value: 1)], forKey: "b1")
        #expect(try cache.bytesOnDisk() == one * 3)
        try cache.cacheItems([Plain(value: 1)], forKey: "b2")  // over: a1 goes (oldest unpinned)
        #expect(!fixture.hasArchive(Plain.self, key: "a1", user: "alice"))
        #expect(fixture.hasArchive(Plain.self, key: "a2", user: "alice"))
        #expect(fixture.hasArchive(Plain.self, key: "b1", user: "bobby"))
        try cache.cacheItems([Plain(value: 1)], forKey: "b3")  // b1 goes, the pinned one stays
        #expect(!fixture.hasArchive(Plain.self, key: "b1", user: "bobby"))
        #expect(fixture.hasArchive(Plain.self, key: "a2", user: "alice"))
        #expect(try cache.bytesOnDisk() == one * 3)
        #expect(try cache.bytesOnDisk() == (try fixture.measuredUsage()))
    }

    @Test func pinnedArchivesGoLastOldestFirst() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let one = try archiveSize(key: "p1")
        var configuration = fixture.configuration()
        configuration.diskByteLimit = one * 2
        do {
            let cache = try AppCache(configuration: configuration)
            for name in ["p1", "p2"] {
                try cache.cacheItems([Plain(value: 1)], forKey: name)
                try cache.pin(Plain.self, forKey: name)
            }
        }
        // The app lowers its budget: the next write removes the unpinned archive first, then,
        // still over, the oldest pinned one.
        configuration.diskByteLimit = one
        let cache = try AppCache(configuration: configuration)
        try cache.cacheItems([Plain(value: 1)], forKey: "p3")
        #expect(!fixture.hasArchive(Plain.self, key: "p3"))
        #expect(!fixture.hasArchive(Plain.self, key: "p1"))
        #expect(fixture.hasArchive(Plain.self, key: "p2"))
        #expect(try cache.bytesOnDisk() == one)
    }

    /// One budget per root, the app's: an extension configured with a smaller one enforces the
    /// app's, never evicting what the app keeps within its own.
    @Test func anExtensionEnforcesTheAppsBudget() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let one = try archiveSize(key: "a1")
        var appConfiguration = fixture.configuration()
        appConfiguration.diskByteLimit = one * 3
        let app = try AppCache(configuration: appConfiguration)
        for key in ["a1", "a2", "a3"] { try app.cacheItems([Plain(value: 1)], forKey: key) }

        var widgetConfiguration = fixture.configuration()
        widgetConfiguration.diskByteLimit = one
        widgetConfiguration.isAppExtension = true
        let widget = try AppCache(configuration: widgetConfiguration)
        try widget.cacheItems([Plain(value: 1)], forKey: "a4")  // over the app's budget by one
        #expect(!fixture.hasArchive(Plain.self, key: "a1"), "the least recently used goes")
        for key in ["a2", "a3", "a4"] { #expect(fixture.hasArchive(Plain.self, key: key), "the app's budget holds, not the widget's") }
        #expect(try widget.bytesOnDisk() == one * 3)

        // An app without a budget (an update that removed it) lifts the root's, for the
        // extension too: the app's choice holds.
        var unlimited = fixture.configuration()
        unlimited.diskByteLimit = nil
        let updatedApp = try AppCache(configuration: unlimited)
        try updatedApp.cacheItems([Plain(value: 1)], forKey: "a5")
        #expect(try updatedApp.bytesOnDisk() == one * 4)
        try widget.cacheItems([Plain(value: 1)], forKey: "a6")
        #expect(try widget.bytesOnDisk() == one * 5, "nothing evicted: the app recorded no budget")
    }

    @Test func accessOrderSurvivesARelaunch() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let one = try archiveSize(key: "a")
        var configuration = fixture.configuration()
        configuration.diskByteLimit = one * 3
        do {
            let cache = try AppCache(configuration: configuration)
            for name in ["a", "b", "c"] { try cache.cacheItems([Plain(value: 1)], forKey: name) }
        }
        do {
            // Reading "a" from disk makes it recent without rewriting its archive.
            let cache = try AppCache(configuration: configuration)
            let before = try FileManager.default.attributesOfItem(atPath: fixture.archivePath(Plain.self, key: "a"))[.modificationDate] as? Date
            #expect(try cache.getCachedItems(Plain.self, forKey: "a") == [Plain(value: 1)])
            let after = try FileManager.default.attributesOfItem(atPath: fixture.archivePath(Plain.self, key: "a"))[.modificationDate] as? Date
            #expect(before == after)
            try cache.flush()
        }
        let cache = try AppCache(configuration: configuration)
        try cache.cacheItems([Plain(value: 1)], forKey: "d")
        #expect(fixture.archiveExists(Plain.self, key: "a"))
        #expect(!fixture.archiveExists(Plain.self, key: "b"), "b was the least recently used")
        #expect(fixture.archiveExists(Plain.self, key: "c") && fixture.archiveExists(Plain.self, key: "d"))
    }

    @Test func readsServedFromMemoryCountAsUses() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let one = try archiveSize(key: "a")
        var configuration = fixture.configuration(memory: .layer(writeBackDelay: nil))
        configuration.diskByteLimit = one * 3
        do {
            let cache = try AppCache(configuration: configuration)
            for name in ["a", "b", "c"] { try cache.cacheItems([Plain(value: 1)], forKey: name) }
            try cache.flush()
            // "a" is read from memory only; the next flush (with nothing to write) records it.
            #expect(try cache.getCachedItems(Plain.self, forKey: "a") == [Plain(value: 1)])
            #expect(cache.memoryStatistics.misses == 0)
            try cache.flush()
        }
        let cache = try AppCache(configuration: configuration)
        try cache.cacheItems([Plain(value: 1)], forKey: "d")
        try cache.flush()
        #expect(fixture.hasArchive(Plain.self, key: "a"))
        #expect(!fixture.hasArchive(Plain.self, key: "b"), "b was the least recently used")
    }

    @Test(arguments: ["missing", "damaged", "foreign"])
    func aLostOrDamagedIndexIsRebuiltFromTheArchivesNeverWipingThem(_ damage: String) throws {
        let fixture = try Fixture(layout: .filePerCollection)
        do {
            let cache = try fixture.openCache()
            for index in 0..<5 { try cache.cacheItems([Plain(value: index)], forKey: "k\(index)") }
        }
        let journal = fixture.journalPath
        #expect(FileManager.default.fileExists(atPath: journal))
        switch damage {
        case "missing": try FileManager.default.removeItem(atPath: journal)
        case "damaged":
            var lines = try String(contentsOfFile: journal, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            lines[1] = "deadbeef S 1 0 user-alice/x.archive"
            try lines.joined(separator: "\n").write(toFile: journal, atomically: true, encoding: .utf8)
        default: try Data("GIF89a".utf8).write(to: URL(filePath: journal))
        }
        let cache = try fixture.openCache()
        #expect(try cache.bytesOnDisk() == (try fixture.measuredUsage()))
        for index in 0..<5 {
            #expect(try cache.getCachedItems(Plain.self, forKey: "k\(index)") == [Plain(value: index)])
        }
        guard case .records = IndexJournal(fileSystem: try fixture.store().fileSystem).read(after: nil) else {
            Issue.record("the journal is not complete again")
            return
        }
    }

    @Test func aTornLastJournalLineIsDropped() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        try fixture.openCache().cacheItems([Plain(value: 1)])
        let cache = try fixture.openCache()
        let usage = try cache.bytesOnDisk()
        let handle = try FileHandle(forWritingTo: URL(filePath: fixture.journalPath))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("0badc0de S 99".utf8))  // a crash mid-append
        try handle.close()
        guard case .records(_, _, _, let tornBytes) = IndexJournal(fileSystem: try fixture.store().fileSystem).read(after: nil) else {
            Issue.record("a torn last line makes the journal damaged")
            return
        }
        #expect(tornBytes == 13)
        #expect(try fixture.openCache().bytesOnDisk() == usage)
        // The next writer cuts the torn line off before appending, so the journal stays whole.
        try cache.cacheItems([Plain(value: 2)], forKey: "more")
        #expect(!(try String(contentsOfFile: fixture.journalPath, encoding: .utf8)).contains("0badc0de"))
        #expect(try fixture.openCache().bytesOnDisk() == (try fixture.measuredUsage()))
    }

    @Test func openingDoesNotReadTheIndexUnlessABudgetIsSet() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        try fixture.openCache().cacheItems([Plain(value: 1)])
        let reads = Locked(0)
        let journal = fixture.journalPath
        let cache = try fixture.openCache(faults: { step, path in
            if step == .read && path == journal { reads.withLock { $0 += 1 } }
            return nil
        })
        // Nor does a write: without a crash to settle, a batch reads nothing it did not write.
        try cache.cacheItems([Plain(value: 2)])
        #expect(reads.withLock { $0 } == 0)
    }
}

struct DiskIndexTests {
    private func path(_ relative: String) -> CachePath {
        CachePath(relative: relative)!
    }

    @Test func recordsRoundTripThroughJournalLines() {
        let records: [DiskIndex.Record] = [
            .begin, .set(path: path("user-alice/a.archive"), size: 12, isPinned: true), .touch(path: path("shared/b.archive")),
            .remove(path: path("user-x/c+d with space.archive")), .removeAll(directory: "user-alice"), .removeAll(directory: nil),
            .willChange(path: path("shared/b.archive"), temporaryName: ".tmp-1f"), .willRemoveAll(directory: "shared"),
            .willCompact(temporaryName: ".tmp-2e"), .temporaryGone(name: ".tmp-2e"),
        ]
        for record in records {
            let line = IndexJournal.line(record)
            #expect(line.hasSuffix("\n"))
            #expect(IndexJournal.record(from: Array(line.utf8.dropLast())) == record)
        }
        #expect(IndexJournal.record(from: Array("00000000 S 1 0 x".utf8)) == nil, "a wrong checksum")
    }

    /// Journal lines are untrusted: a path the layout could not have made, or a size no file
    /// has, makes the line invalid (and so the journal damaged), never a path outside the root.
    @Test(arguments: [
        "S 1 0 ../../etc/passwd", "S 1 0 user-alice/../../x", "D /etc/passwd", "D user-alice/..", "A user-alice/.",
        "S 1 0 somewhere/x.archive", "S 1 0 user-/x.archive", "S 1 0 user-a/b/c.archive", "D user-a/x\u{0}y",
        "S 99999999999999999999 0 shared/x.archive", "S -1 0 shared/x.archive", "S 1 2 shared/x.archive",
        "X user-a/", "X ../x", "I tmp shared/x.archive", "I .tmp-a b shared/x.archive", "K ../.tmp-x", "H 1", "Q x",
        "S 1125899906842625 0 shared/x.archive",
    ])
    func badLinesAreRefused(_ body: String) {
        let checksum = String(CRC32.checksum(Array(body.utf8)), radix: 16)
        let line = String(repeating: "0", count: 8 - checksum.count) + checksum + " " + body
        #expect(IndexJournal.record(from: Array(line.utf8)) == nil)
    }

    /// Sizes that add past `Int.max` mark the index damaged instead of trapping.
    @Test func sizesThatOverflowMarkTheIndexDamaged() {
        var index = DiskIndex()
        for number in 0..<9000 {
            index.apply(.set(path: path("shared/\(number).archive"), size: DiskIndex.maximumSize, isPinned: false))
        }
        #expect(index.isDamaged)
    }

    @Test func totalsAndVictimOrder() {
        var index = DiskIndex()
        index.apply(.set(path: path("shared/a"), size: 10, isPinned: false))
        index.apply(.set(path: path("shared/b"), size: 20, isPinned: true))
        index.apply(.set(path: path("shared/c"), size: 30, isPinned: false))
        index.apply(.touch(path: path("shared/a")))
        #expect(index.totalBytes == 60)
        #expect(index.nextVictim?.path == path("shared/c"))
        index.apply(.set(path: path("shared/c"), size: 5, isPinned: false))
        #expect(index.totalBytes == 35)
        #expect(index.nextVictim?.path == path("shared/a"))
        index.apply(.removeAll(directory: "shared"))
        #expect(index.totalBytes == 0 && index.count == 0)
        index.apply(.set(path: path("user-v/p"), size: 1, isPinned: true))
        #expect(index.nextVictim?.path == path("user-v/p"), "pinned ones go when nothing else is left")
        var replayed = DiskIndex()
        for record in index.snapshot { replayed.apply(record) }
        #expect(replayed.totalBytes == index.totalBytes && replayed.entry(path("user-v/p")) == index.entry(path("user-v/p")))
    }
}
