import AppCacheKit
import Foundation
import MenuModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A change's number, as one process writes it and another sees it.
struct Stamp: CacheableModel, Equatable {
    var sequence: Int
}

/// Change signals between processes: how soon one process's write reaches another process's
/// `updates` stream, and what an idle observer costs its process.
///
/// Both run in child processes of this program (`--cross-process-child`): a writer that writes
/// numbered collections (write-through, or with the default write-back delay) and prints, for
/// each, the monotonic clock when the write returned; and an idle observer that follows a collection nobody changes and prints how many
/// times its threads were woken (voluntary context switches, all threads, from `/proc`).
extension Scenarios {
    static let crossProcessFlag = "--cross-process-child"

    func crossProcess() throws {
        #if os(Linux)
        let changes = quick ? 50 : 300
        try measureDelay(changes: changes, writer: "writer", title: "write-through")
        // The default configuration: write-back after 5 s, brought forward to 2 ms while
        // another live process reads or watches the root.
        try measureDelay(changes: changes, writer: "writer-back", title: "write-back with the default 5 s delay")

        // Wake-ups of an idle observer, beside the same process with no observer: on Linux,
        // Dispatch itself wakes a process that used its global queues (as Swift concurrency
        // does) about once a second; what the observer adds is the difference.
        let idleSeconds = quick ? 2 : 10
        func wakeUps(_ mode: String) throws -> Double {
            let lines = try runChild([mode, root("cross-process-\(mode)").path(percentEncoded: false), String(idleSeconds)])
            guard let value = lines.last.flatMap({ Double($0) }) else { throw BenchmarkFailure("the \(mode) child printed nothing") }
            return value
        }
        let observing = try wakeUps("idle")
        let watching = try wakeUps("idle-watch")
        let baseline = try wakeUps("idle-baseline")
        let idleBenchmark = "cross-process: wake-ups (voluntary context switches) of an idle process over \(idleSeconds) s"
        report.addValue(idleBenchmark, subject: "following a collection with updates", unit: "", value: observing)
        report.addValue(idleBenchmark, subject: "the same process, following nothing", unit: "", value: baseline)
        report.addValue(
            idleBenchmark, subject: "added by the idle updates stream", unit: "", value: max(observing - baseline, 0),
            baseline: ("the goal", 2), goal: 1.0)
        report.addValue(idleBenchmark, subject: "watching a collection (default triggers, no polling)", unit: "", value: watching)
        report.addValue(
            idleBenchmark, subject: "added by the idle watch", unit: "", value: max(watching - baseline, 0),
            baseline: ("the goal", 2), goal: 1.0)
        #else
        emit("\ncross-process: not measured (child processes and /proc are Linux-only here)")
        #endif
    }

    /// Runs a writer child (`writer`: write-through; `writer-back`: the default write-back)
    /// against an `updates` stream in this process; reports the delays from each write
    /// returning to the stream yielding it.
    private func measureDelay(changes: Int, writer: String, title: String) throws {
        let cacheRoot = root("cross-process-\(writer)")
        var settings = configuration(cacheRoot)
        settings.writeBackDelay = .zero
        let reader = try AppCache(configuration: settings)
        try reader.cacheItems([Stamp(sequence: 0)], forKey: "live")
        let arrivals = Arrivals()
        let following = Task.detached {
            for await items in reader.updates(Stamp.self, forKey: "live") {
                if let sequence = items?.first?.sequence { arrivals.arrived(sequence, at: Self.monotonicNanoseconds()) }
            }
        }
        defer { following.cancel() }
        Thread.sleep(forTimeInterval: 0.2)  // the stream's first look
        let lines = try runChild([writer, cacheRoot.path(percentEncoded: false), String(changes)])
        Thread.sleep(forTimeInterval: 0.2)  // the last arrival
        var latencies: [Double] = []
        for line in lines {
            let fields = line.split(separator: " ")
            guard fields.count == 2, let sequence = Int(fields[0]), let written = UInt64(fields[1]),
                let seen = arrivals.time(of: sequence), seen >= written
            else { continue }
            latencies.append(Double(seen - written) / 1e6)
        }
        guard !latencies.isEmpty else { throw BenchmarkFailure("no change of the other process reached the stream (\(writer))") }
        latencies.sort()
        let benchmark = "cross-process, \(title): another process's write reaching an updates stream (\(changes) changes, 5 to 20 ms apart)"
        report.addValue(benchmark, subject: "median", unit: "ms", value: latencies[latencies.count / 2])
        report.addValue(
            benchmark, subject: "99th percentile", unit: "ms", value: latencies[min(latencies.count - 1, latencies.count * 99 / 100)],
            baseline: ("the goal", 20), goal: 1.0)
        report.addValue(benchmark, subject: "changes seen (the rest coalesced)", unit: "", value: Double(latencies.count))
    }

