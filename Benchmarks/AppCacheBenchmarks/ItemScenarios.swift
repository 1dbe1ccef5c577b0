import AppCacheKit
import Foundation
import MenuModel

/// Writes by id and changes by id pending (issue 36).
extension Scenarios {
    /// What a write by id (`updateItem`) costs as the type's collections grow: 1, 100 and
    /// 10,000 collections of 20 posts (1,000 at most in a quick run), the post in three of them
    /// (the one collection when there is one). Steady state (the id index built) is timed in
    /// alternation with `updateItems(forKey:)` of one collection; the first write of a fresh
    /// instance (which builds the index, reading every collection of the type) beside the first
    /// `updateItems(forKey:)` of a fresh instance.
    func updateItem() throws {
        for count in quick ? [1, 100, 1_000] : [1, 100, 10_000] {
            try updateItem(collections: count)
        }
    }

    private func updateItem(collections count: Int) throws {
        var settings = configuration(root("update-item-\(count)"))
        settings.writeBackDelay = nil
        let holding = count == 1 ? [0] : [0, count / 3, 2 * count / 3]
        let keys = (0..<count).map { "list-\($0)" }
        do {
            let filler = try AppCache(configuration: settings)
            for (index, key) in keys.enumerated() {
                try filler.cacheItems(BenchPost.list(index, holdingTarget: holding.contains(index)), forKey: key)
            }
            try filler.flush()
        }
        let target = BenchPost.targetID
        let collections = count == 1 ? "1 collection" : "\(count) collections"
        // Instances on one root share their store while one is alive: this one goes before the
        // first writes are timed, each on a store of its own.
        do {
        let cache = try AppCache(configuration: settings)
        let changed = try cache.updateItem(BenchPost.self, id: target) { $0.likes += 1 }
        guard changed == holding.count else {
            throw BenchmarkFailure("updateItem changed \(changed) collections, not the \(holding.count) holding the post")
        }
        let iterations = quick ? 10 : 40
        let steady = Measurement.paired(runs: runs, iterations: iterations, subject: {
            blackHole(try? cache.updateItem(BenchPost.self, id: target) { $0.likes += 1 })
        }, baseline: {
            blackHole(try? cache.updateItems(BenchPost.self, forKey: keys[0]) { $0[0].likes += 1 })
        })
        let eachHolding = Measurement.of(runs: runs, iterations: iterations) { calls in
            for _ in 0..<calls {
                for index in holding { blackHole(try? cache.updateItems(BenchPost.self, forKey: keys[index]) { $0[0].likes += 1 }) }
            }
        }
        let oneName = "updateItems(forKey:) of one collection"
        report.add(
            "update-item: updateItem by id, \(collections) of 20 posts, the post in \(holding.count), index built",
            parameter: count,
            subject: ("AppCache.updateItem (\(holding.count) collection(s) written)", steady.subject),
            baselines: [
                (oneName, steady.baseline),
                ("updateItems(forKey:) of the \(holding.count) holding it, one call each", eachHolding),
            ],
            pairedRatios: [oneName: steady.ratio])
        }

        // The first write of a fresh instance: the index is built by reading the type's
        // collections (from the disk, through the system's page cache).
        let firstRuns = quick ? 3 : 5
        let first = try Measurement.each(runs: firstRuns, setup: { try AppCache(configuration: settings) }) { fresh in
            let changed = try fresh.updateItem(BenchPost.self, id: target) { $0.likes += 1 }
            guard changed == holding.count else { throw BenchmarkFailure("a first updateItem changed \(changed) collections") }
        }
        let firstBaseline = try Measurement.each(runs: firstRuns, setup: { try AppCache(configuration: settings) }) { fresh in
            blackHole(try fresh.updateItems(BenchPost.self, forKey: keys[0]) { $0[0].likes += 1 })
        }
        report.add(
            "update-item-first: the first updateItem of a fresh instance (builds the id index), \(collections) of 20 posts",
            parameter: count,
            subject: ("AppCache.updateItem, first of the instance", first),
            baselines: [("first updateItems(forKey:) of one collection of a fresh instance", firstBaseline)])
    }

