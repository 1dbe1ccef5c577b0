import AppCacheTestSupport
import Foundation
import MenuModel
import Testing

@testable import AppCacheKit

/// Archives in a pack in their compact form (``PackedArchive``): a short header and, for a
/// binary payload, the key table kept once per pack. Every collection reads back exactly as
/// written; a damaged byte costs at most the record it lands in (a key table has two copies);
/// packs written before the form still read; the tables a pack keeps stay bounded.
struct PackedArchiveTests {
    private func packURL(_ fixture: Fixture, user: String = "alice") -> URL {
        URL(filePath: fixture.layout().userPath(user) + "/" + PackFile.name)
    }

    /// The records of `pack`, in order: where each is, and its prefix.
    private func records(of pack: Data) -> [(range: Range<Int>, record: PackRecord)] {
        var found: [(Range<Int>, PackRecord)] = []
        var offset = 0
        while offset < pack.count {
            let parsed = pack.withUnsafeBytes { bytes in
                PackRecord.parse(UnsafeRawBufferPointer(rebasing: bytes[offset...]), maximumBodyLength: PackTable.maximumBodyLength)
            }
            guard case .record(let record) = parsed else { break }
            found.append((offset..<offset + record.length, record))
            offset += record.length
        }
        return found
    }

    private func menu(_ index: Int) -> [MenuItem] {
        MenuItem.sampleMenu(count: 1, seed: index)
    }

    /// Writes enough collections (`Plain`, keys `f0`, `f1`, ..., whose payloads keep their short
    /// key tables) for the pack to share the key tables of later ones
    /// (``PackTable/minimumArchivesSharingTables``).
    private func fill(_ cache: AppCache) throws {
        for index in 0..<PackTable.minimumArchivesSharingTables { try cache.cacheItems([Plain(value: index)], forKey: "f\(index)") }
    }

    /// A model with long property names: a key table worth sharing.
    struct Reading: CacheableModel, Equatable {
        var temperatureInCelsius: Double
        var relativeHumidityPercent: Int
    }

    // MARK: - The header

    private func headers() -> [ArchiveHeader] {
        var plain = ArchiveHeader(
            codec: PayloadCodec.binary.headerValue, schemaVersion: 3, expiryMilliseconds: nil, thresholdMilliseconds: 3_600_000,
            decodedSize: 512, payloadLength: 300, payloadChecksum: 0xDEAD_BEEF, user: "alice", cacheName: "menu", key: "lunch")
        var everything = plain
        everything.schemaVersion = -7
        everything.expiryMilliseconds = -1_234_567
        everything.isPinned = true
        everything.validators = CacheValidators(etag: "\"v1\"", lastModified: "Tue, 01 Dec 2026 10:00:00 GMT")
        everything.nextPageCursor = "page=2"
        var sparse = plain
        sparse.user = nil
        sparse.key = nil
        sparse.thresholdMilliseconds = nil
        sparse.decodedSize = nil
        sparse.codec = PayloadCodec.json.headerValue
        plain.schemaVersion = Int64.max
        return [plain, everything, sparse]
    }

    @Test func theCompactHeaderGivesBackEveryFieldOfTheArchiveHeader() throws {
        for header in headers() {
            for table in [nil, 0x0123_4567_89AB_CDEF as UInt64] {
                var bytes: [UInt8] = [7]
                PackedArchive.append(header, keyTable: table, to: &bytes)
                let parsed = try bytes.withUnsafeBytes { try PackedArchive.parse(UnsafeRawBufferPointer(rebasing: $0[1...])) }
                #expect(parsed.header == header)
                #expect(parsed.keyTable == table)
                #expect(parsed.length == bytes.count - 1)
                #expect(parsed.length < header.encodedLength, "shorter than the file's header")
            }
        }
    }

    @Test func aDamagedOrCutCompactHeaderIsADefectNeverAnotherHeader() throws {
        for header in headers() {
            var bytes: [UInt8] = []
            PackedArchive.append(header, keyTable: 42, to: &bytes)
            for length in 0..<bytes.count {
                #expect(throws: ArchiveDefect.self) { try Array(bytes[..<length]).withUnsafeBytes { try PackedArchive.parse($0) } }
            }
            for position in bytes.indices {
                for flip: UInt8 in [0x01, 0x80, 0xFF] {
                    var damaged = bytes
                    damaged[position] ^= flip
                    #expect(throws: ArchiveDefect.self, "byte \(position) ^ \(flip)") { try damaged.withUnsafeBytes { try PackedArchive.parse($0) } }
                }
            }
        }
    }

