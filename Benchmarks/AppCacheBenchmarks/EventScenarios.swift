import AppCacheKit
import Foundation
import MenuModel

extension Scenarios {
    /// What events cost on the memory-hit path: `getCachedItems` of collections in memory with
    /// nobody observing (``AppCache/events`` unread: one atomic load per hit, and the per-entry
    /// hit count `statistics()` reads), against the same with a reader taking every event, and
    /// against a dictionary lookup, all in alternation in one run.
    func eventsHit() throws {
        let keys = (0..<100).map { "restaurant-\($0)" }
        var dictionary: [String: [MenuItem]] = [:]
        func filled(_ name: String) throws -> AppCache {
            let cache = try AppCache(configuration: configuration(root(name)))
            for key in keys { try cache.cacheItems(menu, forKey: key) }
            return cache
        }
        let quiet = try filled("events-hit-quiet")
        let observed = try filled("events-hit-observed")
        for key in keys { dictionary[key] = menu }
        let taken = Counter()
        let reader = Task.detached {
            for await _ in observed.events { taken.add() }
        }
        defer { reader.cancel() }
        // The reader is registered once an event reaches it.
        let deadline = Date().addingTimeInterval(10)
        while taken.value == 0 && Date() < deadline {
            _ = try observed.getCachedItems(MenuItem.self, forKey: keys[0])
            usleep(1_000)
        }
        guard taken.value > 0 else { throw BenchmarkFailure("the events reader received nothing") }
        let passes = quick ? 200 : 2_000
        let pass = { (cache: AppCache) in
            for key in keys { blackHole(try? cache.getCachedItems(MenuItem.self, forKey: key)) }
        }
        let unobserved = Measurement.paired(runs: runs, iterations: passes, subject: { pass(quiet) }, baseline: {
            for key in keys { blackHole(dictionary[key]) }
        })
        let withReader = Measurement.paired(runs: runs, iterations: passes, subject: { pass(observed) }, baseline: { pass(quiet) })
        let dictionaryName = "Dictionary<String, [MenuItem]> lookup"
        report.add(
            "events-hit: getCachedItems of 100 MenuItems in memory (100 collections), nobody reading cache.events",
            subject: ("AppCache.getCachedItems, events unobserved", unobserved.subject.divided(by: keys.count)),
            baselines: [(dictionaryName, unobserved.baseline.divided(by: keys.count))],
            pairedRatios: [dictionaryName: unobserved.ratio])
        let quietName = "getCachedItems, events unobserved"
        report.add(
            "events-hit: the same with a task reading every event of cache.events",
            subject: ("AppCache.getCachedItems, events read", withReader.subject.divided(by: keys.count)),
            baselines: [(quietName, withReader.baseline.divided(by: keys.count))],
            pairedRatios: [quietName: withReader.ratio])
        let counts = quiet.statistics().total
        guard counts.memoryHits >= passes * keys.count else {
            throw BenchmarkFailure("statistics() counted \(counts.memoryHits) memory hits of at least \(passes * keys.count)")
        }
    }
}

/// A count several threads add to.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func add() { lock.withLock { count += 1 } }
}
