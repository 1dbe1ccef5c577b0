import Foundation
import Testing
@_spi(Benchmarks) @testable import AppCacheKit

/// Item counts per archive and the per-type sums of `appcache-inspect --stats`, on a root with
/// several types and users, archive files and pack records, both codecs, a stale collection and
/// a damaged one.
struct CacheRootStatisticsTests {
    /// The root: alice (archive files) has Plains (3 items, cached two hours before the rest;
    /// 2 items under "b", damaged) and Headlines (1 item, a 30 s threshold); bob (his pack) has
    /// 4 Plains under "p"; the shared space 5 Plains as JSON. Ages are taken a minute after the
    /// later writes.
    struct Sample {
        let fixture: Fixture
        let damaged: String

        init() throws {
            // Files for alice and the shared space (one is damaged in place), a pack for bob.
            fixture = try Fixture(layout: .filePerCollection)
            let alice = try fixture.openCache(user: "alice")
            try alice.cacheItems((1...3).map { Plain(value: $0) })
            fixture.clock.advance(by: .seconds(7200))
            try alice.cacheItems([Plain(value: 1), Plain(value: 2)], forKey: "b")
            try alice.cacheItems([Headline(title: "Extra, extra")])

            var packed = fixture.configuration(user: "bob")
            packed.packLimit = PackTable.defaultLimit
            try AppCache(configuration: packed).cacheItems((1...4).map { Plain(value: $0) }, forKey: "p")
            var json = fixture.configuration(user: nil)
            json.payloadCodec = .json
            try AppCache(configuration: json).cacheItems((1...5).map { Plain(value: $0) })
            fixture.clock.advance(by: .seconds(60))

            // The last byte of alice's "b" (its key table's offset): its framing and checksum fail.
            damaged = fixture.archivePath(Plain.self, key: "b")
            let cachedDate = try #require(try FileManager.default.attributesOfItem(atPath: damaged)[.modificationDate] as? Date)
            var bytes = try Data(contentsOf: URL(filePath: damaged))
            bytes[bytes.count - 1] ^= 0x40
            try bytes.write(to: URL(filePath: damaged))
            try setModificationDate(cachedDate, ofFileAt: damaged)
        }

        func listing(verify: Bool) throws -> CacheRootListing {
            try CacheRootListing.read(root: fixture.root, verifyChecksums: verify)
        }
    }

    @Test(arguments: [false, true])
    func eachArchiveShowsItsItemCount(verify: Bool) throws {
        let sample = try Sample()
        let listing = try sample.listing(verify: verify)
        func archive(_ user: String?, _ cacheName: String, _ key: String?) -> CacheRootListing.Archive? {
            listing.archives.first { $0.user == user && $0.cacheName == cacheName && $0.key == key }
        }
        #expect(listing.archives.count == 5)
        #expect(archive("alice", "Plains", nil)?.itemCount == 3)
        #expect(archive("alice", "Headlines", nil)?.itemCount == 1)
        #expect(archive("bob", "Plains", "p")?.itemCount == 4)
        #expect(archive("bob", "Plains", "p")?.isPacked == true)
        #expect(archive(nil, "Plains", nil)?.itemCount == 5, "a JSON payload's array")
        let damaged = try #require(archive("alice", "Plains", "b"))
        #expect(damaged.itemCount == nil, "damaged framing: unknown, no guess")
        #expect(damaged.checksumVerified == (verify ? false : nil))
        #expect(damaged.path == sample.damaged)
    }

    @Test func sumsPerTypeVersionAndUser() throws {
        let sample = try Sample()
        let listing = try sample.listing(verify: true)
        let statistics = listing.statistics(at: sample.fixture.clock.now)
        #expect(statistics.date == sample.fixture.clock.now)
        #expect(statistics.groups.map { "\($0.schemaVersion) \($0.user ?? "(shared)") \($0.cacheName)" } == [
            "1 (shared) Plains", "1 alice Headlines", "1 alice Plains", "1 bob Plains",
        ])
        let alicePlains = statistics.groups[2].totals
        #expect(alicePlains.collections == 2, "the damaged one counts")
        #expect(alicePlains.items == 3)
        #expect(alicePlains.collectionsWithUnknownItemCount == 1)
        let aliceFiles = [sample.fixture.archivePath(Plain.self), sample.damaged]
        #expect(alicePlains.bytes == aliceFiles.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0) })
        #expect(alicePlains.oldest?.key == nil)
        #expect(alicePlains.oldest?.cachedDate == sample.fixture.clock.now.addingTimeInterval(-7260))

        let total = statistics.total
        #expect(total.collections == 5)
        #expect(total.items == 3 + 1 + 4 + 5)
        #expect(total.collectionsWithUnknownItemCount == 1)
        #expect(total.bytes == listing.archives.reduce(0) { $0 + $1.bytes })
        #expect(statistics.groups.reduce(0) { $0 + $1.totals.bytes } == total.bytes)
        #expect(total.oldest?.user == "alice" && total.oldest?.key == nil && total.oldest?.cacheName == "Plains")
        #expect(statistics.unreadableFiles == 0)

        // Stalest: alice's Plains, 2 h 1 min old against the hour it was written with; the
        // headline is a minute old against 30 s; the rest are fresh.
        let stalest = try #require(total.stalest)
        #expect(stalest.archive.user == "alice" && stalest.archive.cacheName == "Plains" && stalest.archive.key == nil)
        #expect(stalest.threshold == .seconds(3600))
        #expect(stalest.overdue == .seconds(3660))
        let headline = try #require(statistics.groups[1].totals.stalest)
        #expect(headline.threshold == .seconds(30) && headline.overdue == .seconds(30))
        #expect(statistics.groups[0].totals.stalest == nil && statistics.groups[3].totals.stalest == nil)
    }

    @Test func aThresholdForAllJudgesEveryArchiveByIt() throws {
        let sample = try Sample()
        let statistics = try sample.listing(verify: false).statistics(at: sample.fixture.clock.now, threshold: .seconds(10))
        #expect(statistics.total.stalest?.overdue == .seconds(7250))
        #expect(statistics.groups.map { $0.totals.stalest?.overdue } == [.seconds(50), .seconds(50), .seconds(7250), .seconds(50)])
        #expect(statistics.groups[2].totals.items == 3 && statistics.groups[2].totals.collectionsWithUnknownItemCount == 1, "unverified, the damaged framing is still unknown")
    }

    @Test func anEmptyRootSumsToNothing() throws {
        let fixture = try Fixture()
        _ = try fixture.openCache()
        let junk = fixture.layout().userPath("alice")
        try FileManager.default.createDirectory(atPath: junk, withIntermediateDirectories: true)
        try Data("junk".utf8).write(to: URL(filePath: junk + "/junk.archive"))
        let statistics = try CacheRootListing.read(root: fixture.root).statistics()
        #expect(statistics.groups.isEmpty)
        #expect(statistics.total == CacheRootStatistics.Totals())
        #expect(statistics.unreadableFiles == 1, "a file that is no archive has no type: counted apart")
    }
}
