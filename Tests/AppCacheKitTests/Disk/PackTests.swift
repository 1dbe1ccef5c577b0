import Foundation
import MenuModel
import Testing

@testable import AppCacheKit

/// Small archives as records of their user directory's pack (`.pack`) rather than files: what a
/// user relies on holds exactly as with files (dates, staleness, removal, listing, another
/// instance's reads, purges, damage), and the pack stays bounded.
struct PackTests {
    let notes = [Note.make(1), Note.make(2)]

    /// A cache that packs small archives, as an app's does.
    private func packed(_ fixture: Fixture, user: String? = "alice", memory: Fixture.Memory = .diskOnly) throws -> AppCache {
        try fixture.openCache(user: user, memory: memory)
    }

    private func packPath(_ fixture: Fixture, user: String = "alice") -> String {
        fixture.layout().userPath(user) + "/" + PackFile.name
    }

    private func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0
    }

    // Looks at which archives are files of their own beside the pack.
    @Test func smallCollectionsAreRecordsOfTheUsersPackWithTheirOwnDates() throws {
        let fixture = try Fixture(layout: .packed(limit: PackTable.defaultLimit))
        let cache = try packed(fixture)
        let written = fixture.clock.now
        try cache.cacheItems(notes, forKey: "a")
        fixture.clock.advance(by: .seconds(60))
        try cache.cacheItems([Note.make(3)], forKey: "b")

        #expect(!fixture.archiveExists(Note.self, key: "a"), "no file of its own")
        #expect(FileManager.default.fileExists(atPath: packPath(fixture)))
        #expect(fixture.allFiles() == ["version-1/user-alice/.pack"])
        let reopened = try packed(fixture)
        #expect(try reopened.getCachedItems(Note.self, forKey: "a") == notes)
        #expect(reopened.cachedDate(Note.self, forKey: "a") == written, "the date it was cached, exactly")
        #expect(reopened.cachedDate(Note.self, forKey: "b") == written.addingTimeInterval(60))

        // Staleness is judged from the time each was written.
        fixture.clock.advance(by: .seconds(3600 - 30))
        #expect(reopened.isStale(Note.self, forKey: "a"))
        #expect(!reopened.isStale(Note.self, forKey: "b"))

        // Every collection is still listed on its own, by the cache and the inspector.
        #expect(try reopened.entries().map(\.key).sorted { ($0 ?? "") < ($1 ?? "") } == ["a", "b"])
        let listing = try CacheRootListing.read(root: fixture.root)
        #expect(listing.archives.count == 2)
        #expect(listing.archives.allSatisfy { $0.isPacked })
        #expect(try cache.bytesOnDisk() == listing.archives.reduce(0) { $0 + $1.bytes })
    }

    @Test func aRevalidationAppendsANewDateNotTheArchiveAgain() async throws {
        let fixture = try Fixture()
        let server = FakeServer(answer: .items(notes, etag: "\"v1\""))
        let configuration = fixture.configuration()
        _ = await collect(try AppCache(configuration: configuration).load(Note.self, fetch: server.fetch))
        let before = size(packPath(fixture))

        fixture.clock.advance(by: .seconds(3601))
        let cache = try AppCache(configuration: configuration)
        server.answer(.notModified)
        let (answers, error) = await collect(cache.load(Note.self, fetch: server.fetch))
        #expect(error == nil)
        #expect(answers.map(\.isStale) == [true, false])
        #expect(size(packPath(fixture)) - before == PackRecord.prefixLength, "a re-dating record only")
        #expect(!(try AppCache(configuration: configuration)).isStale(Note.self), "another instance sees the new date")
        #expect(server.receivedValidators.last == CacheValidators(etag: "\"v1\""), "validators are kept")
    }

    // Looks at which archives are files of their own beside the pack.
    @Test func aCollectionMovesBetweenThePackAndAFileAsItsSizeCrossesTheLimit() throws {
        let fixture = try Fixture(layout: .packed(limit: 2048))
        let configuration = fixture.configuration()
        let cache = try AppCache(configuration: configuration)
        let small = MenuItem.sampleMenu(count: 1)
        let large = MenuItem.sampleMenu(count: 40)

        try cache.cacheItems(small, forKey: "m")
        #expect(!fixture.archiveExists(MenuItem.self, key: "m"))
        try cache.cacheItems(large, forKey: "m")
        #expect(fixture.archiveExists(MenuItem.self, key: "m"), "too large for the pack: a file of its own")
        #expect(try AppCache(configuration: configuration).getCachedItems(MenuItem.self, forKey: "m") == large, "the pack's older copy is gone")
        try cache.cacheItems(small, forKey: "m")
        #expect(!fixture.archiveExists(MenuItem.self, key: "m"), "back in the pack, the file removed")
        #expect(try AppCache(configuration: configuration).getCachedItems(MenuItem.self, forKey: "m") == small)

        // A removal never uncovers an older copy.
        try cache.removeItems(MenuItem.self, forKey: "m")
        #expect(try AppCache(configuration: configuration).getCachedItems(MenuItem.self, forKey: "m") == nil)
        #expect(try cache.bytesOnDisk() == 0)
    }

    @Test func anotherInstanceReadsEachWriteAndRemovalNextEvenWhenItHeldThePackOpen() throws {
        let fixture = try Fixture()
        let writer = try packed(fixture)
        let reader = try packed(fixture)
        for value in 0..<20 {
            try writer.cacheItems([Plain(value: value)], forKey: "k\(value % 3)")
            #expect(try reader.getCachedItems(Plain.self, forKey: "k\(value % 3)") == [Plain(value: value)])
        }
        try writer.removeItems(Plain.self, forKey: "k1")
        #expect(try reader.getCachedItems(Plain.self, forKey: "k1") == nil)
        try writer.removeAll()
        try writer.flush()  // the wipe lands on the cache's own thread
        #expect(try reader.getCachedItems(Plain.self, forKey: "k0") == nil, "the user's directory, pack and all, went")
        try writer.cacheItems([Plain(value: 99)], forKey: "k0")
        #expect(try reader.getCachedItems(Plain.self, forKey: "k0") == [Plain(value: 99)], "a new pack after the wipe")
    }

    // Looks at which archives are files of their own beside the pack.
    @Test func aPackOfMostlyReplacedRecordsIsCompactedAndEveryReaderFollows() throws {
        let fixture = try Fixture(layout: .packed(limit: PackTable.defaultLimit))
        let cache = try packed(fixture)
        let reader = try packed(fixture)
        let keep = MenuItem.sampleMenu(count: 3, seed: 7)
        try cache.cacheItems(keep, forKey: "kept")
        #expect(try reader.getCachedItems(MenuItem.self, forKey: "kept") == keep)
        let identity = try #require(cache.store.disk.store.facts(of: fixture.layout().archivePath(for: ArchiveKey(user: "alice", cacheName: MenuItem.cacheName, key: "kept")))?.identity)
        let menu = MenuItem.sampleMenu(count: 40)
        var largest = 0
        for round in 0..<200 {
            try cache.cacheItems(menu, forKey: "often")
            largest = max(largest, size(packPath(fixture)))
            if round % 50 == 0 { #expect(try reader.getCachedItems(MenuItem.self, forKey: "often") == menu) }
        }
        let live = try cache.bytesOnDisk()
        #expect(largest <= 2 * live + PackTable.minimumCompactionWaste + 64 << 10, "compacted as it grew: \(largest) bytes at most for \(live) live")
        #expect(size(packPath(fixture)) < largest)
        #expect(try reader.getCachedItems(MenuItem.self, forKey: "kept") == keep, "a reader of the replaced pack reads the new one")
        #expect(try reader.getCachedItems(MenuItem.self, forKey: "often") == menu)
        let after = cache.store.disk.store.facts(of: fixture.layout().archivePath(for: ArchiveKey(user: "alice", cacheName: MenuItem.cacheName, key: "kept")))?.identity
        #expect(after == identity, "a compaction keeps each archive's identity: memory agrees with it still")
        #expect(fixture.allFiles() == ["version-1/user-alice/.pack"], "no temporary file left (and no checkpoint of two collections)")
    }

    // A compaction reads the pack in windows of PackTable.maximumBodyLength bytes and writes
    // the new one in runs: every record must land whole, across window and run boundaries.
    @Test func aCompactionOfAPackLargerThanItsReadWindowKeepsEveryCollection() throws {
        let fixture = try Fixture(layout: .packed(limit: PackTable.defaultLimit))
        let cache = try packed(fixture, memory: .layer(bytes: 64 << 20, entries: 2_000, writeBackDelay: nil))
        let menus = (0..<900).map { MenuItem.sampleMenu(count: 8, seed: $0) }
        func expected(_ index: Int, round: Int) -> [MenuItem] {
            round > 0 && index % 3 == 0 ? Array(menus[index].reversed()) : menus[index]
        }
        var firstRound = 0
        for round in 0..<3 {
            for index in menus.indices { try cache.cacheItems(expected(index, round: round), forKey: "menu-\(index)") }
            try cache.flush()
            if round == 0 { firstRound = size(packPath(fixture)) }
        }
        try #require(firstRound > PackTable.maximumBodyLength, "more live bytes than one read window: \(firstRound)")
        #expect(size(packPath(fixture)) < 2 * firstRound, "compacted: three rounds appended, at most one kept")
        let fresh = try packed(fixture)
        for index in menus.indices {
            #expect(try fresh.getCachedItems(MenuItem.self, forKey: "menu-\(index)") == expected(index, round: 2))
        }
    }

    @Test func aTornOrDamagedTailIsAMissAndCutOffByTheNextWrite() throws {
        let fixture = try Fixture()
        let cache = try packed(fixture)
        try cache.cacheItems([Plain(value: 1)], forKey: "a")
        try cache.cacheItems([Plain(value: 2)], forKey: "b")
        let whole = try Data(contentsOf: URL(filePath: packPath(fixture)))

        // A crash mid-append: the second record cut short.
        try whole.prefix(whole.count - 5).write(to: URL(filePath: packPath(fixture)))
        let afterCrash = try packed(fixture)
        #expect(try afterCrash.getCachedItems(Plain.self, forKey: "a") == [Plain(value: 1)])
        #expect(try afterCrash.getCachedItems(Plain.self, forKey: "b") == nil)
        try afterCrash.cacheItems([Plain(value: 3)], forKey: "c")
        #expect(size(packPath(fixture)) < whole.count + 100, "the torn record was cut off before the append")
        let next = try packed(fixture)
        #expect(try next.getCachedItems(Plain.self, forKey: "a") == [Plain(value: 1)])
        #expect(try next.getCachedItems(Plain.self, forKey: "c") == [Plain(value: 3)])

        #expect(!fixture.diagnostics.codes.contains(.corruptArchive), "a torn append is not damage")

        // Garbage after the records: reported once a writer cuts it off, never read as items.
        var garbage = try Data(contentsOf: URL(filePath: packPath(fixture)))
        garbage += Data(repeating: 0x5A, count: 300)
        try garbage.write(to: URL(filePath: packPath(fixture)))
        let damaged = try packed(fixture)
        #expect(try damaged.getCachedItems(Plain.self, forKey: "c") == [Plain(value: 3)])
        try damaged.cacheItems([Plain(value: 4)], forKey: "d")
        #expect(try packed(fixture).getCachedItems(Plain.self, forKey: "d") == [Plain(value: 4)])
        #expect(fixture.diagnostics.errors.contains { $0.code == .corruptArchive && $0.message.contains("pack") })
    }

    @Test func aFlippedByteInARecordIsAMissAndTheCollectionCanBeWrittenAgain() throws {
        let fixture = try Fixture()
        let cache = try packed(fixture)
        try cache.cacheItems(notes, forKey: "a")
        var bytes = try Data(contentsOf: URL(filePath: packPath(fixture)))
        bytes[bytes.count - 3] ^= 0x01
        try bytes.write(to: URL(filePath: packPath(fixture)))
        let reader = try packed(fixture)
        #expect(try reader.getCachedItems(Note.self, forKey: "a") == nil)
        #expect(fixture.diagnostics.codes.contains(.corruptArchive))
        try reader.cacheItems(notes, forKey: "a")
        #expect(try packed(fixture).getCachedItems(Note.self, forKey: "a") == notes)
    }

    @Test func aWriteAfterTheUserDirectoryWasPurgedLandsInANewPack() throws {
        let fixture = try Fixture()
        let cache = try packed(fixture)
        try cache.cacheItems([Plain(value: 1)], forKey: "a")
        try FileManager.default.removeItem(atPath: fixture.layout().userPath("alice"))
        #expect(try cache.getCachedItems(Plain.self, forKey: "a") == nil, "a purge is a miss")
        try cache.cacheItems([Plain(value: 2)], forKey: "b")
        #expect(FileManager.default.fileExists(atPath: packPath(fixture)), "not written into the purged file held open")
        #expect(try packed(fixture).getCachedItems(Plain.self, forKey: "b") == [Plain(value: 2)])
    }

    @Test func aLinkOrDirectoryPlantedAsThePackIsNeverFollowed() throws {
        let fixture = try Fixture()
        let outside = try TemporaryDirectory()
        let sentinel = outside.path + "/sentinel"
        let contents = Data("outside the root".utf8)
        try contents.write(to: URL(filePath: sentinel))
        let cache = try packed(fixture)
        try cache.cacheItems([Plain(value: 1)], forKey: "a")
        try FileManager.default.removeItem(atPath: packPath(fixture))
        try FileManager.default.createSymbolicLink(atPath: packPath(fixture), withDestinationPath: sentinel)

        let reader = try packed(fixture)
        #expect(try reader.getCachedItems(Plain.self, forKey: "a") == nil)
        try reader.cacheItems([Plain(value: 2)], forKey: "b")
        #expect(try packed(fixture).getCachedItems(Plain.self, forKey: "b") == [Plain(value: 2)])
        #expect(try Data(contentsOf: URL(filePath: sentinel)) == contents)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: packPath(fixture))) == nil, "the link was replaced")

        try FileManager.default.removeItem(atPath: packPath(fixture))
        try FileManager.default.createDirectory(atPath: packPath(fixture) + "/inside", withIntermediateDirectories: true)
        try reader.cacheItems([Plain(value: 3)], forKey: "c")
        #expect(try packed(fixture).getCachedItems(Plain.self, forKey: "c") == [Plain(value: 3)])
    }

    @Test func theBudgetCountsAndEvictsPackedCollections() throws {
        let fixture = try Fixture()
        var configuration = fixture.configuration()
        configuration.diskByteLimit = 2_000
        let cache = try AppCache(configuration: configuration)
        for index in 0..<20 {
            try cache.cacheItems([Plain(value: index)], forKey: "k\(index)")
        }
        #expect(try cache.bytesOnDisk() <= 2_000)
        let listing = try CacheRootListing.read(root: fixture.root)
        #expect(try cache.bytesOnDisk() == listing.archives.reduce(0) { $0 + $1.bytes })
        #expect(try cache.getCachedItems(Plain.self, forKey: "k19") == [Plain(value: 19)], "the newest stays")
        #expect(try cache.getCachedItems(Plain.self, forKey: "k0") == nil, "the oldest went")
    }

    @Test func recordsRoundTripAndRefuseWhatTheyCannotBe() {
        let record = PackRecord(kind: .archive, bodyLength: 300, nameHash: 0x0123_4567_89AB_CDEF, sequence: 42, cachedDate: Date(timeIntervalSince1970: 1_795_000_000.123456))
        let prefix = record.prefix()
        #expect(prefix.count == PackRecord.prefixLength)
        #expect(prefix.withUnsafeBytes { PackRecord.parse($0, maximumBodyLength: 1 << 20) } == .record(record))
        #expect(prefix.dropLast().withUnsafeBytes { PackRecord.parse(UnsafeRawBufferPointer($0), maximumBodyLength: 1 << 20) } == .incomplete)
        #expect(prefix.withUnsafeBytes { PackRecord.parse($0, maximumBodyLength: 299) } == .damaged("a record claims a body of 300 bytes"))
        for byte in 0..<32 {
            var flipped = prefix
            flipped[byte] ^= 0x10
            guard case .damaged = flipped.withUnsafeBytes({ PackRecord.parse($0, maximumBodyLength: 1 << 20) }) else {
                Issue.record("a flipped bit in byte \(byte) of a prefix went unnoticed")
                continue
            }
        }
    }
}

