import AppCacheKit
import Dispatch
import Foundation
import MenuModel

/// `load` on a fresh memory hit beside `getCachedItems`: what the loader's stream, task and
/// bookkeeping add when the answer is already in memory.
extension Scenarios {
    func load() throws {
        let cache = try AppCache(configuration: configuration(root("load")))
        try cache.cacheItems(menu, forKey: "menu")
        let iterations = quick ? 500 : 20_000
        let never: @Sendable (CacheValidators?) async throws -> FetchResult<MenuItem> = { _ in
            fatalError("a fresh memory hit never fetches")
        }
        // Each run's calls are made from one task, so the figures are per call in an async
        // context, as an app's would be; the one wait for that task is spread over the run.
        let loads = Measurement.of(runs: runs, iterations: iterations) { count in
            waitFor {
                for _ in 0..<count {
                    for try await answer in cache.load(MenuItem.self, forKey: "menu", fetch: never) { blackHole(answer) }
                }
            }
        }
        let hits = Measurement.of(runs: runs, iterations: iterations) { count in
            waitFor {
                for _ in 0..<count { blackHole(try cache.cachedCollection(MenuItem.self, forKey: "menu")) }
            }
        }
        let detachedHits = Measurement.of(runs: runs, iterations: iterations) { count in
            waitFor {
                for _ in 0..<count {
                    blackHole(try await Task.detached { try cache.cachedCollection(MenuItem.self, forKey: "menu") }.value)
                }
            }
        }
        report.add(
            "load: a fresh memory hit of 100 MenuItems, stream consumed to its end",
            subject: ("AppCache.load (.staleWhileRevalidate)", loads),
            baselines: [
                ("AppCache.cachedCollection in the same task", hits),
                ("AppCache.cachedCollection hopped off the caller (Task.detached)", detachedHits),
            ])
    }

    /// Runs `body` on a task of its own and waits for it: a synchronous benchmark measuring
    /// asynchronous calls.
    private func waitFor(_ body: @escaping @Sendable () async throws -> Void) {
        let done = Completion()
        Task.detached {
            try? await body()
            done.semaphore.signal()
        }
        done.semaphore.wait()
    }
}

/// A semaphore a task may signal: semaphores are thread-safe, but older SDKs do not say so.
private final class Completion: @unchecked Sendable {
    let semaphore = DispatchSemaphore(value: 0)
}
