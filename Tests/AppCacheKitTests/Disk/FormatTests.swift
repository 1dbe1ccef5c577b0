import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

/// The archive format of this release: the binary codec by default, JSON on request and still
/// readable, readable file names (with older names migrated once), and the staleness threshold
/// recorded with each collection.
struct FormatTests {
    // Looks at archive files: each collection a file of its own.
    @Test(arguments: PayloadCodec.allCases)
    func eitherCodecWritesArchivesEitherReads(_ codec: PayloadCodec) throws {
        let fixture = try Fixture(layout: .filePerCollection)
        var configuration = fixture.configuration()
        configuration.payloadCodec = codec
        try AppCache(configuration: configuration).cacheItems(FeedPost.sampleFeed(count: 20), forKey: "feed")
        let header = try Data(contentsOf: URL(filePath: fixture.archivePath(FeedPost.self, key: "feed")))
        #expect(header[6] == UInt8(codec.headerValue), "the header names the codec")
        // A cache configured with the other codec reads it all the same.
        var other = fixture.configuration()
        other.payloadCodec = codec == .json ? .binary : .json
        #expect(try AppCache(configuration: other).getCachedItems(FeedPost.self, forKey: "feed") == FeedPost.sampleFeed(count: 20))
    }

    @Test func theBinaryCodecIsTheDefault() {
        #expect(AppCache.Configuration(schemaVersion: "1").payloadCodec == .binary)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    struct Ledger: CacheableModel, Equatable {
        var balance: Int128
        var total: UInt128?
    }

    /// A model with 128-bit integers caches with either codec, and every value comes back from
    /// disk, past 64 bits too.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: PayloadCodec.allCases)
    func modelsWithWideIntegersCacheWithEitherCodec(_ codec: PayloadCodec) throws {
        let fixture = try Fixture()
        var configuration = fixture.configuration()
        configuration.payloadCodec = codec
        let ledgers = [Ledger(balance: .min, total: .max), Ledger(balance: 12, total: nil)]
        try AppCache(configuration: configuration).cacheItems(ledgers)
        #expect(try AppCache(configuration: configuration).getCachedItems(Ledger.self) == ledgers)
        #expect(fixture.diagnostics.errors.isEmpty)
    }

    /// A collection nested deeper than any reader reads back is refused by `cacheItems` with
    /// `encodingFailed`, with either codec, and what was cached under its key stays.
    @Test(arguments: PayloadCodec.allCases)
    func collectionsNestedTooDeepAreRefusedNotCached(_ codec: PayloadCodec) throws {
        let fixture = try Fixture()
        var configuration = fixture.configuration()
        configuration.payloadCodec = codec
        let cache = try AppCache(configuration: configuration)
        let shallow = [BinaryCodecTests.Chain.nested(3)]
        try cache.cacheItems(shallow, forKey: "thread")
        let error = #expect(throws: AppCacheError.self) {
            try cache.cacheItems([BinaryCodecTests.Chain.nested(5_000)], forKey: "thread")
        }
        #expect(error?.code == .encodingFailed)
        #expect(try cache.getCachedItems(BinaryCodecTests.Chain.self, forKey: "thread") == shallow)
        try cache.flush()
        #expect(try AppCache(configuration: configuration).getCachedItems(BinaryCodecTests.Chain.self, forKey: "thread") == shallow)
    }

    // Looks at archive files: each collection a file of its own.
    /// An existing cache whose archives have the first release's names is migrated once, on
    /// open: every collection stays readable under its readable name, and the index is exact.
    @Test func archivesOfTheOldNamingAreMigratedOnce() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        do {
            let cache = try fixture.openCache()
            try cache.cacheItems(MenuItem.sampleMenu(count: 3), forKey: "restaurant 42")
            try cache.cacheItems([Plain(value: 1)])
            try cache.switchUser(to: "Bob")
            try cache.cacheItems([Plain(value: 2)], forKey: "Ü")
        }
        // Put them back under the names the first release gave them, and mark the directory old.
        let old = [
            (fixture.archivePath(MenuItem.self, key: "restaurant 42"), "%4denu%49tems+restaurant%2042.archive"),
            (fixture.archivePath(Plain.self), "%50lains.archive"),
            (fixture.archivePath(Plain.self, key: "Ü", user: "Bob"), "%50lains+%c3%9c.archive"),
        ]
        for (path, name) in old {
            try FileManager.default.moveItem(atPath: path, toPath: (path as NSString).deletingLastPathComponent + "/" + name)
        }
        try setLayoutVersion(0, fixture)

        let cache = try fixture.openCache()
        #expect(try cache.getCachedItems(MenuItem.self, forKey: "restaurant 42") == MenuItem.sampleMenu(count: 3))
        #expect(try cache.getCachedItems(Plain.self) == [Plain(value: 1)])
        #expect(fixture.archiveExists(Plain.self, key: "Ü", user: "Bob"))
        #expect(fixture.allFiles().allSatisfy { !$0.contains("%4d") && !$0.contains("%50") })
        #expect(try cache.bytesOnDisk() == (try fixture.measuredUsage()))
        #expect(fixture.diagnostics.errors.isEmpty)
    }

    /// `entries()` and the inspector judge staleness by the threshold a collection was written
    /// with, as the app that wrote it does, whatever the reader's configuration says.
    @Test func theWritersThresholdJudgesListings() throws {
        let fixture = try Fixture()
        var writer = fixture.configuration()
        writer.setStalenessThreshold(.seconds(600), for: MenuItem.self)
        try AppCache(configuration: writer).cacheItems(MenuItem.sampleMenu(count: 1))
        fixture.clock.advance(by: .seconds(900))  // 15 minutes: stale to the writer
        var reader = fixture.configuration()
        reader.defaultStalenessThreshold = .seconds(3600)
        let extensionCache = try AppCache(configuration: reader)
        #expect(try extensionCache.entries().first?.isStale == true)
        let listed = try CacheRootListing.read(root: fixture.root).archives.first
        #expect(listed?.stalenessThreshold == .seconds(600))
    }

    private func setLayoutVersion(_ version: UInt64, _ fixture: Fixture) throws {
        let handle = try FileHandle(forUpdating: URL(filePath: fixture.layout().versionPath + "/" + ProcessCoordinator.fileName))
        try handle.seek(toOffset: 24)
        try handle.write(contentsOf: withUnsafeBytes(of: version.littleEndian) { Data($0) })
        try handle.close()
    }
}