extension PackTests {
    // Looks at which archives are files of their own beside the pack.
    /// A disk writer of `store` with no budget and hooks that do nothing: a batch as a cache's.
    private func writer(of store: DiskStore) throws -> DiskWriter {
        try DiskWriter(store: store, diskByteLimit: nil, hooks: .init(didLock: { _, _ in }, takeReadArchives: { [] }, didChange: { _, _ in }))
    }

    /// Alice's archives `k<index>` for `indices`, 300 bytes of payload each, to write in a batch.
    private func archives(_ indices: Range<Int>, of store: DiskStore) -> [ArchiveWrite] {
        indices.map { index in
            let key = ArchiveKey(user: "alice", cacheName: Plain.cacheName, key: "k\(index)")
            let record = ArchiveRecord(payload: Data(repeating: UInt8(index), count: 300), codec: 2, schemaVersion: 1, cachedDate: Date())
            return ArchiveWrite(record: record, key: key, path: store.layout.archivePath(for: key))
        }
    }

    // A batch that began without a disk budget notes its packed writes with one `unindexed`
    // line, not a record each. If another process records a budget before the batch ends, the
    // end makes an index to enforce it: that index must count what the batch just wrote.
    @Test func aBudgetRecordedDuringABatchCountsTheBatchsUnlistedPackedWrites() throws {
        let fixture = try Fixture(layout: .packed(limit: PackTable.defaultLimit))
        let opened = try fixture.store()
        let store = DiskStore(layout: opened.layout, fileSystem: opened.fileSystem, packLimit: PackTable.defaultLimit)
        let writer = try self.writer(of: store)
        var problems: [AppCacheError] = []
        var changed = false
        let archives = self.archives(0..<20, of: store)
        try writer.batch(problems: &problems, changed: &changed) { batch in
            let written = batch.write(archives)
            #expect(written.identities.allSatisfy { $0 != nil } && written.identities.count == archives.count)
            // Another process opens the root with a budget, as this batch is under way.
            #expect(writer.coordinator.recordBudget(1 << 30, asExtension: false) == 1 << 30)
        }
        let usage = try writer.batch(problems: &problems, changed: &changed) { batch in batch.diskUsage() }
        #expect(usage == size(packPath(fixture)), "the index counts the whole pack the batch wrote")
        #expect(problems.isEmpty)
    }

