import AppCacheKit
import Dispatch
import Foundation
import MenuModel

extension Scenarios {
    /// A background refresh as a `BGAppRefreshTask` runs it: 50 stale collections used
    /// recently, a simulated server that takes 300 ms per fetch and never answers one fetch in
    /// ten, and 2 s from the system. What it refreshed, what it cancelled and skipped at the
    /// deadline, and when it returned.
    func backgroundRefresh() throws {
        let clock = CacheClock()
        var settings = configuration(root("background-refresh"))
        settings.clock = clock
        let cache = try AppCache(configuration: settings)
        let server = SlowMenuServer(delay: .milliseconds(300), hangsEvery: 10)
        cache.registerFetch(for: MenuItem.self) { context in try await server.menu(for: context.key) }
        let count = 50
        let keys = (0..<count).map { "restaurant-\($0)" }
        let menu = MenuItem.sampleMenu(count: 20)
        for key in keys {
            try cache.cacheItems(menu, forKey: key)
        }
        // The reader opened every restaurant, the last one most recently; two hours later all
        // are stale.
        let outcome = Box<BackgroundRefreshReport?>(nil)
        let returnedEarly = Box(false)
        let deadlineGiven: Duration = .seconds(2)
        run {
            for key in keys {
                for try await _ in cache.load(MenuItem.self, forKey: key, policy: .cacheFirst, fetch: { _ in .notModified }) {}
                clock.advance(by: .seconds(1))
            }
            clock.advance(by: .seconds(2 * 3600))
            let deadline = ContinuousClock.Instant.now + deadlineGiven
            outcome.value = await cache.refreshInBackground(until: deadline)
            returnedEarly.value = ContinuousClock.Instant.now < deadline
        }
        guard let done = outcome.value else { throw BenchmarkFailure("the refresh did not return") }
        // What a cancelled fetch would have brought is not stored: its collection is as it was.
        for collection in done.cancelled where try cache.getCachedItems(MenuItem.self, forKey: collection.key) != menu {
            throw BenchmarkFailure("the cancelled \(collection) lost its cached items")
        }
        let benchmark = "background-refresh: \(count) stale collections, a server taking 300 ms a fetch (1 in 10 never answers), 4 at a time, a 2 s deadline"
        record(done, benchmark: benchmark, returnedEarly: returnedEarly.value, deadline: deadlineGiven)
    }

    private func record(_ done: BackgroundRefreshReport, benchmark: String, returnedEarly: Bool, deadline: Duration) {
        let elapsed = Double(done.elapsed.components.seconds) * 1000 + Double(done.elapsed.components.attoseconds) / 1e15
        report.addValue(benchmark, subject: "returned after", unit: "ms", value: elapsed, baseline: ("the deadline", Double(deadline.components.seconds) * 1000), goal: 1.0)
        report.addValue(benchmark, subject: "refreshed (fetched and stored)", unit: "", value: Double(done.refreshed.count))
        report.addValue(benchmark, subject: "cancelled at the deadline (cached items kept)", unit: "", value: Double(done.cancelled.count))
        report.addValue(benchmark, subject: "skipped (not started: the deadline was near)", unit: "", value: Double(done.skipped.count))
        report.addValue(benchmark, subject: "failed", unit: "", value: Double(done.failed.count))
        emit("  refreshed, most recently used first: \(done.refreshed.map { $0.key ?? "-" }.joined(separator: ", "))")
        emit("  cancelled (their cached items checked, unchanged): \(done.cancelled.map { $0.key ?? "-" }.joined(separator: ", "))")
        emit("  flushed: \(done.isFlushed ? "yes" : "no"); \(done.trimmedEntries) collections left memory")
        emit("  returned in time: \(returnedEarly ? "yes" : "NO")")
    }

    /// Runs `body` on a task of its own and waits for it.
    private func run(_ body: @escaping @Sendable () async throws -> Void) {
        let done = DispatchSemaphore(value: 0)
        let signal = UncheckedSemaphore(semaphore: done)
        Task.detached {
            try? await body()
            signal.semaphore.signal()
        }
        done.wait()
    }
}

/// The slow server: every fetch takes `delay`, and every `hangsEvery`-th never answers (until
/// cancelled).
private final class SlowMenuServer: Sendable {
    let delay: Duration
    let hangsEvery: Int
    private let fetches = Box(0)

    init(delay: Duration, hangsEvery: Int) {
        self.delay = delay
        self.hangsEvery = hangsEvery
    }

    func menu(for key: String?) async throws -> FetchResult<MenuItem> {
        let number = fetches.modify { $0 += 1; return $0 }
        try await Task.sleep(for: number % hangsEvery == 0 ? .seconds(3600) : delay)
        return .items(MenuItem.sampleMenu(count: 20, seed: number))
    }
}

/// A value shared with a task, behind a lock.
private final class Box<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }

    func modify<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.withLock { body(&stored) }
    }
}

/// A semaphore a task may signal: semaphores are thread-safe, but older SDKs do not say so.
private struct UncheckedSemaphore: @unchecked Sendable {
    let semaphore: DispatchSemaphore
}
