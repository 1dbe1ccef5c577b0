import AppCacheKit
import Foundation

extension Scenarios {
    /// The threads the process has for 200 `watch` streams: before they start, at the most while
    /// they start, once each has yielded, and after they are all cancelled (at once, and 1.5 s
    /// later, when the library's idle threads have gone). 200 streams on 200 keys (200 first fetches and
    /// stores), then 200 on one key (one shared flight). Counted from `/proc/self/task`.
    func threads() throws {
        guard ThreadCount.current != nil else {
            emit("\nthreads: not measured (no /proc/self/task on this platform)")
            return
        }
        try watchThreads(streams: 200, keys: 200)
        try watchThreads(streams: 200, keys: 1)
    }

    private func watchThreads(streams: Int, keys: Int) throws {
        let cache = try AppCache(configuration: configuration(root("threads")))
        let baseline = ThreadCount.current ?? 0
        let progress = StreamProgress()
        var tasks: [Task<Void, Never>] = []
        for index in 0..<streams {
            let key = "key-\(index % keys)"
            tasks.append(Task.detached {
                var first = true
                do {
                    let stream = cache.watch(Stamp.self, forKey: key, refresh: .none, retry: .none) { _ in .items([Stamp(sequence: index)]) }
                    for try await _ in stream where first {
                        first = false
                        progress.yielded()
                    }
                } catch {}
                progress.ended()
            })
        }
        // The most threads while they start, sampled every millisecond.
        var peak = baseline
        let deadline = Date().addingTimeInterval(120)
        while progress.counts.yielded < streams, Date() < deadline {
            peak = max(peak, ThreadCount.current ?? 0)
            usleep(1_000)
        }
        guard progress.counts.yielded == streams else { throw BenchmarkFailure("only \(progress.counts.yielded) of \(streams) watches yielded") }
        let running = ThreadCount.current ?? 0
        peak = max(peak, running)
        for task in tasks { task.cancel() }
        while progress.counts.ended < streams, Date() < deadline { usleep(1_000) }
        guard progress.counts.ended == streams else { throw BenchmarkFailure("only \(progress.counts.ended) of \(streams) watches ended") }
        let cancelled = ThreadCount.current ?? 0
        // The library's threads end after a second without work.
        usleep(1_500_000)
        let later = ThreadCount.current ?? 0
        let library = ThreadCount.names.filter { $0 == "AppCache.work" }.count

        let benchmark = "threads: \(streams) watch streams on \(keys == 1 ? "one key" : "\(keys) keys"), started, then cancelled (threads of the process)"
        report.addValue(benchmark, subject: "before the streams", unit: "threads", value: Double(baseline))
        report.addValue(benchmark, subject: "at the most while they start", unit: "threads", value: Double(peak))
        report.addValue(benchmark, subject: "with \(streams) streams running", unit: "threads", value: Double(running))
        report.addValue(benchmark, subject: "once all were cancelled and ended", unit: "threads", value: Double(cancelled))
        report.addValue(benchmark, subject: "1.5 s after that", unit: "threads", value: Double(later))
        report.addValue(benchmark, subject: "of which the library's blocking-work threads", unit: "threads", value: Double(library))
    }
}

/// How many threads this process has, from `/proc/self/task`; `nil` where there is none.
enum ThreadCount {
    /// The names of this process's threads (their first 15 bytes).
    static var names: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).map {
            (try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
        }.sorted()
    }
    static var current: Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"))?.count
    }
}

/// How many streams yielded their first value, and how many ended.
private final class StreamProgress: @unchecked Sendable {
    private let lock = NSLock()
    private var yieldedCount = 0
    private var endedCount = 0

    func yielded() { lock.withLock { yieldedCount += 1 } }
    func ended() { lock.withLock { endedCount += 1 } }
    var counts: (yielded: Int, ended: Int) { lock.withLock { (yieldedCount, endedCount) } }
}
