import AppCacheKit
import Foundation
import MenuModel

/// Shows the memory layer at work: a small memory budget fills up, the least recently used
/// menus spill to disk with the dates they were cached, a memory warning empties memory, and
/// everything reads back from disk.
@main
struct SpillToDisk {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let root: URL
        switch arguments.count {
        case 0: root = FileManager.default.temporaryDirectory.appending(path: "spill-to-disk-\(UUID().uuidString)")
        case 2 where arguments[0] == "--root": root = URL(filePath: arguments[1], directoryHint: .isDirectory)
        default:
            FileHandle.standardError.write(Data("usage: spill-to-disk [--root DIR]\n".utf8))
            exit(2)
        }
        do {
            try run(root: root)
        } catch {
            FileHandle.standardError.write(Data("spill-to-disk: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run(root: URL) throws {
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: "chef")
        configuration.memoryEntryLimit = 3         // room for three menus
        configuration.writeBackDelay = nil         // write only when memory must let go
        let cache = try AppCache(configuration: configuration)
        print("Cache root: \(root.path(percentEncoded: false))")
        print("Memory holds at most \(configuration.memoryEntryLimit) collections; nothing is written until it must be.")

        let start = Date()
        let restaurants = ["harbour", "garden", "rooftop", "lobby", "terrace"]
        for (index, restaurant) in restaurants.enumerated() {
            try cache.cacheItems(MenuItem.sampleMenu(count: 10 + index, seed: index), forKey: restaurant)
            print("cached \(restaurant) (\(10 + index) items)")
            // The menu memory let go of is written on the cache's own thread: `cacheItems`
            // returned without waiting for the disk. Wait for it here, to show it.
            waitUntil { cache.memoryStatistics.spills == max(0, index - 2) }
            printState(cache, root: root, start: start)
            // Menus cached a moment apart, so their archive dates differ.
            Thread.sleep(forTimeInterval: 0.05)
        }

        print("memory warning")
        cache.didReceiveMemoryWarning()
        waitUntil { cache.memoryStatistics.entries == 0 }  // written in the background, too
        printState(cache, root: root, start: start)

        print("reading every menu back")
        for restaurant in restaurants {
            let items = try cache.getCachedItems(MenuItem.self, forKey: restaurant)
            print("  \(restaurant): \(items.map { "\($0.count) items" } ?? "missing")")
        }
        printState(cache, root: root, start: start)
    }

    /// Waits (up to ten seconds) until `condition` holds.
    static func waitUntil(_ condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(10)
        while !condition() && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.002)
        }
    }

    static func printState(_ cache: AppCache, root: URL, start: Date) {
        print("  memory: \(cache.memoryStatistics)")
        // What is on disk, as the inspector reads it (small archives share their user's pack).
        let rootPath = root.path(percentEncoded: false)
        let archives = ((try? CacheRootListing.read(root: root).archives) ?? []).sorted { $0.path < $1.path }
        if archives.isEmpty {
            print("  disk: (no archives)")
        }
        for archive in archives {
            let file = archive.path.dropFirst(rootPath.count).drop { $0 == "/" }
            let offset = String(format: "+%.2f s", archive.cachedDate.timeIntervalSince(start))
            print("  disk: \(file)  modified \(offset) (when it was cached)")
        }
    }
}
