import AppCacheKit
import Foundation
import MenuModel

/// Shows that each user's cached collections live apart: one user never sees another's, and
/// switching back finds them again.
@main
struct SwitchUser {
    static func main() {
        do {
            let root = try rootDirectory(from: Array(CommandLine.arguments.dropFirst()))
            try run(root: root)
        } catch {
            FileHandle.standardError.write(Data("switch-user: \(error)\nusage: switch-user [--root DIR]\n".utf8))
            exit(error is UsageError ? 2 : 1)
        }
    }

    static func run(root: URL) throws {
        let cache = try AppCache(configuration: .init(rootDirectory: root, schemaVersion: "1", user: "alice"))
        print("Cache root: \(root.path(percentEncoded: false))")

        try cache.cacheItems(MenuItem.sampleMenu(count: 3, seed: 1))
        report(cache, "cached 3 items")

        try cache.switchUser(to: "bob")
        report(cache, "switched")
        try cache.cacheItems(MenuItem.sampleMenu(count: 5, seed: 2))
        report(cache, "cached 5 items")

        try cache.switchUser(to: nil)
        report(cache, "signed out")

        try cache.switchUser(to: "alice")
        report(cache, "switched back")

        try cache.removeAll()
        report(cache, "removed all of alice's items")

        try cache.switchUser(to: "bob")
        report(cache, "switched")

        // Switches and removals write and delete on the cache's own thread, so the caller never
        // waits for the disk; a flush waits for all of it to land.
        try cache.flush()
        print("On disk:")
        // As the inspector lists them (small archives share their user's pack).
        let rootPath = root.path(percentEncoded: false)
        for archive in ((try? CacheRootListing.read(root: root).archives) ?? []).sorted(by: { $0.path < $1.path }) {
            print("  \(archive.path.dropFirst(rootPath.count).drop { $0 == "/" })")
        }
    }

    static func report(_ cache: AppCache, _ action: String) {
        let who = cache.user ?? "(signed out)"
        let items = (try? cache.getCachedItems(MenuItem.self)) ?? nil
        let seen = items.map { "sees \($0.count) items: \($0.map(\.name).joined(separator: ", "))" } ?? "sees no cached items"
        print("\(who): \(action); \(seen)")
    }

    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    static func rootDirectory(from arguments: [String]) throws -> URL {
        switch arguments.count {
        case 0:
            let root = FileManager.default.temporaryDirectory.appending(path: "switch-user-\(UUID().uuidString)")
            return root
        case 2 where arguments[0] == "--root":
            return URL(filePath: arguments[1], directoryHint: .isDirectory)
        default:
            throw UsageError(description: "unexpected arguments: \(arguments.joined(separator: " "))")
        }
    }
}
