import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

/// Staleness comes from the archive's modification date, against per-type thresholds.
struct StalenessTests {
    // About the archive file's date: its own file.
    @Test func cachedDateIsTheMomentOfCachingAndTheFileModificationDate() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache()
        let moment = fixture.clock.now
        try cache.cacheItems(MenuItem.sampleMenu(count: 2))
        let cachedDate = try #require(cache.cachedDate(MenuItem.self))
        #expect(abs(cachedDate.timeIntervalSince(moment)) < 0.001)
        let attributes = try FileManager.default.attributesOfItem(atPath: fixture.archivePath(MenuItem.self))
        let modified = try #require(attributes[.modificationDate] as? Date)
        #expect(abs(modified.timeIntervalSince(moment)) < 0.001)
    }

    @Test func staleOnlyPastTheThreshold() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        #expect(cache.isStale(MenuItem.self), "missing counts as stale")
        try cache.cacheItems(MenuItem.sampleMenu(count: 2))
        #expect(!cache.isStale(MenuItem.self))
        fixture.clock.advance(by: .seconds(599))  // MenuItem's threshold is 600 s
        #expect(!cache.isStale(MenuItem.self))
        #expect(try cache.cachedCollection(MenuItem.self)?.isStale == false)
        fixture.clock.advance(by: .seconds(2))
        #expect(cache.isStale(MenuItem.self))
        let collection = try #require(try cache.cachedCollection(MenuItem.self))
        #expect(collection.isStale, "stale items are still returned, marked stale")
        #expect(collection.items == MenuItem.sampleMenu(count: 2))
        #expect(collection.age > .seconds(600) && collection.age < .seconds(602))
    }

    // About the archive file's date (another process, a restored backup): its own file.
    @Test func agingTheFileMakesItStale() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache()
        try cache.cacheItems(MenuItem.sampleMenu(count: 2))
        try setModificationDate(fixture.clock.now.addingTimeInterval(-3600), ofFileAt: fixture.archivePath(MenuItem.self))
        #expect(cache.isStale(MenuItem.self))
        let collection = try #require(try cache.cachedCollection(MenuItem.self))
        #expect(collection.isStale)
        #expect(collection.age == .seconds(3600))
        try setModificationDate(fixture.clock.now.addingTimeInterval(-60), ofFileAt: fixture.archivePath(MenuItem.self))
        #expect(!cache.isStale(MenuItem.self))
    }

    /// Written by a process whose clock was ahead: a little is fine, a day is not to be trusted.
    @Test func archivesDatedFarInTheFutureAreStale() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        for (ahead, stale) in [(60.0, false), (86_400, true)] {
            var writer = fixture.configuration()
            writer.clock = CacheClock(now: fixture.clock.now.addingTimeInterval(ahead))
            try AppCache(configuration: writer).cacheItems(MenuItem.sampleMenu(count: 1))
            #expect(cache.isStale(MenuItem.self) == stale, "dated \(ahead) s ahead")
        }
    }

    @Test func thresholdPrecedenceIsOverrideThenTypeThenDefault() throws {
        let fixture = try Fixture()
        var configuration = fixture.configuration()
        configuration.defaultStalenessThreshold = .seconds(100)
        #expect(configuration.stalenessThreshold(for: Plain.self) == .seconds(100))
        #expect(configuration.stalenessThreshold(for: Headline.self) == .seconds(30))
        configuration.setStalenessThreshold(.seconds(5), for: Headline.self)
        #expect(configuration.stalenessThreshold(for: Headline.self) == .seconds(5))
        #expect(configuration.stalenessThresholds["Headlines"] == .seconds(5))

        let cache = try AppCache(configuration: configuration)
        try cache.cacheItems([Plain(value: 1)])
        try cache.cacheItems([Headline(title: "t")])
        fixture.clock.advance(by: .seconds(6))
        #expect(cache.isStale(Headline.self))
        #expect(!cache.isStale(Plain.self))
        fixture.clock.advance(by: .seconds(95))
        #expect(cache.isStale(Plain.self))
    }

    /// `entries()`, `isStale`, `cachedCollection` and `load` give one answer: the reading cache's
    /// configuration decides, whatever threshold the writer recorded.
    @Test func everyAPIJudgesByTheReadersConfiguration() async throws {
        let fixture = try Fixture()
        try fixture.openCache().cacheItems([Plain(value: 1)])  // written under the default hour
        fixture.clock.advance(by: .seconds(120))

        var strict = fixture.configuration()
        strict.setStalenessThreshold(.seconds(60), for: Plain.self)
        for configuration in [strict, fixture.configuration()] {
            let cache = try AppCache(configuration: configuration)
            let expected = configuration.stalenessThreshold(for: Plain.self) == .seconds(60)
            // Listed first, before the type was used: the override by name decides.
            #expect(try await cache.entries().first?.isStale == expected)
            #expect(cache.isStale(Plain.self) == expected)
            #expect(try cache.cachedCollection(Plain.self)?.isStale == expected)
            var loaded: LoadedItems<Plain>?
            for try await answer in cache.load(Plain.self, policy: .cacheFirst, fetch: { _ in .notModified }) { loaded = answer }
            #expect(loaded?.isStale == expected)
            #expect(try await cache.entries().first?.isStale == expected)
        }
    }

    @Test func rewritingRefreshesTheDate() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try cache.cacheItems(MenuItem.sampleMenu(count: 1))
        fixture.clock.advance(by: .seconds(1000))
        #expect(cache.isStale(MenuItem.self))
        try cache.cacheItems(MenuItem.sampleMenu(count: 1))
        #expect(!cache.isStale(MenuItem.self))
    }
}
