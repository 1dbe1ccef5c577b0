#if !canImport(SwiftUI, _version: 5.0)
import AppCacheTestSupport
import Foundation
import Testing

/// Runs swiftui-feed's model layer (its headless run, where SwiftUI does not exist) and checks
/// what the screens would show: fetched then cached, pages, a like shown at once and sent once.
struct SwiftUIFeedTests {
    let feed = ExampleProgram(name: "swiftui-feed")

    @Test func theFeedFetchesPagesAndLikesThenShowsTheCache() async throws {
        let scratch = try ExampleTests.Scratch()
        let first = try await feed.run(["--root", scratch.cacheRoot], scratch: scratch.url)
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardOutput.contains("[feed] 10 stories from the server, more: true"))
        #expect(first.standardOutput.contains("[pages] 20 stories, more: true"))
        #expect(first.standardOutput.contains("[like] Story 1: liked true, 4 likes, shown at once; waiting: 1"))
        #expect(first.standardOutput.contains("[like] sent: true, the server's count: 4"))
        #expect(first.standardOutput.contains("[server] 3 request(s): GET /stories, GET /stories?after=10, POST /stories/1/like"))

        let second = try await feed.run(["--root", scratch.cacheRoot], scratch: scratch.url)
        #expect(second.status == 0, "\(second.standardError)")
        #expect(second.standardOutput.contains("[feed] 20 stories from the cache, more: true"), "both pages kept, fresh: no fetch")
        #expect(second.standardOutput.contains("[pages] 25 stories, more: false"))
        #expect(!second.standardOutput.contains("GET /stories,"), "the first page was not fetched again")
        #expect(second.standardError.isEmpty)
    }
}
#endif
