import AppCacheKit
import Foundation
import MenuModel

// A dish as three releases of an app stored it. Release 1 kept the price as a Double in
// dollars; release 2 switched to whole cents; release 3, today's, adds allergens. Each release
// has its own type here so that one program can play all three; an app keeps only the current
// type and a small legacy struct per older version it upgrades from.

/// Release 1's dish (model schema version 1).
struct DishRelease1: CacheableModel {
    var name: String
    var price: Double
    static var cacheName: String { "Dishes" }
}

/// Release 2's dish (model schema version 2).
struct DishRelease2: CacheableModel {
    var name: String
    var priceCents: Int
    static var cacheName: String { "Dishes" }
    static var schemaVersion: Int { 2 }
}

/// Today's dish, version 3: reads what releases 1 and 2 cached, converting each straight to the
/// current shape.
struct Dish: CacheableModel {
    var name: String
    var priceCents: Int
    var allergens: [String]

    static var cacheName: String { "Dishes" }
    static var schemaVersion: Int { 3 }
    static var upgrades: [ModelUpgrade<Dish>] {
        [
            ModelUpgrade(from: 1, decoding: LegacyDishV1.self) { old in
                Dish(name: old.name, priceCents: Int((old.price * 100).rounded()), allergens: [])
            },
            ModelUpgrade(from: 2, decoding: LegacyDishV2.self) { old in
                Dish(name: old.name, priceCents: old.priceCents, allergens: [])
            },
        ]
    }

    /// The stored properties of version 1, kept in the app for its upgrade.
    struct LegacyDishV1: Decodable, Sendable {
        var name: String
        var price: Double
    }

    /// The stored properties of version 2.
    struct LegacyDishV2: Decodable, Sendable {
        var name: String
        var priceCents: Int
    }
}

/// Shows both ways an app update changes what is cached:
///
/// 1. **A model changes** (a property renamed, retyped or added): bump the type's
///    `schemaVersion` and declare an upgrade from the old one. People keep what they cached:
///    the first read converts the old archive, keeps its cached date, and writes it back in the
///    new version.
/// 2. **The cache's layout changes** (what is cached under which key, several types at once):
///    bump the configuration's `schemaVersion`. The old version's data, of every user, is
///    wiped when the cache opens, and the new version starts empty.
@main
struct SchemaBump {
    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var root = FileManager.default.temporaryDirectory.appending(path: "schema-bump-\(UUID().uuidString)")
        var part = "all"
        while arguments.count >= 2 {
            let (name, value) = (arguments.removeFirst(), arguments.removeFirst())
            switch name {
            case "--root": root = URL(filePath: value, directoryHint: .isDirectory)
            case "--part" where ["all", "upgrade", "wipe"].contains(value): part = value
            default: arguments = ["?"]
            }
        }
        guard arguments.isEmpty else {
            FileHandle.standardError.write(Data("usage: schema-bump [--root DIR] [--part all|upgrade|wipe]\n".utf8))
            exit(2)
        }
        do {
            if part != "wipe" { try upgradeModels(root: root) }
            if part == "all" { print("") }
            if part != "upgrade" { try wipeLayout(root: root) }
        } catch {
            FileHandle.standardError.write(Data("schema-bump: \(error)\n".utf8))
            exit(1)
        }
    }

    static func configuration(_ root: URL, _ schemaVersion: String, user: String) -> AppCache.Configuration {
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: schemaVersion, user: user)
        configuration.writeBackDelay = nil  // written by flush() only, to show each step
        return configuration
    }

    /// Part 1: releases 1 and 2 cache dishes; release 3 reads both, upgraded.
    static func upgradeModels(root: URL) throws {
        print("Cache root: \(root.path(percentEncoded: false))")
        print("1. A model changes: bump the type's schemaVersion, declare an upgrade")
        let release1 = try AppCache(configuration: configuration(root, "1", user: "alice"))
        try release1.cacheItems([DishRelease1(name: "Laksa", price: 12.5), DishRelease1(name: "Roti", price: 4)], forKey: "lunch")
        try release1.pin(DishRelease1.self, forKey: "lunch")
        try release1.flush()
        let release2 = try AppCache(configuration: configuration(root, "1", user: "alice"))
        try release2.cacheItems([DishRelease2(name: "Rendang", priceCents: 1650)], forKey: "dinner")
        try release2.flush()
        print("Releases 1 and 2 cached alice's lunch (pinned) and dinner.")
        list(root)

        let release3 = try AppCache(configuration: configuration(root, "1", user: "alice"))
        for key in ["lunch", "dinner"] {
            guard let cached = try release3.cachedCollection(Dish.self, forKey: key) else {
                print("  \(key) under release 3: nothing cached")
                continue
            }
            let dishes = cached.items.map { "\($0.name) \($0.priceCents)¢" }.joined(separator: ", ")
            print("  \(key) under release 3: \(dishes) (cached \(ISO8601DateFormatter().string(from: cached.cachedDate)), as before)")
        }
        try release3.flush()
        print("Release 3 read both, upgraded, and wrote them back in model version 3.")
        list(root)
    }

    /// Part 2: a new cache-wide schema version wipes the old one's data.
    static func wipeLayout(root: URL) throws {
        print("2. The cache's layout changes: bump the configuration's schemaVersion")
        let old = try AppCache(configuration: configuration(root, "1", user: "alice"))
        try old.switchUser(to: "bob")
        try old.cacheItems(MenuItem.sampleMenu(count: 2))
        try old.flush()
        print("Cache schema 1 holds alice's dishes and bob's menu.")
        list(root)

        print("App 2.0 opens the cache with schema version 2.")
        let new = try AppCache(configuration: configuration(root, "2", user: "alice"))
        let items = try new.getCachedItems(Dish.self, forKey: "lunch")
        print("alice under 2: \(items.map { "\($0.count) cached dishes" } ?? "no cached dishes (the schema 1 data was wiped)")")
        list(root)

        try new.cacheItems(MenuItem.sampleMenu(count: 3))
        try new.flush()
        print("App 2.0 cached a fresh menu for alice, and flushed it to disk.")
        list(root)
    }

    /// The archives under `root`, each with its model version, as the inspector reads them.
    static func list(_ root: URL) {
        let archives = (try? CacheRootListing.read(root: root).archives) ?? []
        let names = archives.map { archive in
            let relative = archive.path.dropFirst(root.path(percentEncoded: false).count).drop { $0 == "/" }
            return "\(relative) (model v\(archive.modelSchemaVersion))"
        }.sorted()
        print("  on disk: \(names.isEmpty ? "(nothing)" : names.joined(separator: ", "))")
    }
}