    @Test func archivesThatWouldTakeAPackPastItsBoundAreFilesOfTheirOwn() throws {
        let fixture = try Fixture(layout: .packed(limit: PackTable.defaultLimit))
        let opened = try fixture.store()
        let store = DiskStore(layout: opened.layout, fileSystem: opened.fileSystem, packLimit: PackTable.defaultLimit, maximumPackSize: 4096)
        let writer = try self.writer(of: store)
        var problems: [AppCacheError] = []
        var changed = false
        let archives = self.archives(0..<12, of: store)
        let results = try writer.batch(problems: &problems, changed: &changed) { batch in batch.write(archives) }
        #expect(results.identities.count == archives.count && results.identities.allSatisfy { $0 != nil } && results.failures.isEmpty)
        // Another writer (as another process), which has not seen the pack grow: its append
        // finds the pack full under the lock and writes files instead.
        let other = DiskStore(layout: opened.layout, fileSystem: opened.fileSystem, packLimit: PackTable.defaultLimit, maximumPackSize: 4096)
        let otherWriter = try self.writer(of: other)
        let more = self.archives(12..<16, of: store)
        let otherResults = try otherWriter.batch(problems: &problems, changed: &changed) { batch in batch.write(more) }
        #expect(otherResults.identities.count == more.count && otherResults.identities.allSatisfy { $0 != nil } && otherResults.failures.isEmpty)
        let packSize = (try FileManager.default.attributesOfItem(atPath: packPath(fixture))[.size] as? Int) ?? 0
        #expect(packSize <= 4096, "the pack stayed within its bound")
        let files = fixture.allFiles().filter { $0.hasSuffix(".archive") }
        #expect(!files.isEmpty && files.count < 16, "the rest are files: \(files)")
        for archive in archives + more {
            let (record, key, path) = (archive.record, archive.key, archive.path)
            guard case .found(let read, _) = try store.record(at: path, forKey: key, versions: .only(1)) else {
                Issue.record("\(key.key ?? "") does not read back")
                continue
            }
            #expect(read.payload == record.payload)
        }
    }
}
