import Foundation
import Testing

/// The threads of a process with 200 `watch` streams, counted in a child of its own
/// (`appcache-torture --child watch-threads`), where no other test adds threads meanwhile.
struct WatchThreadsTests {
    /// What the child counted.
    struct Counts {
        var before: Int
        var mostWhileStarting: Int
        var running: Int
        var afterCancelling: Int
        var libraryAfter: Int

        /// Parses `threads before B, most while starting P, running R, after cancelling A,
        /// library threads after L`.
        init?(_ output: String) {
            guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("threads before ") }) else { return nil }
            let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            guard numbers.count == 5 else { return nil }
            (before, mostWhileStarting, running, afterCancelling, libraryAfter) = (numbers[0], numbers[1], numbers[2], numbers[3], numbers[4])
        }
    }

    /// The most threads 200 watches may add: the library's 4, the change watcher, and what the
    /// platform runs beside them, which varies from run to run (Dispatch's workers, Swift's
    /// cooperative pool up to one per core, a timer): 2 and 2 per core allowed. Before the pool,
    /// 200 watches added about 225, and kept them after cancelling.
    static let bound = 4 + 1 + 1 + 2 * ProcessInfo.processInfo.activeProcessorCount

    /// Whether this is a sanitized build (`Scripts/sanitize`): ThreadSanitizer runs a thread of
    /// its own beside the child's and changes how Dispatch spreads work, so the count is not the
    /// one a user's process sees.
    static let isSanitized: Bool = {
        #if APPCACHE_SANITIZED
        return true
        #else
        return false
        #endif
    }()

    @Test(
        .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/task"), "threads are counted from /proc/self/task"),
        .disabled(if: isSanitized, "a sanitizer adds threads of its own"), arguments: [200, 1])
    func twoHundredWatchesAddAFewThreadsAndCancellingReleasesThem(keys: Int) async throws {
        let scratch = try ExampleTests.Scratch()
        let torture = ExampleProgram(name: "appcache-torture")
        let run = try await torture.run(
            ["--child", "watch-threads", "--root", scratch.cacheRoot, "--streams", "200", "--keys", String(keys)], scratch: scratch.url)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(!run.standardOutput.contains("VIOLATION"), "\(run.standardOutput)")
        let counts = try #require(Counts(run.standardOutput), "\(run.standardOutput)")
        print("200 watches on \(keys) key(s): \(run.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))")
        #expect(counts.mostWhileStarting - counts.before <= Self.bound, "\(run.standardOutput)")
        #expect(counts.running - counts.before <= Self.bound, "\(run.standardOutput)")
        #expect(counts.libraryAfter == 0, "the library's threads end once the streams are cancelled: \(run.standardOutput)")
        #expect(counts.afterCancelling - counts.before <= Self.bound - 4, "\(run.standardOutput)")
    }
}