    /// The read hot path with changes by id pending: a memory hit (`getCachedItems`) of 100
    /// collections of 20 posts, each holding the ten posts the changes touch, with 1 and 10
    /// `ItemMutation`s queued (no sender: they stay pending), timed in alternation with the same
    /// memory hit on an instance with nothing queued; and with one change pending on a post no
    /// collection holds (what any pending change by id of the type costs a read).
    func pendingHit() throws {
        let keys = (0..<100).map { "list-\($0)" }
        func filled(_ name: String, pending: Int) throws -> AppCache {
            var settings = configuration(root(name))
            settings.writeBackDelay = nil
            let cache = try AppCache(configuration: settings)
            for (index, key) in keys.enumerated() { try cache.cacheItems(BenchPost.sharedList(index), forKey: key) }
            for post in 0..<pending { try cache.enqueue(SetLikes(post: post, likes: 1_000 + post)) }
            return cache
        }
        let quiet = try filled("pending-hit-none", pending: 0)
        let passes = quick ? 20 : 200
        let pass = { (cache: AppCache) in
            for key in keys { blackHole(try? cache.getCachedItems(BenchPost.self, forKey: key)) }
        }
        for pending in [0, 1, 10] {
            // 0: one change pending on a post no collection holds.
            let cache = try filled("pending-hit-\(pending)", pending: pending)
            if pending == 0 { try cache.enqueue(SetLikes(post: 999_999, likes: 1)) }
            guard cache.pendingMutations.count == max(pending, 1),
                let shown = try cache.getCachedItems(BenchPost.self, forKey: keys[7]),
                shown.filter({ $0.likes >= 1_000 }).count == pending
            else { throw BenchmarkFailure("the \(pending) pending change(s) are not shown") }
            let hit = Measurement.paired(runs: runs, iterations: passes, subject: { pass(cache) }, baseline: { pass(quiet) })
            let quietName = "getCachedItems, nothing pending (the hot path)"
            let what = pending == 0 ? "1 change by id pending on a post none holds" : "\(pending) change(s) by id pending on posts each holds"
            report.add(
                "pending-hit: getCachedItems of 20 posts in memory (100 collections), \(what)",
                parameter: pending,
                subject: ("AppCache.getCachedItems, \(max(pending, 1)) ItemMutation(s) pending", hit.subject.divided(by: keys.count)),
                baselines: [(quietName, hit.baseline.divided(by: keys.count))],
                pairedRatios: [quietName: hit.ratio])
        }
    }
}

/// A post of the by-id benchmarks.
struct BenchPost: CacheableModel, Identifiable, Hashable {
    static let cacheName = "BenchPosts"
    var id: Int
    var likes: Int
    var title: String

    /// The post `updateItem` changes.
    static let targetID = -1

    /// Collection `index`: 20 posts of its own, the first of them the target when it holds it.
    static func list(_ index: Int, holdingTarget: Bool) -> [BenchPost] {
        (0..<20).map { offset in
            BenchPost(id: holdingTarget && offset == 0 ? targetID : index * 20 + offset, likes: offset, title: "post \(index)-\(offset)")
        }
    }

    /// Collection `index`: posts 0–9, shared by every collection, then 10 of its own.
    static func sharedList(_ index: Int) -> [BenchPost] {
        (0..<20).map { offset in
            let id = offset < 10 ? offset : 1_000 + index * 10 + offset
            return BenchPost(id: id, likes: 0, title: "post \(id)")
        }
    }
}

/// Sets a post's like count: the change by id of the pending-hit benchmark.
struct SetLikes: ItemMutation {
    static let mutationName = "bench-set-likes"
    var post: Int
    var likes: Int
    var itemIDs: [Int] { [post] }
    func apply(to item: inout BenchPost) { item.likes = likes }
}
