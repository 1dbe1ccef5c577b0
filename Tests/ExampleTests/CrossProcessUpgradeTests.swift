import AppCacheKit
import AppCacheTestSupport
import Foundation
import Testing

/// A model upgrade with two processes on one root: this one upgrades an archive in memory, the
/// `schema-bump` example (another process) upgrades and writes its own; each reads correct
/// items, and the one written last stands.
struct CrossProcessUpgradeTests {
    /// The example's release 1 dish, as this process writes it.
    struct OldDish: CacheableModel {
        var name: String
        var price: Double
        static var cacheName: String { "Dishes" }
    }

    /// The example's release 3 dish, with its upgrade from version 1.
    struct Dish: CacheableModel, Equatable {
        var name: String
        var priceCents: Int
        var allergens: [String]
        static var cacheName: String { "Dishes" }
        static var schemaVersion: Int { 3 }
        static var upgrades: [ModelUpgrade<Dish>] {
            [ModelUpgrade(from: 1, decoding: Legacy.self) { Dish(name: $0.name, priceCents: Int(($0.price * 100).rounded()), allergens: []) }]
        }

        struct Legacy: Decodable, Sendable {
            var name: String
            var price: Double
        }
    }

    @Test func eachProcessReadsCorrectItemsWhicheverUpgradesFirst() async throws {
        let scratch = try ExampleTests.Scratch()
        let root = URL(filePath: scratch.cacheRoot, directoryHint: .isDirectory)
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: "alice")
        configuration.writeBackDelay = nil
        configuration.flushesAtExit = false
        try AppCache(configuration: configuration).cacheItems([OldDish(name: "Mee", price: 7.25)], forKey: "lunch")
        let cache = try AppCache(configuration: configuration)
        #expect(try cache.getCachedItems(Dish.self, forKey: "lunch") == [Dish(name: "Mee", priceCents: 725, allergens: [])])

        // The other process caches lunch as release 1 again, then upgrades and writes it back
        // as release 3, while this one's upgrade waits in memory.
        let run = try await ExampleProgram(name: "schema-bump").run(["--root", scratch.cacheRoot, "--part", "upgrade"], scratch: scratch.url)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("lunch under release 3: Laksa 1250¢, Roti 400¢"))

        let expected = [Dish(name: "Laksa", priceCents: 1250, allergens: []), Dish(name: "Roti", priceCents: 400, allergens: [])]
        #expect(try cache.getCachedItems(Dish.self, forKey: "lunch") == expected, "the other process's newer write is read")
        try cache.flush()  // this one's older upgrade does not overwrite it
        let fresh = try AppCache(configuration: configuration)
        #expect(try fresh.getCachedItems(Dish.self, forKey: "lunch") == expected)
        let listing = try CacheRootListing.read(root: root)
        #expect(listing.archives.filter { $0.cacheName == "Dishes" }.allSatisfy { $0.modelSchemaVersion == 3 })
    }
}
