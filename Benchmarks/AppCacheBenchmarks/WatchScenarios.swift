import AppCacheKit
import Foundation
import MenuModel

extension Scenarios {
    /// What a `watch` adds over `updates` on a change: both follow one collection that another
    /// instance rewrites; for each change, the delay from the write returning to each stream
    /// yielding it (the watch also judges staleness and its triggers on every look).
    func watch() throws {
        let cacheRoot = root("watch")
        var settings = configuration(cacheRoot)
        settings.writeBackDelay = .zero
        let writer = try AppCache(configuration: settings)
        let reader = try AppCache(configuration: settings)
        try writer.cacheItems([Stamp(sequence: 0)], forKey: "live")
        let changes = quick ? 20 : 200
        let updatesArrivals = Arrivals()
        let watchArrivals = Arrivals()
        let following = Task.detached {
            for await items in reader.updates(Stamp.self, forKey: "live") {
                if let sequence = items?.first?.sequence { updatesArrivals.arrived(sequence, at: Scenarios.monotonicNanoseconds()) }
            }
        }
        let watching = Task.detached {
            let stream = reader.watch(Stamp.self, forKey: "live", refresh: .none, retry: .none) { _ in .notModified }
            for try await loaded in stream {
                if let sequence = loaded.items.first?.sequence { watchArrivals.arrived(sequence, at: Scenarios.monotonicNanoseconds()) }
            }
        }
        defer {
            following.cancel()
            watching.cancel()
        }
        Thread.sleep(forTimeInterval: 0.2)  // both streams' first look
        var random = SeededRandom(seed: 11)
        var written: [Int: UInt64] = [:]
        for sequence in 1...changes {
            try writer.cacheItems([Stamp(sequence: sequence)], forKey: "live")
            written[sequence] = Scenarios.monotonicNanoseconds()
            usleep(UInt32(3_000 + random.next() % 7_000))
        }
        Thread.sleep(forTimeInterval: 0.2)
        func delays(_ arrivals: Arrivals) -> [Double] {
            written.compactMap { sequence, at in arrivals.time(of: sequence).map { $0 >= at ? Double($0 - at) / 1e3 : nil } ?? nil }.sorted()
        }
        let viaUpdates = delays(updatesArrivals)
        let viaWatch = delays(watchArrivals)
        guard !viaUpdates.isEmpty, !viaWatch.isEmpty else { throw BenchmarkFailure("the streams saw no change") }
        let benchmark = "watch: another instance's write reaching a watch, beside an updates stream of the same collection (\(changes) changes, 3 to 10 ms apart)"
        let updatesMedian = viaUpdates[viaUpdates.count / 2]
        report.addValue(benchmark, subject: "updates, median", unit: "µs", value: updatesMedian)
        report.addValue(
            benchmark, subject: "watch, median", unit: "µs", value: viaWatch[viaWatch.count / 2], baseline: ("updates, median", updatesMedian),
            goal: nil)
        report.addValue(benchmark, subject: "watch, 99th percentile", unit: "µs", value: viaWatch[min(viaWatch.count - 1, viaWatch.count * 99 / 100)])
        report.addValue(benchmark, subject: "changes the watch saw (the rest coalesced)", unit: "", value: Double(viaWatch.count))
    }
}
