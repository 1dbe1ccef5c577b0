import AppCacheTestSupport
import Foundation
import Testing

@testable import AppCacheKit

/// Declared model upgrades: archives of older versions read as current items, written back
/// once; chains, throwing conversions, newer versions, pinned archives that cannot be read yet,
/// and a model changed without a bump, reported with where decoding failed. Serialized: one test
/// counts the conversions of a type the others convert too.
@Suite(.serialized) struct UpgradeTests {
    // Version 1 of a note: minutes as a Double, named `text`.
    struct NoteV1: Codable, Sendable {
        var text: String
        var minutes: Double
    }

    // Version 2: renamed to `title`, minutes whole.
    struct NoteV2: Codable, Sendable {
        var title: String
        var minutes: Int
    }

    /// Version 3, the current one: tags added. Counts its conversions.
    struct Note: CacheableModel, Equatable {
        var title: String
        var minutes: Int
        var tags: [String]

        static var cacheName: String { "Notes" }
        static var schemaVersion: Int { 3 }
        static var upgrades: [ModelUpgrade<Note>] {
            [
                ModelUpgrade(from: 1, decoding: NoteV1.self) { old in
                    conversions.withLock { $0 += 1 }
                    guard old.minutes >= 0 else { throw InvalidNote() }
                    return Note(title: old.text, minutes: Int(old.minutes.rounded()), tags: [])
                },
                ModelUpgrade(from: 2, decoding: NoteV2.self) { old in
                    conversions.withLock { $0 += 1 }
                    return Note(title: old.title, minutes: old.minutes, tags: ["v2"])
                },
            ]
        }

        static let conversions = TestLock(0)
    }

    struct InvalidNote: Error {}

    static let key = ArchiveKey(user: "alice", cacheName: "Notes", key: "inbox")

    /// Plants an archive of `items` in schema version `version`, cached `age` ago.
    func plant<Old: Encodable>(
        _ fixture: Fixture, _ items: [Old], version: Int64, key: ArchiveKey = key, age: TimeInterval = 600, pinned: Bool = false,
        validators: CacheValidators? = nil, expiry: Date? = nil
    ) throws -> Date {
        let cachedDate = Date(timeIntervalSince1970: (fixture.clock.now.timeIntervalSince1970 - age).rounded())
        var record = ArchiveRecord(
            payload: try PayloadCodec.binary.encodeItems(items), codec: PayloadCodec.binary.headerValue, schemaVersion: version,
            cachedDate: cachedDate, expiry: expiry)
        record.isPinned = pinned
        record.validators = validators
        try fixture.plant(record, forKey: key)
        return cachedDate
    }

    /// The schema version of the archive on disk, and its modification date.
    func archiveOnDisk(_ fixture: Fixture, key: ArchiveKey = key) throws -> (version: Int64, date: Date)? {
        let store = try fixture.store()
        let path = store.layout.archivePath(for: key)
        for version: Int64 in 0...9 {
            if case .found(let record, _) = try store.record(at: path, forKey: key, versions: .only(version)) {
                return (version, record.cachedDate)
            }
        }
        return nil
    }