    /// The child side: `writer ROOT COUNT`, `writer-back ROOT COUNT` or `idle ROOT SECONDS`.
    static func runCrossProcessChild(_ arguments: [String]) throws {
        guard arguments.count == 3, let number = Int(arguments[2]) else { throw BenchmarkFailure("bad child arguments \(arguments)") }
        var settings = AppCache.Configuration(rootDirectory: URL(filePath: arguments[1], directoryHint: .isDirectory), schemaVersion: "1", user: "bench")
        settings.writeBackDelay = arguments[0] == "writer-back" ? AppCache.Configuration(schemaVersion: "1").writeBackDelay : .zero
        settings.flushesAtExit = false
        let cache = try AppCache(configuration: settings)
        switch arguments[0] {
        case "writer", "writer-back":
            var random = SeededRandom(seed: 7)
            for sequence in 1...number {
                usleep(UInt32(5_000 + random.next() % 15_000))
                try cache.cacheItems([Stamp(sequence: sequence)], forKey: "live")
                print(sequence, monotonicNanoseconds())
            }
        case "idle", "idle-baseline", "idle-watch":
            try cache.cacheItems([Stamp(sequence: 0)], forKey: "live")
            let first = FirstValue()
            // The baseline: the same process, its task waiting on a stream that never yields
            // again, in place of the cache's `updates`.
            var quietContinuation: AsyncStream<[Stamp]?>.Continuation?
            let quiet = AsyncStream<[Stamp]?> { continuation in
                continuation.yield(nil)
                quietContinuation = continuation  // kept: a released continuation ends the stream
            }
            let stream: AsyncStream<[Stamp]?>
            switch arguments[0] {
            case "idle": stream = cache.updates(Stamp.self, forKey: "live")
            case "idle-watch":
                // The watch's values as an updates stream's: what it yields, mapped.
                let watch = cache.watch(Stamp.self, forKey: "live", retry: .none) { _ in .notModified }
                stream = AsyncStream { continuation in
                    let task = Task {
                        do {
                            for try await loaded in watch { continuation.yield(loaded.items) }
                        } catch {}
                        continuation.finish()
                    }
                    continuation.onTermination = { _ in task.cancel() }
                }
            default: stream = quiet
            }
            let following = Task.detached {
                var signalled = false
                for await _ in stream where !signalled {
                    signalled = true
                    first.semaphore.signal()
                }
            }
            first.semaphore.wait()
            Thread.sleep(forTimeInterval: 6)  // let start-up settle (Dispatch lets idle threads go after a few seconds)
            let before = voluntarySwitches()
            Thread.sleep(forTimeInterval: Double(number))
            let after = voluntarySwitches()
            following.cancel()
            withExtendedLifetime(quietContinuation) {}
            // Threads alive throughout (one Dispatch lets go of when idle is not a periodic
            // wake-up); the main thread's own sleep wakes it once, which is not the observer's
            // doing.
            let woken = after.reduce(0) { total, thread in total + max(thread.value - (before[thread.key] ?? thread.value), 0) }
            print(max(woken - 1, 0))
        default:
            throw BenchmarkFailure("unknown child \(arguments[0])")
        }
        withExtendedLifetime(cache) {}
    }

    static func monotonicNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Voluntary context switches of each thread of this process, from `/proc/self/task`.
    static func voluntarySwitches() -> [String: Int] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        var counts: [String: Int] = [:]
        for task in tasks {
            guard let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("voluntary_ctxt_switches:") }),
                let value = line.split(separator: "\t").last.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) })
            else { continue }
            counts[task] = value
        }
        return counts
    }

    private func runChild(_ arguments: [String]) throws -> [String] {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        throw BenchmarkFailure("the cross-process benchmark needs child processes")
        #else
        let process = Process()
        process.executableURL = URL(filePath: CommandLine.arguments[0])
        process.arguments = [Self.crossProcessFlag] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchmarkFailure("the cross-process child failed (status \(process.terminationStatus))") }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        #endif
    }
}

/// Says the stream's first value arrived (older SDKs do not mark semaphores `Sendable`).
private final class FirstValue: @unchecked Sendable {
    let semaphore = DispatchSemaphore(value: 0)
}

/// When a stream first saw each change, on the monotonic clock.
final class Arrivals: @unchecked Sendable {
    private let lock = NSLock()
    private var times: [Int: UInt64] = [:]

    func arrived(_ sequence: Int, at time: UInt64) {
        lock.withLock { if times[sequence] == nil { times[sequence] = time } }
    }

    func time(of sequence: Int) -> UInt64? {
        lock.withLock { times[sequence] }
    }
}
