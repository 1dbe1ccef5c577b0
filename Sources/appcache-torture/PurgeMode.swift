import AppCacheKit
import MenuModel
import Foundation

/// The cache's directories deleted under it: two instances on one root write, read and flush
/// from several threads while a purger deletes the root, deletes the version directory, or
/// renames it away as a wipe's trash, at random moments (as iOS empties `Library/Caches` and
/// "clear cache" tools do).
///
/// Checks that every read is a whole collection of its key or a miss; that once the purger
/// stops, a flush of each instance succeeds and every collection it holds dirty reaches disk
/// (a fresh instance reads exactly the last items each writer cached); and that nothing is
/// written into a directory the purger renamed away, once the batch under way at the rename
/// has had time to end.
struct PurgeMode {
    let base: URL
    let quick: Bool
    let report: Report
    var random: SeededRandom

    var episodes: Int { quick ? 6 : 60 }
    static let writersPerInstance = 2
    static let keysPerWriter = 6

    mutating func run() throws {
        for episode in 0..<episodes {
            let root = base.appending(path: "purge-\(episode)", directoryHint: .isDirectory)
            try runEpisode(episode, root: root, seed: random.next())
            report.episodes += 1
        }
    }

    private func configuration(_ root: URL) -> AppCache.Configuration {
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: "purge")
        configuration.writeBackDelay = .milliseconds(5)
        configuration.flushesAtExit = false
        configuration.observesApplicationLifecycle = false
        return configuration
    }

    private func runEpisode(_ episode: Int, root: URL, seed: UInt64) throws {
        let instances = [try AppCache(configuration: configuration(root)), try AppCache(configuration: configuration(root))]
        let stop = Shared(false)
        let lastWritten = Shared<[String: Int]>([:])
        let trashes = Shared<[(path: String, listing: [String])]>([])
        let report = report
        let versionPath = root.path(percentEncoded: false) + "/version-1"
        let purger = Thread {
            var random = SeededRandom(seed: seed)
            var round = 0
            while !stop.withLock({ $0 }) {
                usleep(UInt32(500 + random.next() % 4_000))
                round += 1
                switch random.next() % 3 {
                case 0:
                    try? FileManager.default.removeItem(at: root)
                case 1:
                    try? FileManager.default.removeItem(atPath: versionPath)
                default:
                    let trash = root.path(percentEncoded: false) + "/.wipe-purge-\(round)"
                    guard (try? FileManager.default.moveItem(atPath: versionPath, toPath: trash)) != nil else { continue }
                    // A batch under way at the rename may finish inside it; none may start there.
                    usleep(200_000)
                    let listing = (try? FileManager.default.subpathsOfDirectory(atPath: trash))?.sorted() ?? []
                    trashes.withLock { $0.append((trash, listing)) }
                }
            }
        }
        purger.start()
        DispatchQueue.concurrentPerform(iterations: instances.count * Self.writersPerInstance) { worker in
            let cache = instances[worker % instances.count]
            for step in 0..<(quick ? 150 : 600) {
                let key = "w\(worker)-k\(step % Self.keysPerWriter)"
                let sequence = step
                do {
                    if step % 3 == 2 {
                        if let items = try cache.getCachedItems(TortureItem.self, forKey: key),
                            let problem = TortureItem.problem(with: items, user: "purge", key: key) {
                            report.violation("purge \(episode): a read of \(key) returned \(problem)")
                        }
                    } else {
                        try cache.cacheItems(TortureItem.collection(user: "purge", key: key, sequence: sequence), forKey: key)
                        lastWritten.withLock { $0[key] = sequence }
                    }
                    if step % 25 == 24 { try? cache.flush() }  // may meet a purge mid-way: retried below
                } catch {
                    report.violation("purge \(episode): \(key) step \(step) threw \(error)")
                }
                report.operations += 1
            }
        }
        stop.withLock { $0 = true }
        while !purger.isFinished { usleep(1_000) }
        for (index, cache) in instances.enumerated() {
            do {
                try cache.flush()
            } catch {
                report.violation("purge \(episode): instance \(index)'s flush after the purges failed: \(error)")
            }
        }
        // Dirty collections all reached disk: the last write of every key is what a fresh
        // instance reads, unless a purge deleted it after it was written (then a miss).
        let fresh = try AppCache(configuration: configuration(root))
        var lost = 0
        for (key, sequence) in lastWritten.withLock({ $0 }) {
            guard let items = try fresh.getCachedItems(TortureItem.self, forKey: key) else { continue }
            if let problem = TortureItem.problem(with: items, user: "purge", key: key) {
                report.violation("purge \(episode): \(key) on disk is \(problem)")
            } else if items[0].sequence != sequence {
                lost += 1
            }
        }
        // Collections written before the last purge and not since may be gone; any that is
        // there must be the last write (a flush writes what memory holds, newest first).
        if lost > 0 { report.violation("purge \(episode): \(lost) keys hold an older write than the last one cached") }
        for trash in trashes.withLock({ $0 }) {
            let now = (try? FileManager.default.subpathsOfDirectory(atPath: trash.path))?.sorted() ?? []
            let written = Set(now).subtracting(trash.listing)
            if !written.isEmpty {
                report.violation("purge \(episode): \(written.count) files were written into \(trash.path) after it left the layout: \(written.prefix(3))")
            }
        }
        _ = instances
    }
}
