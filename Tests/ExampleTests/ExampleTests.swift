import AppCacheTestSupport
import Foundation
import Testing

/// Runs the built example programs in temporary directories and checks what they print.
struct ExampleTests {
    /// A directory of its own for one test (the example's cache root inside it).
    struct Scratch {
        let directory: TemporaryDirectory
        var url: URL { directory.url }
        var cacheRoot: String { url.appending(path: "cache").path(percentEncoded: false) }

        init() throws {
            directory = try TemporaryDirectory(prefix: "ExampleTests")
        }
    }

    let hotelMenu = ExampleProgram(name: "hotel-menu")

    /// The id news-feed printed for the bookmark it queued (`[bookmarks] queued as ID, ...`).
    static func queuedBookmark(in output: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix("[bookmarks] queued as ") }.map { String($0.split(separator: " ")[3].filter { $0 != "," }) }
    }
    let newsFeed = ExampleProgram(name: "news-feed")

    @Test func newsFeedShowsOneFetchForTwoScreensThenTheCache() async throws {
        let scratch = try Scratch()
        let first = try await newsFeed.run(["--root", scratch.cacheRoot, "--server-delay", "200"], scratch: scratch.url)
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardOutput.contains("[feed] 8 posts from the server"))
        #expect(first.standardOutput.contains("[summary] 8 posts from the server"))
        #expect(first.standardOutput.contains("[server] 1 request for 2 screens"), "two screens share one fetch")
        #expect(first.standardOutput.contains("1. Grüße aus Zürich #1000"))

        let second = try await newsFeed.run(["--root", scratch.cacheRoot, "--server-delay", "200"], scratch: scratch.url)
        #expect(second.status == 0, "\(second.standardError)")
        #expect(second.standardOutput.contains("[feed] 8 posts from the cache at once"))
        #expect(second.standardOutput.contains("(fresh)"))
        #expect(second.standardOutput.contains("[server] 0 requests for 2 screens"))
        #expect(second.standardError.isEmpty)
    }

    @Test func newsFeedBookmarksOfflineAndSendsWhenTheNetworkReturnsOrTheNextLaunch() async throws {
        let scratch = try Scratch()
        _ = try await newsFeed.run(["--root", scratch.cacheRoot, "--server-delay", "0"], scratch: scratch.url)

        // The network returns during the run: shown at once, waiting, then sent.
        let run = try await newsFeed.run(["--root", scratch.cacheRoot, "--bookmark", "2", "--offline-for", "100"], scratch: scratch.url)
        #expect(run.status == 0, "\(run.standardError)")
        let lines = run.standardOutput.split(separator: "\n").map(String.init)
        let id = try #require(Self.queuedBookmark(in: run.standardOutput))
        let shown = try #require(lines.firstIndex { $0.contains("2. ★ 東京の朝 #1001") })
        let waiting = try #require(lines.firstIndex { $0.hasPrefix("[outbox] waiting: bookmark \(id), tried 1 time(s)") })
        let sent = try #require(lines.firstIndex { $0.hasPrefix("[server] POST /bookmarks") && $0.hasSuffix("Idempotency-Key: \(id)") })
        #expect(shown < waiting && waiting < sent, "shown at once, waiting while offline, sent once the network is back")
        #expect(run.standardOutput.contains("[outbox] nothing waits"))
        #expect(lines.filter { $0.hasPrefix("[server] POST") }.count == 1)

        // Offline until the app quits: the next launch sends it, with the same id.
        let offline = try await newsFeed.run(["--root", scratch.cacheRoot, "--bookmark", "3", "--stay-offline"], scratch: scratch.url)
        #expect(offline.status == 0, "\(offline.standardError)")
        let queued = try #require(Self.queuedBookmark(in: offline.standardOutput))
        #expect(!offline.standardOutput.contains("[server] POST"))
        let next = try await newsFeed.run(["--root", scratch.cacheRoot, "--server-delay", "0"], scratch: scratch.url)
        #expect(next.status == 0, "\(next.standardError)")
        #expect(next.standardOutput.contains("[outbox] 1 change(s) queued by an earlier run"))
        #expect(next.standardOutput.contains("Idempotency-Key: \(queued)"))
        #expect(next.standardOutput.contains("2. ★ 東京の朝 #1001") && next.standardOutput.contains("3. ★ Café com pão #1002"), "both stay bookmarked")
        #expect(next.standardOutput.contains("[outbox] nothing waits"))
    }

    /// One post in four lists, bookmarked and liked offline on its detail screen; the app
    /// killed and relaunched; the author's profile opened for the first time shows the like;
    /// each change sent once; every list ends with the server's post.
    @Test func newsFeedKeepsOnePostRightInEveryListAcrossAKill() async throws {
        let scratch = try Scratch()
        let run = try await newsFeed.run(["--root", scratch.cacheRoot, "--one-post"], scratch: scratch.url)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardError.isEmpty)
        let lines = run.standardOutput.split(separator: "\n").map(String.init)
        func index(_ prefix: String) throws -> Int { try #require(lines.firstIndex { $0.hasPrefix(prefix) }, "\(prefix)") }
        let lists = ["  home timeline ", "  author's profile ", "  bookmarks ", "  detail screen "]
        func shown(after start: Int) -> [String] {
            lists.map { list in lines[start...].first { $0.hasPrefix(list) }.map { String($0.dropFirst(list.count)).trimmingCharacters(in: .whitespaces) } ?? "" }
        }

        let queued = try index("[detail] ★ then ♥, offline: queued as")
        #expect(shown(after: queued) == ["♥ ★ 7 likes   (10 posts)", "not opened yet", "♥ ★ 7 likes   (2 posts)", "♥ ★ 7 likes   (1 post)"])
        #expect(lines.contains("[launch 1] 0 collection(s) in memory only (what a kill loses); the changes are on disk"))
        let killed = try index("[launch 1] killed")
        #expect(lines[killed] == "[launch 1] killed")
        #expect(lines.contains("[outbox] queued by launch 1: bookmark, like"))
        // The profile's first fetch brings the server's old post; the like shows on it.
        let fetched = try index("[server] GET /authors/李娜/posts: 3 posts, \"東京の朝 #5001\" ♡ ☆ 7 likes")
        let profile = try index("[profile] 3 posts from the server; shows \"東京の朝 #5001\" ♥ ★ 7 likes")
        #expect(killed < fetched && fetched < profile)
        #expect(shown(after: profile) == ["♥ ★ 7 likes   (10 posts)", "♥ ★ 7 likes   (3 posts)", "♥ ★ 7 likes   (2 posts)", "♥ ★ 7 likes   (1 post)"])
        // Back online: each change sent once, in order; every list shows the server's post.
        let back = try index("[network] back")
        #expect(lines.filter { $0.hasPrefix("[server] POST") }.count == 2)
        let bookmark = try index("[server] POST /bookmarks post ")
        let like = try index("[server] POST /likes post ")
        #expect(back < bookmark && bookmark < like && lines[like].hasSuffix(": 8 likes"))
        let sent = try index("[outbox] nothing waits")
        #expect(shown(after: sent) == ["♥ ★ 8 likes   (10 posts)", "♥ ★ 8 likes   (3 posts)", "♥ ★ 8 likes   (2 posts)", "♥ ★ 8 likes   (1 post)"])
        #expect(lines.last == "[check] every list fetched again from the server: the same as the cache shows")

        // Again on the same root: the scenario starts over (the profile forgotten), the same way.
        let again = try await newsFeed.run(["--root", scratch.cacheRoot, "--one-post"], scratch: scratch.url)
        #expect(again.status == 0, "\(again.standardError)")
        #expect(again.standardOutput.contains("[profile] 3 posts from the server; shows \"東京の朝 #5001\" ♥ ★ 7 likes"))
        #expect(again.standardOutput.split(separator: "\n").last == "[check] every list fetched again from the server: the same as the cache shows")
    }

    @Test func newsFeedRefreshesInTheBackgroundWith304OfflineAndNewEditions() async throws {
        let scratch = try Scratch()
        _ = try await newsFeed.run(["--root", scratch.cacheRoot, "--server-delay", "0"], scratch: scratch.url)

        let unchanged = try await newsFeed.run(["--root", scratch.cacheRoot, "--server-delay", "200", "--force-stale"], scratch: scratch.url)
        #expect(unchanged.status == 0, "\(unchanged.standardError)")
        let lines = unchanged.standardOutput.split(separator: "\n").map(String.init)
        let cachedLine = try #require(lines.firstIndex { $0.hasPrefix("[feed] 8 posts from the cache at once") })
        let notModifiedLine = try #require(lines.firstIndex { $0.hasPrefix("[feed] 8 cached posts are current (304)") })
        #expect(cachedLine < notModifiedLine, "the cached posts show before the refresh answers")
        #expect(unchanged.standardOutput.contains("[server] GET /top If-None-Match: \"edition-1\""), "the stored ETag went out")
        #expect(unchanged.standardOutput.contains("the same bytes after the 304, re-dated only"))
        #expect(unchanged.standardOutput.contains("[server] 1 request for 2 screens"))

        let offline = try await newsFeed.run(["--root", scratch.cacheRoot, "--server-delay", "0", "--force-stale", "--offline"], scratch: scratch.url)
        #expect(offline.status == 0, "\(offline.standardError)")
        #expect(offline.standardOutput.contains("[feed] keeps 8 cached posts; the refresh failed: the server cannot be reached (offline)"))
        #expect(offline.standardOutput.contains("1. Grüße aus Zürich #1000"))

        let edition = try await newsFeed.run(
            ["--root", scratch.cacheRoot, "--server-delay", "0", "--force-stale", "--edition", "2"], scratch: scratch.url)
        #expect(edition.standardOutput.contains("[server] 200 OK, edition 2"))
        #expect(edition.standardOutput.contains("1. Grüße aus Zürich #2000"))

        let again = try await newsFeed.run(["--root", scratch.cacheRoot, "--server-delay", "0", "--offline"], scratch: scratch.url)
        #expect(again.standardOutput.contains("[server] 0 requests for 2 screens"))
        #expect(again.standardOutput.contains("1. Grüße aus Zürich #2000"), "the new edition was stored")
    }

    @Test func newsFeedRefreshesTheFeedReadLastTimeInABackgroundLaunchBeforeItsDeadline() async throws {
        let scratch = try Scratch()
        _ = try await newsFeed.run(["--root", scratch.cacheRoot, "--server-delay", "0"], scratch: scratch.url)

        // The system launches the app for a background refresh: nothing loaded yet, the feed
        // read in the last run is stale, and the server has a new edition.
        let refresh = try await newsFeed.run(
            ["--root", scratch.cacheRoot, "--background-refresh", "--force-stale", "--edition", "2", "--server-delay", "100", "--deadline", "20000"],
            scratch: scratch.url)
        #expect(refresh.status == 0, "\(refresh.standardError)")
        #expect(refresh.standardOutput.contains("[background] the system gave the app 20000 ms (a BGAppRefreshTask)"))
        #expect(refresh.standardOutput.contains("[server] GET /top If-None-Match: \"edition-1\""), "the stored ETag went out")
        #expect(refresh.standardOutput.contains("[background] refreshed 1: FeedPosts/top"))
        #expect(refresh.standardOutput.contains("[background] flushed: yes"))
        #expect(refresh.standardOutput.contains("before the deadline; everything done: yes"))

        // A server slower than the deadline: the fetch is cancelled (or, on a starved machine,
        // not started), nothing is stored, the call returns (the benchmark times it).
        let slow = try await newsFeed.run(
            ["--root", scratch.cacheRoot, "--background-refresh", "--force-stale", "--edition", "3", "--server-delay", "30000", "--deadline", "2000"],
            scratch: scratch.url)
        #expect(slow.status == 0, "\(slow.standardError)")
        #expect(
            slow.standardOutput.contains("[background] cancelled at the deadline 1: FeedPosts/top, skipped 0")
                || slow.standardOutput.contains("[background] cancelled at the deadline 0, skipped 1"), "\(slow.standardOutput)")
        #expect(slow.standardOutput.contains("[background] refreshed 0"))
        #expect(slow.standardOutput.contains("everything done: no"))

        let next = try await newsFeed.run(["--root", scratch.cacheRoot, "--server-delay", "0", "--offline"], scratch: scratch.url)
        #expect(next.standardOutput.contains("1. Grüße aus Zürich #2000"), "what the background refresh stored, kept through the cancelled one")
    }

    @Test func newsFeedRejectsUnknownOptions() async throws {
        let scratch = try Scratch()
        let result = try await newsFeed.run(["--edition", "two"], scratch: scratch.url)
        #expect(result.status == 2)
        #expect(result.standardError.contains("--edition takes a whole number"))
    }

    @Test func hotelMenuAnswersTheSecondRunFromTheCache() async throws {
        let scratch = try Scratch()
        let first = try await hotelMenu.run(["--root", scratch.cacheRoot, "--server-delay", "0", "--items", "4"], scratch: scratch.url)
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardOutput.contains("[cache] no cached menu"))
        #expect(first.standardOutput.contains("[server] 4 menu items received"))
        #expect(first.standardOutput.contains("[cache] saved 4 menu items"))
        #expect(first.standardOutput.contains("1. Laksa 1"))

        let second = try await hotelMenu.run(["--root", scratch.cacheRoot, "--server-delay", "0"], scratch: scratch.url)
        #expect(second.status == 0, "\(second.standardError)")
        #expect(second.standardOutput.contains("[cache] 4 menu items from the cache, cached"))
        #expect(second.standardOutput.contains("(fresh; threshold 10 min)"))
        #expect(second.standardOutput.contains("[server] not asked"))
        #expect(!second.standardOutput.contains("[server] fetching"))
        #expect(second.standardError.isEmpty)
    }

    @Test func hotelMenuShowsStaleItemsThenRefreshes() async throws {
        let scratch = try Scratch()
        _ = try await hotelMenu.run(["--root", scratch.cacheRoot, "--server-delay", "0", "--items", "3"], scratch: scratch.url)
        let stale = try await hotelMenu.run(
            ["--root", scratch.cacheRoot, "--server-delay", "0", "--items", "5", "--force-stale"], scratch: scratch.url)
        #expect(stale.status == 0)
        let lines = stale.standardOutput.split(separator: "\n").map(String.init)
        let cachedLine = try #require(lines.firstIndex { $0.hasPrefix("[cache] 3 menu items from the cache") })
        let fetchLine = try #require(lines.firstIndex { $0.hasPrefix("[server] fetching") })
        #expect(lines[cachedLine].contains("(stale;"))
        #expect(cachedLine < fetchLine, "the cached items are shown before the server answers")
        #expect(stale.standardOutput.contains("[cache] saved 5 menu items"))
    }

    @Test func hotelMenuKeepsUsersApart() async throws {
        let scratch = try Scratch()
        _ = try await hotelMenu.run(["--root", scratch.cacheRoot, "--server-delay", "0", "--user", "alice"], scratch: scratch.url)
        let bob = try await hotelMenu.run(["--root", scratch.cacheRoot, "--server-delay", "0", "--user", "bob"], scratch: scratch.url)
        #expect(bob.standardOutput.contains("user bob"))
        #expect(bob.standardOutput.contains("[cache] no cached menu"))
        let alice = try await hotelMenu.run(["--root", scratch.cacheRoot, "--server-delay", "0", "--user", "alice"], scratch: scratch.url)
        #expect(alice.standardOutput.contains("[cache] 12 menu items from the cache"))
    }

    @Test func hotelMenuSchemaBumpWipesTheOldCache() async throws {
        let scratch = try Scratch()
        _ = try await hotelMenu.run(["--root", scratch.cacheRoot, "--server-delay", "0"], scratch: scratch.url)
        #expect(FileManager.default.fileExists(atPath: scratch.cacheRoot + "/version-1"))
        let bumped = try await hotelMenu.run(
            ["--root", scratch.cacheRoot, "--server-delay", "0", "--schema-version", "2"], scratch: scratch.url)
        #expect(bumped.status == 0)
        #expect(bumped.standardOutput.contains("schema 2"))
        #expect(bumped.standardOutput.contains("[cache] no cached menu"))
        #expect(!FileManager.default.fileExists(atPath: scratch.cacheRoot + "/version-1"))
        #expect(FileManager.default.fileExists(atPath: scratch.cacheRoot + "/version-2"))
    }

    @Test func hotelMenuRejectsUnknownOptions() async throws {
        let scratch = try Scratch()
        let result = try await hotelMenu.run(["--root", scratch.cacheRoot, "--fast"], scratch: scratch.url)
        #expect(result.status == 2)
        #expect(result.standardError.contains("unknown option '--fast'"))
        #expect(result.standardError.contains("usage: hotel-menu"))
        let missing = try await hotelMenu.run(["--server-delay"], scratch: scratch.url)
        #expect(missing.status == 2)
        #expect(missing.standardError.contains("--server-delay needs a value"))
    }

    @Test func hotelMenuReportsAnUnusableRoot() async throws {
        let scratch = try Scratch()
        let file = scratch.url.appending(path: "a-file").path(percentEncoded: false)
        try Data("x".utf8).write(to: URL(filePath: file))
        let result = try await hotelMenu.run(["--root", file], scratch: scratch.url)
        #expect(result.status == 1)
        #expect(result.standardError.contains("AppCacheError.notADirectory"))
    }

    @Test func switchUserShowsUsersApart() async throws {
        let scratch = try Scratch()
        let result = try await ExampleProgram(name: "switch-user").run(["--root", scratch.cacheRoot], scratch: scratch.url)
        #expect(result.status == 0, "\(result.standardError)")
        let expected = [
            "alice: cached 3 items; sees 3 items:",
            "bob: switched; sees no cached items",
            "bob: cached 5 items; sees 5 items:",
            "(signed out): signed out; sees no cached items",
            "alice: switched back; sees 3 items:",
            "alice: removed all of alice's items; sees no cached items",
            "bob: switched; sees 5 items:",
            "  version-1/user-bob/MenuItems.archive",
        ]
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        var searchFrom = 0
        for line in expected {
            let index = try #require(lines[searchFrom...].firstIndex { $0.hasPrefix(line) }, "missing, or out of order: \(line)")
            searchFrom = index + 1
        }
        #expect(!result.standardOutput.contains("user-alice/"))
    }

    @Test func schemaBumpShowsTheWipe() async throws {
        let scratch = try Scratch()
        let result = try await ExampleProgram(name: "schema-bump").run(["--root", scratch.cacheRoot], scratch: scratch.url)
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        // Model upgrades: both older versions read under version 3 and written back.
        #expect(lines.contains("  on disk: version-1/user-alice/Dishes+dinner.archive (model v2), version-1/user-alice/Dishes+lunch.archive (model v1)"))
        #expect(lines.contains { $0.hasPrefix("  lunch under release 3: Laksa 1250¢, Roti 400¢ (cached ") })
        #expect(lines.contains { $0.hasPrefix("  dinner under release 3: Rendang 1650¢ (cached ") })
        #expect(lines.contains("  on disk: version-1/user-alice/Dishes+dinner.archive (model v3), version-1/user-alice/Dishes+lunch.archive (model v3)"))
        // A cache-wide schema version: wiped.
        #expect(lines.contains("alice under 2: no cached dishes (the schema 1 data was wiped)"))
        #expect(lines.contains("  on disk: (nothing)"))
        #expect(lines.last == "  on disk: version-2/user-alice/MenuItems.archive (model v1)")
    }

    @Test func newsFeedLivePagesPollsAndRefetchesOnReconnect() async throws {
        let scratch = try Scratch()
        let result = try await newsFeed.run(["--root", scratch.cacheRoot, "--live", "--server-delay", "5"], scratch: scratch.url)
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(Array(lines.filter { $0.hasPrefix("[timeline]") }) == [
            "[timeline] 5 posts, page 1; more: yes",
            "[timeline] 10 posts after page 2; more: yes",
            "[timeline] 15 posts after page 3; more: no",
        ])
        #expect(lines.filter { $0.hasPrefix("[live]") } == ["[live] 1 likes (poll 1)", "[live] 2 likes (poll 2)", "[live] 3 likes (poll 3)"])
        #expect(lines.contains("[headlines] keeps 3 cached, stale: true; the refetch failed: the server cannot be reached (offline)"))
        #expect(lines.last == "[headlines] 4 from the server after the reconnect (fetch)")
    }

    @Test func spillToDiskShowsSpillsWithOriginalDatesAndReadsBack() async throws {
        let scratch = try Scratch()
        let result = try await ExampleProgram(name: "spill-to-disk").run(["--root", scratch.cacheRoot], scratch: scratch.url)
        #expect(result.status == 0, "\(result.standardError)")
        let output = result.standardOutput
        let sections = output.components(separatedBy: "\ncached ")
        // Nothing is on disk until the fourth menu pushes the first out.
        #expect(sections.count == 6)
        for section in sections[1...3] {
            #expect(section.contains("disk: (no archives)"))
        }
        #expect(sections[4].hasPrefix("lobby"))
        #expect(sections[4].contains("spills 1"))
        #expect(sections[4].contains("+harbour.archive"))
        #expect(!sections[4].contains("+garden.archive"))

        let afterWarning = try #require(output.components(separatedBy: "memory warning\n").last)
        #expect(afterWarning.hasPrefix("  memory: entries 0, bytes 0, dirty 0"))
        // Each archive is dated when its menu was cached: in caching order, not writing order.
        let order = ["harbour", "garden", "rooftop", "lobby", "terrace"]
        let warningBlock = afterWarning.components(separatedBy: "reading every menu back")[0]
        let offsets = try order.map { restaurant -> Double in
            let line = try #require(warningBlock.split(separator: "\n").first { $0.contains("+\(restaurant).archive") })
            let offset = try #require(line.components(separatedBy: "modified +").last?.split(separator: " ").first)
            return try #require(Double(offset))
        }
        #expect(offsets == offsets.sorted())
        #expect(Set(offsets).count == offsets.count)

        for (index, restaurant) in order.enumerated() {
            #expect(output.contains("  \(restaurant): \(10 + index) items"))
        }
        #expect(output.hasSuffix("terrace.archive  modified +\(String(format: "%.2f", offsets[4])) s (when it was cached)\n"))
        #expect(output.contains("misses 5, spills 5"))
    }
}