    @Test func archivesOfBothOlderVersionsReadAsCurrentItemsAndAreWrittenBackOnce() throws {
        let fixture = try Fixture()
        let validators = CacheValidators(etag: "\"v1\"")
        let expiry = fixture.clock.now.addingTimeInterval(86_400)
        let v1Date = try plant(
            fixture, [NoteV1(text: "milk", minutes: 2.6), NoteV1(text: "bread", minutes: 1)], version: 1, pinned: true,
            validators: validators, expiry: expiry)
        let v2Key = ArchiveKey(user: "alice", cacheName: "Notes", key: "work")
        _ = try plant(fixture, [NoteV2(title: "report", minutes: 30)], version: 2, key: v2Key, age: 7200)
        let before = Note.conversions.withLock { $0 }

        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        #expect(try cache.getCachedItems(Note.self, forKey: "inbox") == [
            Note(title: "milk", minutes: 3, tags: []), Note(title: "bread", minutes: 1, tags: []),
        ])
        #expect(try cache.getCachedItems(Note.self, forKey: "work") == [Note(title: "report", minutes: 30, tags: ["v2"])])
        #expect(fixture.diagnostics.errors.isEmpty)

        // Not a refresh: the cached date, staleness, validators, pin and expiry are the original's.
        let inbox = try #require(try cache.cachedCollection(Note.self, forKey: "inbox"))
        #expect(inbox.cachedDate == v1Date)
        #expect(cache.isStale(Note.self, forKey: "work") == (7200 > 3600))
        #expect(try cache.entries().first { $0.key == "inbox" }?.isPinned == true)

        // Written back in the current version by the flush, with the original date.
        try cache.flush()
        #expect(try archiveOnDisk(fixture)?.version == 3)
        #expect(try archiveOnDisk(fixture)?.date == v1Date)
        #expect(try archiveOnDisk(fixture, key: v2Key)?.version == 3)
        let conversionsAfterFirstReads = Note.conversions.withLock { $0 } - before
        #expect(conversionsAfterFirstReads == 3)

        // A relaunch reads the current version: no conversion runs again.
        let reopened = try fixture.openCache()
        #expect(try reopened.getCachedItems(Note.self, forKey: "inbox")?.count == 2)
        #expect(Note.conversions.withLock { $0 } - before == 3, "the conversion ran once")
        let record = try fixture.store().record(at: fixture.store().layout.archivePath(for: Self.key), forKey: Self.key, versions: .only(3))
        guard case .found(let stored, _) = record else {
            Issue.record("no version 3 archive")
            return
        }
        #expect(stored.isPinned && stored.validators == validators && stored.expiry.map { abs($0.timeIntervalSince(expiry)) < 0.002 } == true)
    }

    @Test func withWriteThroughTheUpgradeIsWrittenAtOnce() throws {
        let fixture = try Fixture()
        _ = try plant(fixture, [NoteV2(title: "call", minutes: 5)], version: 2)
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: .zero))
        #expect(try cache.getCachedItems(Note.self, forKey: "inbox") == [Note(title: "call", minutes: 5, tags: ["v2"])])
        cache.store.waitForBackgroundWork()
        #expect(try archiveOnDisk(fixture)?.version == 3)
        #expect(cache.memoryStatistics.dirtyEntries == 0)
    }

    @Test func everyReadPathUpgrades() async throws {
        let fixture = try Fixture()
        _ = try plant(fixture, [NoteV2(title: "a", minutes: 1)], version: 2, age: 60)
        let cache = try fixture.openCache()  // no memory layer: each read goes to the disk first

        var loaded: LoadedItems<Note>?
        for try await answer in cache.load(Note.self, forKey: "inbox", policy: .cacheFirst, fetch: { _ in .notModified }) { loaded = answer }
        #expect(loaded?.items == [Note(title: "a", minutes: 1, tags: ["v2"])])
        #expect(loaded?.isStale == false, "staleness from the original write (a minute ago)")

        let updated = try cache.updateItems(Note.self, forKey: "inbox") { $0.append(Note(title: "b", minutes: 2, tags: [])) }
        #expect(updated.map(\.title) == ["a", "b"])
        #expect(try archiveOnDisk(fixture)?.version == 3)
        #expect(try fixture.openCache().getCachedItems(Note.self, forKey: "inbox")?.map(\.title) == ["a", "b"])
    }

    @Test func aThrowingConversionIsAMissAndRemovesTheArchiveUnlessPinned() throws {
        let fixture = try Fixture()
        _ = try plant(fixture, [NoteV1(text: "bad", minutes: -1)], version: 1)
        let pinnedKey = ArchiveKey(user: "alice", cacheName: "Notes", key: "kept")
        _ = try plant(fixture, [NoteV1(text: "bad", minutes: -1)], version: 1, key: pinnedKey, pinned: true)
        let cache = try fixture.openCache()

        #expect(try cache.getCachedItems(Note.self, forKey: "inbox") == nil)
        #expect(fixture.diagnostics.codes == [.decodingFailed])
        #expect(fixture.diagnostics.errors.first?.underlyingError is InvalidNote)
        #expect(try archiveOnDisk(fixture) == nil, "dropped")

        #expect(try cache.getCachedItems(Note.self, forKey: "kept") == nil)
        #expect(try cache.getCachedItems(Note.self, forKey: "kept") == nil)
        #expect(try archiveOnDisk(fixture, key: pinnedKey)?.version == 1, "a pinned archive stays")
        #expect(fixture.diagnostics.codes == [.decodingFailed, .decodingFailed], "reported once, not on every read")
    }

    /// Chosen: an archive of a newer version (a downgraded app, or an extension of the older
    /// build still running beside the newer app) is never decoded and never removed: the newer
    /// build shares the root and reads it; this build's next write of the collection replaces
    /// it, and the disk budget counts it.
    @Test func anArchiveOfANewerVersionIsAMissLeftInPlace() throws {
        let fixture = try Fixture()
        _ = try plant(fixture, [NoteV2(title: "from the future", minutes: 1)], version: 4)
        let cache = try fixture.openCache()
        #expect(try cache.getCachedItems(Note.self, forKey: "inbox") == nil)
        #expect(try cache.cachedCollection(Note.self, forKey: "inbox") == nil)
        #expect(try archiveOnDisk(fixture)?.version == 4)
        #expect(fixture.diagnostics.errors.isEmpty)
        // Pinning it leaves it as it is too.
        #expect(expectAppCacheError { try cache.pin(Note.self, forKey: "inbox") }?.code == .notCached)
        #expect(try archiveOnDisk(fixture)?.version == 4)
    }

    @Test func aVersionWithNoUpgradeIsRemovedUnlessPinned() throws {
        let fixture = try Fixture()
        _ = try plant(fixture, [NoteV2(title: "old", minutes: 1)], version: 0)
        let pinnedKey = ArchiveKey(user: "alice", cacheName: "Notes", key: "kept")
        _ = try plant(fixture, [NoteV2(title: "old", minutes: 1)], version: 0, key: pinnedKey, pinned: true)
        let cache = try fixture.openCache()
        #expect(try cache.getCachedItems(Note.self, forKey: "inbox") == nil)
        #expect(try archiveOnDisk(fixture) == nil)
        #expect(try cache.getCachedItems(Note.self, forKey: "kept") == nil)
        #expect(try cache.getCachedItems(Note.self, forKey: "kept") == nil)
        #expect(try archiveOnDisk(fixture, key: pinnedKey)?.version == 0)
        #expect(fixture.diagnostics.codes == [.schemaMismatch, .schemaMismatch], "one report each")
        #expect(fixture.diagnostics.errors.last?.message.contains("pinned") == true)
    }

    // A model changed without a bump: `readingMinutes` added, synthesized Codable requires it.
    struct Article: CacheableModel, Equatable {
        var title: String
        static var cacheName: String { "Articles" }
    }

    struct ArticleWithMinutes: CacheableModel, Equatable {
        var title: String
        var readingMinutes: Int = 3
        static var cacheName: String { "Articles" }
    }

    struct ArticleDecodingWithDefault: CacheableModel, Equatable {
        var title: String
        var readingMinutes: Int
        static var cacheName: String { "Articles" }

        init(title: String, readingMinutes: Int) {
            self.title = title
            self.readingMinutes = readingMinutes
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            title = try container.decode(String.self, forKey: .title)
            readingMinutes = try container.decodeIfPresent(Int.self, forKey: .readingMinutes) ?? 3
        }
    }

    @Test func aModelChangedWithoutABumpIsReportedWithWhereAndPinnedArchivesSurvive() throws {
        let fixture = try Fixture()
        let writer = try fixture.openCache()
        try writer.cacheItems([Article(title: "one"), Article(title: "two")], forKey: "pinned")
        try writer.pin(Article.self, forKey: "pinned")
        try writer.cacheItems([Article(title: "three")], forKey: "plain")

        // The app update: a property added, no bump.
        let cache = try fixture.openCache()
        #expect(try cache.getCachedItems(ArticleWithMinutes.self, forKey: "pinned") == nil)
        #expect(try cache.getCachedItems(ArticleWithMinutes.self, forKey: "pinned") == nil)
        #expect(try cache.getCachedItems(ArticleWithMinutes.self, forKey: "plain") == nil)
        #expect(fixture.diagnostics.codes == [.modelMismatch, .modelMismatch], "once per archive, not per read")
        let report = try #require(fixture.diagnostics.errors.first)
        #expect(report.message.contains("ArticleWithMinutes"))
        #expect(report.message.contains("`items[0].readingMinutes`: missing"))
        #expect(report.key == "pinned" && report.cacheName == "Articles")
        #expect(fixture.hasArchive(ArticleWithMinutes.self, key: "pinned"), "the pinned archive is kept")
        #expect(!fixture.hasArchive(ArticleWithMinutes.self, key: "plain"), "an unpinned one is removed")

        // The app learns and decodes the old archives with a default: the pinned items are back.
        let fixed = try fixture.openCache()
        #expect(try fixed.getCachedItems(ArticleDecodingWithDefault.self, forKey: "pinned") == [
            ArticleDecodingWithDefault(title: "one", readingMinutes: 3), ArticleDecodingWithDefault(title: "two", readingMinutes: 3),
        ])
    }

    @Test func twoInstancesReadCorrectItemsWhicheverUpgradesFirst() throws {
        let fixture = try Fixture()
        let date = try plant(fixture, [NoteV2(title: "shared", minutes: 4)], version: 2)
        let app = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        let widget = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        let expected = [Note(title: "shared", minutes: 4, tags: ["v2"])]
        #expect(try app.getCachedItems(Note.self, forKey: "inbox") == expected)
        #expect(try widget.getCachedItems(Note.self, forKey: "inbox") == expected)
        try widget.flush()
        #expect(try archiveOnDisk(fixture)?.version == 3)
        try app.flush()
        #expect(try app.getCachedItems(Note.self, forKey: "inbox") == expected)
        #expect(try fixture.openCache().getCachedItems(Note.self, forKey: "inbox") == expected)
        #expect(try archiveOnDisk(fixture)?.date == date)

        // A write after one instance's upgrade is not undone by the other's pending one.
        let key = ArchiveKey(user: "alice", cacheName: "Notes", key: "later")
        _ = try plant(fixture, [NoteV2(title: "old", minutes: 1)], version: 2, key: key)
        #expect(try app.getCachedItems(Note.self, forKey: "later")?.first?.title == "old")  // upgraded, dirty
        try widget.cacheItems([Note(title: "newest", minutes: 9, tags: [])], forKey: "later")
        try widget.flush()
        try app.flush()
        #expect(try app.getCachedItems(Note.self, forKey: "later")?.first?.title == "newest")
        #expect(try fixture.openCache().getCachedItems(Note.self, forKey: "later")?.first?.title == "newest")
    }
}
