import AppCacheKit
import Foundation
import MenuModel

/// What `memoryByteLimit` means in resident memory.
///
/// Each fill runs in a child process of its own: resident memory only grows in a process (an
/// allocator keeps what was freed), so a second fill in the same process would reuse the first
/// one's memory and show no growth.
extension Scenarios {
    /// The models the fill can use, by the name the child process is given.
    static let memoryLimitModels = [
        "menu": "[100] MenuItem collections",
        "feed": "collections of 1,000 FeedPosts (small nested items)",
    ]

    func memoryLimit() throws {
        guard ResidentMemory.current() != nil else {
            emit("\nresident-per-limit: not measured (no /proc/self/statm on this platform)")
            return
        }
        let limit = quick ? 8 << 20 : 32 << 20
        for model in ["menu", "feed"] {
            let result = try runChild(model: model, limit: limit)
            let benchmark = "resident-per-limit: memoryByteLimit \(limit >> 20) MiB filled with \(Self.memoryLimitModels[model]!)"
            report.addValue(
                benchmark, subject: "resident growth, \(result.entries) collections in memory, flushed", unit: "bytes",
                value: Double(result.growth), baseline: ("memoryByteLimit", Double(limit)), goal: 1.5, parameter: limit)
            report.addValue(
                benchmark, subject: "bytes the memory layer counts for them", unit: "bytes", value: Double(result.counted),
                baseline: ("memoryByteLimit", Double(limit)), parameter: limit)
        }
    }

    /// Runs one fill in a child process (this program with `--resident-limit-child`).
    private func runChild(model: String, limit: Int) throws -> MemoryLimitFill.Result {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        throw BenchmarkFailure("the memory-limit benchmark needs child processes, which this platform does not run")
        #else
        let process = Process()
        process.executableURL = URL(filePath: CommandLine.arguments[0])
        process.arguments = [MemoryLimitFill.childFlag, model, String(limit), root("resident-limit").path(percentEncoded: false)]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let result = MemoryLimitFill.Result(String(decoding: data, as: UTF8.self)) else {
            throw BenchmarkFailure("the memory-limit child process failed (status \(process.terminationStatus))")
        }
        return result
        #endif
    }
}

/// One fill of the memory layer, in the child process.
enum MemoryLimitFill {
    static let childFlag = "--resident-limit-child"

    struct Result {
        var growth: Int
        var counted: Int
        var entries: Int

        var line: String { "RESULT \(growth) \(counted) \(entries)" }

        init(growth: Int, counted: Int, entries: Int) {
            (self.growth, self.counted, self.entries) = (growth, counted, entries)
        }

        init?(_ output: String) {
            guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("RESULT ") }) else { return nil }
            let numbers = line.split(separator: " ").dropFirst().compactMap { Int($0) }
            guard numbers.count == 3 else { return nil }
            (growth, counted, entries) = (numbers[0], numbers[1], numbers[2])
        }
    }

    /// Runs the fill `arguments` (model, limit, root) describe and prints its result.
    static func run(_ arguments: [String]) throws {
        guard arguments.count == 3, let limit = Int(arguments[1]) else { throw BenchmarkFailure("usage: \(childFlag) MODEL LIMIT ROOT") }
        let root = URL(filePath: arguments[2], directoryHint: .isDirectory)
        let result: Result
        switch arguments[0] {
        case "menu": result = try fill(limit: limit, root: root) { MenuItem.sampleMenu(count: 100, seed: $0) }
        case "feed": result = try fill(limit: limit, root: root) { FeedPost.sampleFeed(count: 1_000, seed: $0) }
        default: throw BenchmarkFailure("unknown model \(arguments[0])")
        }
        print(result.line)
    }

    /// Caches distinct collections, each arriving as JSON and decoded the way an app gets what
    /// it fetched (and dropped by the caller once cached), until the memory layer is full;
    /// flushes; and compares the resident growth with the limit.
    ///
    /// Filling stops before the first eviction: evicted collections are freed, and freed memory
    /// the allocator keeps would be counted against the layer without being in it.
    private static func fill<Model: CacheableModel>(limit: Int, root: URL, make: (Int) -> [Model]) throws -> Result {
        var settings = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: "bench")
        settings.memoryByteLimit = limit
        settings.memoryEntryLimit = 1_000_000
        let cache = try AppCache(configuration: settings)
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()
        // One collection through every step first, so that what is measured is what the
        // collections take, not the code and caches the first one warms.
        try cache.cacheItems(decoder.decode([Model].self, from: encoder.encode(make(1_000_000))), forKey: "warm-up")
        try cache.removeAll()
        guard let before = ResidentMemory.current() else { throw BenchmarkFailure("no resident memory figure") }
        var seed = 0
        var largest = 0
        while true {
            let used = cache.memoryStatistics.bytes
            // The next collection would not fit (they are all about the same size): stop.
            if seed > 0 && used + largest > limit { break }
            let items = try decoder.decode([Model].self, from: encoder.encode(make(seed)))
            try cache.cacheItems(items, forKey: "k\(seed)")
            let statistics = cache.memoryStatistics
            guard statistics.entries == seed + 1 else {
                throw BenchmarkFailure("the memory layer evicted while filling (\(statistics))")
            }
            largest = max(largest, statistics.bytes - used)
            seed += 1
        }
        // Written out: clean entries keep their items only, as after any write-back.
        try cache.flush()
        guard let after = ResidentMemory.current() else { throw BenchmarkFailure("no resident memory figure") }
        let statistics = cache.memoryStatistics
        return Result(growth: after - before, counted: statistics.bytes, entries: statistics.entries)
    }
}

/// A benchmark that could not measure what it set out to.
struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
