import AppCacheKit
import Foundation
import MenuModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The child a system-call count traces (`strace -f`): opens a write-through cache, writes one
/// collection once so that every file it keeps open is open, then writes it `count` times
/// between two markers, `write(-1, "probe-begin")` and `write(-1, "probe-end")`, which fail
/// with `EBADF` and show in the trace, so that the count holds the writes and nothing else.
enum SyscallProbe {
    static let beginMarker = "probe-begin"
    static let endMarker = "probe-end"

    static func run(root: URL, count: Int, items: Int) throws {
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: "probe")
        configuration.writeBackDelay = .zero
        configuration.flushesAtExit = false
        let cache = try AppCache(configuration: configuration)
        let menus = (0...count).map { MenuItem.sampleMenu(count: items, seed: $0) }
        try cache.cacheItems(menus[0], forKey: "probe")
        mark(beginMarker)
        for menu in menus.dropFirst() {
            try cache.cacheItems(menu, forKey: "probe")
        }
        mark(endMarker)
        // The probe's writes must be what a reader gets.
        guard try cache.getCachedItems(MenuItem.self, forKey: "probe") == menus.last else {
            emit("VIOLATION the probe's last write did not read back")
            exit(1)
        }
    }

    /// A change to the menu, for the outbox.
    struct Rename: CacheMutation {
        static let mutationName = "rename"
        var name: String
        var key: String? { "probe" }
        func apply(to items: inout [MenuItem]) {
            if !items.isEmpty { items[0].name = name }
        }
    }

    /// The child an in-memory cache is traced in: between the markers it opens an in-memory
    /// cache and does what an app's tests do (small and large collections, a flush, a
    /// relaunch, a queued change, a switch and removal of users, a wipe by a new schema
    /// version), reading back what it wrote. The trace must show no call on a file. With
    /// `root`, the same on disk there (what shows that the trace would see the calls).
    static func runInMemory(items: Int, onDiskAt root: URL? = nil) throws {
        // The runtime's own first uses (the device's memory, the bundle) before the markers.
        _ = try AppCache(configuration: .inMemory()).getCachedItems(MenuItem.self)
        mark(beginMarker)
        let small = MenuItem.sampleMenu(count: 1, seed: 1)
        let large = MenuItem.sampleMenu(count: items, seed: 2)
        var configuration = root.map { AppCache.Configuration.testing(rootDirectory: $0, user: "probe") } ?? .inMemory(user: "probe")
        configuration.writeBackDelay = .seconds(60)
        do {
            let cache = try AppCache(configuration: configuration)
            try cache.cacheItems(small, forKey: "probe")
            try cache.cacheItems(large, forKey: "large")
            cache.registerMutationKind(Rename.self)
            _ = try cache.enqueue(Rename(name: "renamed"))
            try cache.flush()
        }
        let relaunched = try AppCache(configuration: configuration)
        relaunched.registerMutationKind(Rename.self)
        var expected = small
        expected[0].name = "renamed"
        guard try relaunched.getCachedItems(MenuItem.self, forKey: "probe") == expected,
            try relaunched.getCachedItems(MenuItem.self, forKey: "large") == large,
            relaunched.pendingMutations.count == 1
        else {
            emit("VIOLATION the in-memory cache did not read back what it wrote")
            exit(1)
        }
        try relaunched.switchUser(to: "other")
        try relaunched.cacheItems(small, forKey: "probe")
        try relaunched.removeUser("probe")
        var upgraded = configuration
        upgraded.schemaVersion = "2"
        guard try AppCache(configuration: upgraded).getCachedItems(MenuItem.self, forKey: "probe") == nil else {
            emit("VIOLATION a new schema version read the old one's data")
            exit(1)
        }
        mark(endMarker)
    }

    private static func mark(_ text: String) {
        _ = text.withCString { write(-1, $0, strlen($0)) }
    }
}
