import AppCacheKit
import Foundation
import MenuModel

/// The child that counts its threads around `watch` streams (a process of its own, so that
/// nothing else adds threads meanwhile): opens a cache, starts `streams` watches on `keys` keys
/// (each fetches once when nothing is cached), each consumed by a task of its own, cancels them
/// all once each has yielded, and waits (at most 30 s) for the library's blocking-work threads
/// to end. Counts from `/proc/self/task`, and prints
/// `threads before B, most while starting P, running R, after cancelling A, library threads after L`.
enum WatchThreads {
    static func run(root: URL, streams: Int, keys: Int) throws {
        guard count() != nil else {
            emit("threads not counted: no /proc/self/task")
            return
        }
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: "threads")
        configuration.flushesAtExit = false
        // Written through, on the library's threads: no write-back thread comes and goes with
        // the delay, whatever the speed of the machine (a sanitized build is several times slower).
        configuration.writeBackDelay = .zero
        let cache = try AppCache(configuration: configuration)
        let before = count() ?? 0
        let progress = Progress()
        let tasks = (0..<streams).map { index in
            let key = "key-\(index % keys)"
            return Task.detached {
                var first = true
                do {
                    let stream = cache.watch(MenuItem.self, forKey: key, refresh: .none, retry: .none) { _ in
                        .items(MenuItem.sampleMenu(count: 2, seed: index))
                    }
                    for try await _ in stream where first {
                        first = false
                        progress.note(\.yielded)
                    }
                } catch {
                    emit("VIOLATION a watch threw \(error)")
                }
                progress.note(\.ended)
            }
        }
        let deadline = Date().addingTimeInterval(120)
        var most = before
        while progress.counts.yielded < streams, Date() < deadline {
            most = max(most, count() ?? 0)
            usleep(1_000)
        }
        guard progress.counts.yielded == streams else { throw Failure("only \(progress.counts.yielded) of \(streams) watches yielded") }
        let running = count() ?? 0
        most = max(most, running)
        for task in tasks { task.cancel() }
        while progress.counts.ended < streams, Date() < deadline { usleep(1_000) }
        guard progress.counts.ended == streams else { throw Failure("only \(progress.counts.ended) of \(streams) watches ended") }
        // The library's threads end after a second without work: wait for that, not a time.
        let settle = Date().addingTimeInterval(30)
        while libraryThreads() > 0, Date() < settle { usleep(10_000) }
        let after = count() ?? 0
        emit("threads before \(before), most while starting \(most), running \(running), after cancelling \(after), library threads after \(libraryThreads())")
        withExtendedLifetime(cache) {}
    }

    /// This process's threads.
    private static func count() -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"))?.count
    }

    /// The threads named as the library names those it runs blocking work on.
    private static func libraryThreads() -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).filter { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.hasPrefix("AppCache.work") ?? false
        }.count
    }

    private struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// How many streams yielded their first value, and how many ended.
    private final class Progress: @unchecked Sendable {
        struct Counts {
            var yielded = 0
            var ended = 0
        }

        private let lock = NSLock()
        private var state = Counts()

        func note(_ field: WritableKeyPath<Counts, Int>) { lock.withLock { state[keyPath: field] += 1 } }
        var counts: Counts { lock.withLock { state } }
    }
}
