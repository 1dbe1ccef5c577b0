import AppCacheKit
import AppCacheTestSupport
import Foundation
import MenuModel
import Testing

/// `updates(of:forKey:)` in this process following writes another process makes on the same
/// root: the news-feed example run as the other process, as a widget follows its app.
struct CrossProcessUpdatesTests {
    /// That it arrives; how soon is the benchmark program's `updates` row, not timed here.
    @Test func anotherProcessesWriteReachesUpdates() async throws {
        let scratch = try ExampleTests.Scratch()
        let root = URL(filePath: scratch.cacheRoot, directoryHint: .isDirectory)
        let cache = try AppCache(configuration: .init(rootDirectory: root, schemaVersion: "1", user: "reader"))
        defer { withExtendedLifetime(cache) {} }  // an updates stream holds its cache weakly
        let seen = StreamRecorder(cache.updates(FeedPost.self, forKey: "top"))
        defer { seen.stop() }
        #expect(await eventually(within: 120) { seen.last == .some(nil) }, "nothing cached at first")

        // Another process fetches edition 1 and writes it on its way out.
        let run = try await ExampleProgram(name: "news-feed").run(["--root", scratch.cacheRoot, "--server-delay", "0"], scratch: scratch.url)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(await eventually(within: 120) { seen.last??.count == 8 })
        #expect(seen.last??.first?.title == FeedPost.sampleFeed(count: 8, seed: 1).first?.title)

        // And a newer edition written by yet another run.
        _ = try await ExampleProgram(name: "news-feed").run(
            ["--root", scratch.cacheRoot, "--server-delay", "0", "--force-stale", "--edition", "2"], scratch: scratch.url)
        #expect(await eventually(within: 120) { seen.last??.first?.title == FeedPost.sampleFeed(count: 8, seed: 2).first?.title })
    }
}
