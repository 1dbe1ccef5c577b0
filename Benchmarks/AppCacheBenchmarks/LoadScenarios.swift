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

    /// How long a write by another instance on the same root (as another process's would, through
    /// the shared change count) takes to reach an `updates` stream: the latency the loader's
    /// observation promises within 2 seconds.
    func updates() throws {
        let cacheRoot = root("updates")
        var settings = configuration(cacheRoot)
        settings.writeBackDelay = .zero
        let writer = try AppCache(configuration: settings)
        let reader = try AppCache(configuration: settings)
        try writer.cacheItems(MenuItem.sampleMenu(count: 3, seed: 0), forKey: "live")
        let changes = quick ? 3 : 20
        let latencies = Latencies()
        let following = Task.detached {
            var expected = 0
            for await items in reader.updates(MenuItem.self, forKey: "live") {
                guard let items, items == MenuItem.sampleMenu(count: 3, seed: expected + 1) else { continue }
                expected += 1
                latencies.arrived(expected)
                if expected == changes { return }
            }
        }
        var random = SeededRandom(seed: 42)
        for change in 1...changes {
            // Apart enough that each is seen on its own, at random moments of the stream's
            // polling.
            Thread.sleep(forTimeInterval: 0.2 + Double(random.next() % 700) / 1000)
            latencies.sent(change)
            try writer.cacheItems(MenuItem.sampleMenu(count: 3, seed: change), forKey: "live")
            _ = latencies.waitFor(change, timeout: 10)
        }
        following.cancel()
        let measured = latencies.values
        guard !measured.isEmpty else { throw BenchmarkFailure("no change reached the updates stream") }
        let sorted = measured.sorted()
        let benchmark = "updates: another instance's write reaching an updates stream (\(changes) changes, 0.2 to 0.9 s apart)"
        report.addValue(benchmark, subject: "median latency", unit: "ms", value: sorted[sorted.count / 2] * 1000, baseline: ("the promise", 2000), goal: 1.0)
        report.addValue(benchmark, subject: "slowest", unit: "ms", value: sorted[sorted.count - 1] * 1000, baseline: ("the promise", 2000), goal: 1.0)
        if measured.count < changes { report.addValue(benchmark, subject: "changes never seen", unit: "", value: Double(changes - measured.count)) }
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

/// When each change was written and when the stream saw it, in seconds.
private final class Latencies: @unchecked Sendable {
    private let condition = NSCondition()
    private var sentAt: [Int: Date] = [:]
    private var arrivedAt: [Int: Date] = [:]

    func sent(_ change: Int) {
        condition.lock()
        sentAt[change] = Date()
        condition.unlock()
    }

    func arrived(_ change: Int) {
        condition.lock()
        arrivedAt[change] = Date()
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until `change` was seen or `timeout` seconds passed.
    func waitFor(_ change: Int, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while arrivedAt[change] == nil {
            if !condition.wait(until: deadline) { return false }
        }
        return true
    }

    var values: [Double] {
        condition.lock()
        defer { condition.unlock() }
        return arrivedAt.compactMap { change, arrived in sentAt[change].map { arrived.timeIntervalSince($0) } }
    }
}
