import AppCacheKit
import Foundation
import MenuModel

/// A normal exit racing a cache's `deinit` on another thread: the child caches many dirty
/// collections, lets the last reference to its cache go on a background thread (so `deinit`
/// writes them there) and calls `exit(0)` right after. Every collection must be on disk: the
/// exit waits for a cache being deinitialised, not only for live ones.
struct ExitMode {
    let base: URL
    let quick: Bool
    let report: Report

    var episodes: Int { quick ? 6 : 60 }
    static let collections = 200

    func run() throws {
        for episode in 0..<episodes {
            let root = base.appending(path: "exit-\(episode)", directoryHint: .isDirectory)
            let child = try ChildProcess(arguments: [
                "--child", "exit-race", "--root", root.path(percentEncoded: false),
                "--collections", String(Self.collections), "--pause-microseconds", String(episode % 6 * 400),
            ])
            report.episodes += 1
            if !child.wait(timeout: 120) { report.violation("exit \(episode): the child hung") }
            if !child.exitedCleanly { report.violation("exit \(episode): the child ended with \(child.termination)") }
            var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: "exit")
            configuration.flushesAtExit = false
            let cache = try AppCache(configuration: configuration)
            var missing = 0
            for index in 0..<Self.collections {
                report.operations += 1
                if try cache.getCachedItems(MenuItem.self, forKey: "k\(index)") != MenuItem.sampleMenu(count: 20, seed: index) {
                    missing += 1
                }
            }
            if missing > 0 {
                report.violation("exit \(episode): \(missing) of \(Self.collections) collections lost when the process exited while the cache was being deinitialised")
            }
        }
    }
}

/// The child side of the exit mode.
enum ExitRace {
    static func run(root: URL, collections: Int, pause: UInt32) throws -> Never {
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: "exit")
        configuration.writeBackDelay = nil
        configuration.memoryEntryLimit = collections + 1
        configuration.memoryByteLimit = 1 << 30
        configuration.observesApplicationLifecycle = false
        let holder = Shared<AppCache?>(try AppCache(configuration: configuration))
        for index in 0..<collections {
            try holder.withLock { try $0?.cacheItems(MenuItem.sampleMenu(count: 20, seed: index), forKey: "k\(index)") }
        }
        let released = DispatchSemaphore(value: 0)
        Thread {
            released.signal()
            holder.withLock { $0 = nil }  // the last reference: deinit writes on this thread
        }.start()
        released.wait()
        usleep(pause)
        exit(0)
    }
}
