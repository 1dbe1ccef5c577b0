@_spi(Benchmarks) import AppCacheKit
import Foundation
import MenuModel

/// A menu item as a later release stores it: allergens added, model schema version 2, with an
/// upgrade from version 1 (the sample `MenuItem`'s shape).
struct UpgradedMenuItem: CacheableModel {
    var itemId: String
    var imageURL: URL
    var name: String
    var spicyLevel: Int
    var rating: Double
    var itemDescription: String
    var waitingTime: Int
    var reviewCount: Int
    var allergens: [String]

    static var cacheName: String { "MenuItems" }
    static var schemaVersion: Int { 2 }
    static var upgrades: [ModelUpgrade<UpgradedMenuItem>] {
        [ModelUpgrade(from: 1, decoding: MenuItem.self) { UpgradedMenuItem($0) }]
    }

    init(_ old: MenuItem) {
        (itemId, imageURL, name, spicyLevel) = (old.itemId, old.imageURL, old.name, old.spicyLevel)
        (rating, itemDescription, waitingTime, reviewCount) = (old.rating, old.itemDescription, old.waitingTime, old.reviewCount)
        allergens = []
    }
}

extension Scenarios {
    /// An upgrade read (an archive of model version 1 read as version 2: decode of the old
    /// shape, conversion, and the encoding that writes it back) beside a plain read of the same
    /// 100 items stored in the current version, each from a fresh instance.
    func upgrade() throws {
        let oldRoot = root("upgrade-old")
        let currentRoot = root("upgrade-current")
        // The old root's archive is a file of its own, so that each run can put its version 1
        // bytes back.
        var settings = configuration(oldRoot)
        settings.packLimit = 0
        try AppCache(configuration: settings).cacheItems(menu)  // version 1, flushed by deinit
        try AppCache(configuration: configuration(currentRoot)).cacheItems(menu.map(UpgradedMenuItem.init))
        let archive = "version-1/user-bench/MenuItems.archive"
        let oldPath = oldRoot.appending(path: archive)
        let oldBytes = try Data(contentsOf: oldPath)
        let count = quick ? 10 : 60
        settings.writeBackDelay = nil  // the write-back happens in deinit, after the timed read
        let upgraded = try Measurement.each(
            runs: count,
            setup: { () throws -> AppCache in
                // The version 1 archive again (the last run's instance wrote version 2 over it).
                try oldBytes.write(to: oldPath)
                return try AppCache(configuration: settings)
            }
        ) { cache in
            blackHole(try cache.getCachedItems(UpgradedMenuItem.self))
        }
        let plain = try Measurement.each(runs: count, setup: { try AppCache(configuration: configuration(currentRoot)) }) { cache in
            blackHole(try cache.getCachedItems(UpgradedMenuItem.self))
        }
        report.add(
            "upgrade: getCachedItems of 100 menu items from a fresh instance, the archive of an older model version",
            subject: ("upgrade read (old decode, convert, re-encode)", upgraded),
            baselines: [("plain read of the same items in the current version", plain)],
            goal: ("plain read of the same items in the current version", 3.0))
    }
}
