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

    private static func mark(_ text: String) {
        _ = text.withCString { write(-1, $0, strlen($0)) }
    }
}