    // MARK: - Through the cache

    @Test func aPacksArchivesKeepTheirModelsKeyTableOnceInTwoCopies() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(entries: 1_000))
        for index in 0..<200 { try cache.cacheItems(menu(index), forKey: "k\(index)") }
        for index in 0..<20 { try cache.cacheItems([Reading(temperatureInCelsius: Double(index), relativeHumidityPercent: index)], forKey: "r\(index)") }
        try cache.flush()
        for index in 200..<220 { try cache.cacheItems(menu(index), forKey: "k\(index)") }
        try cache.flush()

        let pack = try Data(contentsOf: packURL(fixture))
        let records = records(of: pack)
        #expect(records.last?.range.upperBound == pack.count)
        #expect(records.filter { $0.record.kind == .keyTable }.count == 4, "two models, two copies each, the second batch adding none")
        let archives = records.filter { $0.record.kind == .archive }
        #expect(archives.count == 240)
        let fileForm = try PayloadCodec.binary.encodeItems(menu(0)).count + 90
        #expect(archives.allSatisfy { $0.record.bodyLength < fileForm - 70 }, "a header and a key table less than in a file")

        let reader = try fixture.openCache()
        for index in 0..<220 { #expect(try reader.getCachedItems(MenuItem.self, forKey: "k\(index)") == menu(index)) }
        for index in 0..<20 {
            #expect(try reader.getCachedItems(Reading.self, forKey: "r\(index)") == [Reading(temperatureInCelsius: Double(index), relativeHumidityPercent: index)])
        }
        let listing = try CacheRootListing.read(root: fixture.root)
        #expect(listing.archives.filter { $0.key == "k7" }.map(\.itemCount) == [1], "counted from the stored values")
        #expect(fixture.diagnostics.errors.isEmpty)
    }

    /// A pack of a few archives keeps their key tables in their payloads: two copies a page
    /// apart would take more than sharing saves. Once it holds enough, it shares them.
    @Test func aPackOfFewArchivesSharesNoKeyTable() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        for index in 0..<3 { try cache.cacheItems(menu(index), forKey: "k\(index)") }
        let small = try Data(contentsOf: packURL(fixture))
        #expect(records(of: small).allSatisfy { $0.record.kind == .archive })
        #expect(small.count < 3 * 400, "\(small.count) bytes: a compact header each, and no page of tables")
        try fill(cache)
        try cache.cacheItems(menu(3), forKey: "k3")
        #expect(records(of: try Data(contentsOf: packURL(fixture))).filter { $0.record.kind == .keyTable }.count == 2)
        let reader = try fixture.openCache()
        for index in 0..<4 { #expect(try reader.getCachedItems(MenuItem.self, forKey: "k\(index)") == menu(index)) }
    }

    /// Every byte of a pack of four collections flipped: a key table's copy costs nothing, any
    /// other byte at most the collection whose record holds it; after the next write and a
    /// compaction too.
    @Test func aFlippedByteInAKeyTableCostsNothingAndElsewhereAtMostItsRecord() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try fill(cache)
        for key in 0..<4 { try cache.cacheItems(menu(key), forKey: "k\(key)") }
        let original = try Data(contentsOf: packURL(fixture))
        // (The filling collections' records come first; the bytes flipped are those after.)
        let records = Array(records(of: original).dropFirst(PackTable.minimumArchivesSharingTables))
        #expect(records.map(\.record.kind) == [.keyTable, .keyTable, .archive, .archive, .archive, .archive])
        // The copies share no 4 KiB page: a page lost or zeroed takes one of them at most.
        #expect(records[1].range.lowerBound % 4096 == 0)
        // (The first copy's padding, which no check covers, is not flipped byte by byte.)
        let padding = (records[0].range.upperBound - (records[0].record.bodyLength - records[1].record.bodyLength))..<records[0].range.upperBound
        #expect(padding.count > 0)
        let other = try Fixture()
        func intact() throws -> Set<Int> {
            let reader = try other.openCache()
            return Set(try (0..<4).filter { try reader.getCachedItems(MenuItem.self, forKey: "k\($0)") == menu($0) })
        }
        for position in records[0].range.lowerBound..<original.count where !padding.dropFirst().contains(position) {
            let owner = try #require(records.firstIndex { $0.range.contains(position) })
            var damaged = original
            damaged[position] ^= 0xFF
            try? FileManager.default.removeItem(at: other.root)
            try FileManager.default.copyItem(at: fixture.root, to: other.root)
            try damaged.write(to: packURL(other))
            let expected = owner < 2 ? Set(0..<4) : Set(0..<4).subtracting([owner - 2])
            let read = try intact()
            #expect(read.isSuperset(of: expected), "byte \(position) (record \(owner)): lost \(expected.subtracting(read).sorted())")

            let writer = try other.openCache()
            try writer.cacheItems(menu(99), forKey: "later")
            #expect(try intact().isSuperset(of: expected), "byte \(position): after a write")
            _ = try writer.store.withDiskWrites { batch in batch.compactPack(inDirectory: CacheLayout.userDirectoryName("alice")) }
            #expect(try intact().isSuperset(of: expected), "byte \(position): after a compaction")
            #expect(try other.openCache().getCachedItems(MenuItem.self, forKey: "later") == menu(99))
            await Task.yield()
        }
    }

    /// Both copies of a key table damaged: its archives are misses (never other items), and the
    /// next write of the model writes the table again, so that new collections read.
    @Test func bothCopiesOfAKeyTableDamagedAreMissesUntilTheTableIsWrittenAgain() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try fill(cache)
        for key in 0..<3 { try cache.cacheItems(menu(key), forKey: "k\(key)") }
        // (A collection whose payload keeps its short table: the pack stays when the misses go.)
        try cache.cacheItems([Plain(value: 1)], forKey: "plain")
        var pack = try Data(contentsOf: packURL(fixture))
        for (range, record) in records(of: pack) where record.kind == .keyTable {
            pack[range.lowerBound + PackRecord.prefixLength + 3] ^= 0x20
        }
        try pack.write(to: packURL(fixture))

        let reader = try fixture.openCache()
        for key in 0..<3 { #expect(try reader.getCachedItems(MenuItem.self, forKey: "k\(key)") == nil) }
        #expect(fixture.diagnostics.codes.contains(.corruptArchive))
        try reader.cacheItems(menu(7), forKey: "new")
        #expect(try fixture.openCache().getCachedItems(MenuItem.self, forKey: "new") == menu(7))
        #expect(records(of: try Data(contentsOf: packURL(fixture))).filter { $0.record.kind == .keyTable }.count == 4, "two new copies")
        #expect(try fixture.openCache().getCachedItems(Plain.self, forKey: "plain") == [Plain(value: 1)])
    }

    @Test func aCompactionKeepsTheKeyTablesItsArchivesUseAndNoOther() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try fill(cache)
        for index in 0..<5 {
            try cache.cacheItems(menu(index), forKey: "k\(index)")
            try cache.cacheItems([Reading(temperatureInCelsius: 1, relativeHumidityPercent: index)], forKey: "r\(index)")
        }
        try cache.cacheItems(menu(9), forKey: "json")
        for index in 0..<5 { try cache.removeItems(Reading.self, forKey: "r\(index)") }
        _ = try cache.store.withDiskWrites { batch in batch.compactPack(inDirectory: CacheLayout.userDirectoryName("alice")) }

        let records = records(of: try Data(contentsOf: packURL(fixture)))
        #expect(records.filter { $0.record.kind == .keyTable }.count == 2, "the menu's table, twice; the readings' went with them")
        let reader = try fixture.openCache()
        for index in 0..<5 { #expect(try reader.getCachedItems(MenuItem.self, forKey: "k\(index)") == menu(index)) }
        #expect(try reader.getCachedItems(MenuItem.self, forKey: "json") == menu(9))
        #expect(try cache.bytesOnDisk() == (try Data(contentsOf: packURL(fixture))).count)
    }

    /// A reader that located an archive in a pack that was then compacted (by this process or
    /// another) reads the key table from the pack it located the archive in, which it holds open.
    @Test func anArchiveLocatedInAPackReplacedSinceReadsWithThatPacksTable() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try fill(cache)
        for index in 0..<3 { try cache.cacheItems(menu(index), forKey: "k\(index)") }
        let cacheName = try #require(try cache.entries().first?.cacheName)
        let reader = try fixture.openCache()
        let disk = reader.store.disk.store
        let path = disk.layout.archivePath(for: ArchiveKey(user: "alice", cacheName: cacheName, key: "k1"))
        let located = try #require(disk.packs.locate(path, fileSystem: disk.fileSystem, change: nil))
        guard case .success(let parsed) = DiskStore.packedHeader(located), let name = parsed.keyTable else {
            Issue.record("the archive shares its key table")
            return
        }
        _ = try cache.store.withDiskWrites { batch in batch.compactPack(inDirectory: CacheLayout.userDirectoryName("alice")) }
        let moved = try #require(disk.packs.locate(path, fileSystem: disk.fileSystem, change: nil))
        #expect(moved.file.number != located.file.number, "the reader holds the compacted pack now")

        let table = disk.packs.keyTable(name, for: located, fileSystem: disk.fileSystem)
        #expect(table != nil)
        let read = DiskStore.readPacked(
            located, forKey: ArchiveKey(user: "alice", cacheName: cacheName, key: "k1"), versions: ReadableVersions(of: MenuItem.self),
            keyTable: { disk.packs.keyTable($0, for: located, fileSystem: disk.fileSystem) }
        ) { _, payload in try? PayloadCodec.binary.decodeItems(MenuItem.self, from: Data(payload)) }
        guard case .found(let items, _) = read else {
            Issue.record("read \(read)")
            return
        }
        #expect(items == menu(1))
    }

    /// A model whose key names are data (a dictionary's keys): past
    /// ``PackTable/maximumSharedTables`` the payloads keep their tables, and every one reads.
    @Test func modelsWhoseKeysAreDataShareABoundedNumberOfTables() throws {
        struct Tally: CacheableModel, Equatable {
            var counts: [String: Int]
        }
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try fill(cache)
        func tally(_ index: Int) -> [Tally] { [Tally(counts: ["a-rather-long-key-number-\(index)": index])] }
        for index in 0..<(PackTable.maximumSharedTables + 30) { try cache.cacheItems(tally(index), forKey: "t\(index)") }
        let tables = records(of: try Data(contentsOf: packURL(fixture))).filter { $0.record.kind == .keyTable }
        #expect(tables.count == 2 * PackTable.maximumSharedTables, "\(tables.count / 2) tables")
        let reader = try fixture.openCache()
        for index in 0..<(PackTable.maximumSharedTables + 30) { #expect(try reader.getCachedItems(Tally.self, forKey: "t\(index)") == tally(index)) }
    }

    /// A pack whose archives are in an archive file's form (as written before the compact
    /// form) reads as it did, and takes new records in the compact form after them.
    @Test func packsWrittenBeforeTheCompactFormStillRead() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try cache.cacheItems(menu(1), forKey: "probe")
        let cacheName = try #require(try cache.entries().first?.cacheName)
        try cache.removeItems(MenuItem.self, forKey: "probe")
        let disk = cache.store.disk.store
        var appending = PackTable.Appending()
        for index in 0..<3 {
            let key = ArchiveKey(user: "alice", cacheName: cacheName, key: "old\(index)")
            let record = ArchiveRecord(
                payload: try PayloadCodec.binary.encodeItems(menu(index)), codec: PayloadCodec.binary.headerValue,
                schemaVersion: Int64(MenuItem.schemaVersion), cachedDate: fixture.clock.now)
            appending.addArchive(
                header: DiskStore.header(of: record, forKey: key), payload: record.payload,
                nameHash: StableHash.value64(disk.layout.archivePath(for: key).name), sequence: UniqueNumbers.next(), cachedDate: record.cachedDate)
        }
        _ = try disk.packs.append(appending, toDirectory: CacheLayout.userDirectoryName("alice"), fileSystem: disk.fileSystem)

        let reader = try fixture.openCache()
        for index in 0..<3 { #expect(try reader.getCachedItems(MenuItem.self, forKey: "old\(index)") == menu(index)) }
        try reader.cacheItems(menu(5), forKey: "new")
        let again = try fixture.openCache()
        for index in 0..<3 { #expect(try again.getCachedItems(MenuItem.self, forKey: "old\(index)") == menu(index)) }
        #expect(try again.getCachedItems(MenuItem.self, forKey: "new") == menu(5))
    }
}
