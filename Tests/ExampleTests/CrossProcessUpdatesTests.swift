import AppCacheKit
import Foundation
import MenuModel
import Testing

/// `updates(of:forKey:)` in this process following writes another process makes on the same
/// root: the news-feed example run as the other process, as a widget follows its app.
struct CrossProcessUpdatesTests {
    final class Seen: Sendable {
        private let values = Locked<[[FeedPost]?]>([])
        func append(_ value: [FeedPost]?) { values.withLock { $0.append(value) } }
        var last: [FeedPost]?? { values.withLock { $0.last } }
    }

    /// The smallest lock the test needs, without reaching into the library's internals.
    final class Locked<Value>: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Value
        init(_ value: Value) { self.value = value }
        func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
            lock.lock()
            defer { lock.unlock() }
            return body(&value)
        }
    }

    /// That it arrives; how soon is the benchmark program's `updates` row, not timed here.
    @Test func anotherProcessesWriteReachesUpdates() async throws {
        let scratch = try ExampleTests.Scratch()
        let root = URL(filePath: scratch.cacheRoot, directoryHint: .isDirectory)
        let cache = try AppCache(configuration: .init(rootDirectory: root, schemaVersion: "1", user: "reader"))
        defer { withExtendedLifetime(cache) {} }  // an updates stream holds its cache weakly
        let seen = Seen()
        let following = Task {
            for await posts in cache.updates(of: FeedPost.self, forKey: "top") { seen.append(posts) }
        }
        defer { following.cancel() }
        #expect(await waitUntil(within: 30) { seen.last == .some(nil) }, "nothing cached at first")

        // Another process fetches edition 1 and writes it on its way out.
        let run = try await ExampleProgram(name: "news-feed").run(["--root", scratch.cacheRoot, "--server-delay", "0"], scratch: scratch.url)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(await waitUntil(within: 30) { seen.last??.count == 8 })
        #expect(seen.last??.first?.title == FeedPost.sampleFeed(count: 8, seed: 1).first?.title)

        // And a newer edition written by yet another run.
        _ = try await ExampleProgram(name: "news-feed").run(
            ["--root", scratch.cacheRoot, "--server-delay", "0", "--force-stale", "--edition", "2"], scratch: scratch.url)
        #expect(await waitUntil(within: 30) { seen.last??.first?.title == FeedPost.sampleFeed(count: 8, seed: 2).first?.title })
    }

    private func waitUntil(within seconds: Double, _ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition()
    }
}
