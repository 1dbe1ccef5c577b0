import AppCacheKit
import Foundation
import MenuModel

/// Shows what happens to cached data when the app ships a new cache schema version: the old
/// version's data, of every user, is wiped when the cache opens, and the new version starts
/// empty instead of decoding archives of a shape it no longer knows.
@main
struct SchemaBump {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let root: URL
        switch arguments.count {
        case 0: root = FileManager.default.temporaryDirectory.appending(path: "schema-bump-\(UUID().uuidString)")
        case 2 where arguments[0] == "--root": root = URL(filePath: arguments[1], directoryHint: .isDirectory)
        default:
            FileHandle.standardError.write(Data("usage: schema-bump [--root DIR]\n".utf8))
            exit(2)
        }
        do {
            try run(root: root)
        } catch {
            FileHandle.standardError.write(Data("schema-bump: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run(root: URL) throws {
        print("Cache root: \(root.path(percentEncoded: false))")

        let old = try AppCache(configuration: .init(rootDirectory: root, schemaVersion: "1.0", user: "alice"))
        try old.cacheItems(MenuItem.sampleMenu(count: 4))
        try old.switchUser(to: "bob")
        try old.cacheItems(MenuItem.sampleMenu(count: 2))
        try old.flush()
        print("App 1.0 cached menus for alice and bob, and flushed them to disk.")
        list(root)

        print("App 2.0 opens the cache with schema version 2.0.")
        let new = try AppCache(configuration: .init(rootDirectory: root, schemaVersion: "2.0", user: "alice"))
        let items = try new.getCachedItems(MenuItem.self)
        print("alice under 2.0: \(items.map { "\($0.count) cached items" } ?? "no cached items (the 1.0 data was wiped)")")
        list(root)

        try new.cacheItems(MenuItem.sampleMenu(count: 3))
        try new.flush()
        print("App 2.0 cached a fresh menu for alice, and flushed it to disk.")
        list(root)
    }

    static func list(_ root: URL) {
        let files = FileManager.default.enumerator(atPath: root.path(percentEncoded: false))?.allObjects as? [String] ?? []
        let archives = files.filter { $0.hasSuffix(".archive") }.sorted()
        print("  on disk: \(archives.isEmpty ? "(nothing)" : archives.joined(separator: ", "))")
    }
}
