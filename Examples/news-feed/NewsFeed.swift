import AppCacheKit
import Foundation
import MenuModel

/// A news app's feed screen, twice over, as a command-line program: the model layer is one
/// `load` call.
///
/// Two screens (the feed and a widget-like summary) open at once and ask for the same feed.
/// Cached posts show at once; when they are stale, one request to the (simulated) server
/// refreshes both; the server's ETag is kept with the posts, so an unchanged feed costs a
/// `304` that re-dates the archive without rewriting it; offline, both screens keep what they
/// had. Run it several times on one cache directory to see each case. With `--bookmark N` it
/// bookmarks a post with the network down: shown at once, queued durably, sent when the
/// network returns (or by the next launch). With `--one-post` it keeps one post liked and
/// bookmarked offline right in four lists, across a kill. With `--background-refresh` it is
/// launched as the system launches an app for a `BGAppRefreshTask`: one call refreshes the
/// stale feeds read recently and returns before the deadline.
@main
struct NewsFeed {
    static let usage = """
        usage: news-feed [--root DIR] [--user NAME] [--edition N] [--offline] [--force-stale]
                         [--server-delay MS] [--posts N] [--live]
                         [--bookmark N [--offline-for MS | --stay-offline]] [--one-post]
                         [--background-refresh [--deadline MS]]

          --root DIR          cache directory (default: <temporary directory>/news-feed-cache)
          --user NAME         whose feed (default: reader)
          --edition N         the server's current edition of the feed (default: 1); a new one
                              is new content with a new ETag
          --offline           the server cannot be reached
          --force-stale       treat cached posts as stale, so they are shown and then refreshed
          --server-delay MS   how long the server takes to answer (default: 300)
          --posts N           how many posts an edition has (default: 8)
          --live              the rest of the model layer instead: a paged timeline, a polled
                              live score, headlines refetched when the network comes back
          --bookmark N        bookmark the Nth cached post offline; the network returns after
                              --offline-for MS (default: 500), or not at all with --stay-offline
                              (the next launch sends it)
          --one-post          one post in four lists (home timeline, author's profile,
                              bookmarks, detail screen): bookmarked and liked offline, the app
                              killed and relaunched, every list kept right, then sent once
          --background-refresh  a launch for a background refresh task: refetch the stale feeds
                              read recently, send queued changes, flush, and return before
                              the deadline (--deadline MS, default: 2000)
        """

    static func main() async {
        let options: Options
        do {
            options = try Options(arguments: Array(CommandLine.arguments.dropFirst()))
        } catch {
            printError("news-feed: \(error)\n\n\(usage)")
            exit(2)
        }
        if options.help {
            print(usage)
            return
        }
        do {
            try await run(options)
        } catch {
            printError("news-feed: \(error)")
            exit(1)
        }
    }

    static func run(_ options: Options) async throws {
        var configuration = AppCache.Configuration(rootDirectory: options.root, schemaVersion: "1", user: options.user)
        if options.forceStale {
            configuration.setStalenessThreshold(.zero, for: FeedPost.self)
        }
        configuration.diagnostics = { problem in printError("[cache] recovered: \(problem.message)") }
        if options.onePost {
            try await OnePost.run(root: options.root, user: options.user)
            return
        }
        let cache = try AppCache(configuration: configuration)
        // Every launch registers its senders first: changes queued by an earlier run go out as
        // soon as the (simulated) network is there.
        let socialServer = SocialServer(acceptsWrites: !options.offline && options.bookmark == nil)
        let queuedEarlier = cache.pendingMutations.count
        if queuedEarlier > 0 { print("[outbox] \(queuedEarlier) change(s) queued by an earlier run") }
        registerSenders(on: cache, server: socialServer)
        let server = NewsServer(
            edition: options.edition, postCount: options.posts, offline: options.offline, delay: options.serverDelay)
        // Registered at every launch: the fetch a background refresh runs for every feed, and
        // what makes the cache record which feeds the reader used.
        cache.registerFetch(for: FeedPost.self) { context in
            try await server.topPosts(ifNoneMatch: context.validators?.etag)
        }
        if options.backgroundRefresh {
            print("News feed, background refresh: user \(options.user), server edition \(options.edition)\(options.offline ? ", offline" : ""), server delay \(options.serverDelay.wholeMilliseconds) ms")
            await BackgroundRefresh.run(cache: cache, deadline: options.deadline)
            return
        }
        if let number = options.bookmark {
            print("News feed, bookmarks: user \(options.user), cache \(options.root.path(percentEncoded: false))")
            try await Bookmarks.run(
                cache: cache, server: socialServer, number: number, offlineFor: options.offlineFor, staysOffline: options.staysOffline)
            return
        }
        if options.live {
            print("News feed, live: user \(options.user), cache \(options.root.path(percentEncoded: false))")
            try await LiveFeed.run(cache: cache, delay: options.serverDelay)
            return
        }
        print("News feed: user \(options.user), server edition \(options.edition)\(options.offline ? ", offline" : ""), cache \(options.root.path(percentEncoded: false))")

        // The whole model layer: one call. The closure is the network; everything else (cached
        // first, one request for every screen, validators, storing for this user) is the cache's.
        let feed = { @Sendable in
            cache.load(FeedPost.self, forKey: "top") { validators in
                try await server.topPosts(ifNoneMatch: validators?.etag)
            }
        }

        let archiveBefore = ArchiveFile.find(in: options.root, named: "FeedPosts+top.archive")
        // Two screens appear at once.
        async let feedScreen = show(feed(), on: "feed")
        async let summaryScreen = show(feed(), on: "summary")
        let (shownOnFeed, _) = try await (feedScreen, summaryScreen)

        let requests = await server.requests
        print("[server] \(requests) request\(requests == 1 ? "" : "s") for 2 screens")
        if let before = archiveBefore, let after = ArchiveFile.find(in: options.root, named: "FeedPosts+top.archive"),
            await server.lastStatus == 304
        {
            print("[disk] \(after.name): \(after.bytes) bytes, \(before.isRedatedOnly(after) ? "the same bytes after the 304, re-dated only" : "rewritten")")
        }
        for (index, post) in (shownOnFeed ?? []).prefix(3).enumerated() {
            print("  \(index + 1). \(post.tags.contains(Bookmark.tag) ? "★ " : "")\(post.title) (\(post.author.name))")
        }
        if queuedEarlier > 0 { try await Bookmarks.waitUntilSent(cache) }
    }

    /// Shows each answer of a load on one screen; returns the posts it ended with.
    static func show(_ answers: AsyncThrowingStream<LoadedItems<FeedPost>, any Error>, on screen: String) async throws -> [FeedPost]? {
        var shown: [FeedPost]?
        do {
            for try await answer in answers {
                shown = answer.items
                let age = Int(Date().timeIntervalSince(answer.cachedDate).rounded())
                let freshness = answer.isStale ? "stale" : "fresh"
                switch (answer.source, answer.refreshError) {
                case (_, let error?):
                    print("[\(screen)] keeps \(answer.items.count) cached posts; the refresh failed: \(error)")
                case (.memory, nil), (.disk, nil):
                    print("[\(screen)] \(answer.items.count) posts from the cache at once, cached \(age) s ago (\(freshness))")
                case (.fetch, nil):
                    print("[\(screen)] \(answer.items.count) posts from the server")
                case (.notModified, nil):
                    print("[\(screen)] \(answer.items.count) cached posts are current (304); re-dated now")
                }
            }
        } catch {
            print("[\(screen)] nothing to show: \(error)")
            return nil
        }
        if shown == nil { print("[\(screen)] nothing to show") }
        return shown
    }
}

/// The simulated news server: editions of a feed, each with its ETag, answering a conditional
/// request for an unchanged edition with `304 Not Modified`.
actor NewsServer {
    struct Offline: Error, CustomStringConvertible {
        var description: String { "the server cannot be reached (offline)" }
    }

    let edition: Int
    let postCount: Int
    let offline: Bool
    let delay: Duration
    private(set) var requests = 0
    private(set) var lastStatus: Int?

    init(edition: Int, postCount: Int, offline: Bool, delay: Duration) {
        self.edition = edition
        self.postCount = postCount
        self.offline = offline
        self.delay = delay
    }

    /// `GET /top`, with `If-None-Match` when the cache has an ETag.
    func topPosts(ifNoneMatch: String?) async throws -> FetchResult<FeedPost> {
        requests += 1
        let etag = "\"edition-\(edition)\""
        print("[server] GET /top\(ifNoneMatch.map { " If-None-Match: \($0)" } ?? "")")
        try await Task.sleep(for: delay)
        if offline { throw Offline() }
        if ifNoneMatch == etag {
            lastStatus = 304
            print("[server] 304 Not Modified")
            return .notModified
        }
        lastStatus = 200
        print("[server] 200 OK, edition \(edition), ETag \(etag)")
        return .items(FeedPost.sampleFeed(count: postCount, seed: edition), validators: CacheValidators(etag: etag))
    }
}

/// An archive as the inspector finds it on disk, with the size of the pack it is in, to show
/// that a 304 does not write it again.
struct ArchiveFile {
    var name: String
    var bytes: Int
    var cachedDate: Date
    /// The size of its user directory's pack (small archives are records in it).
    var packSize: Int

    static func find(in root: URL, named name: String) -> ArchiveFile? {
        guard let archive = (try? CacheRootListing.read(root: root).archives)?.first(where: { $0.path.hasSuffix("/" + name) }) else {
            return nil
        }
        let pack = URL(filePath: archive.path).deletingLastPathComponent().appending(path: ".pack").path(percentEncoded: false)
        let packSize = (try? FileManager.default.attributesOfItem(atPath: pack)[.size] as? Int) ?? 0
        return ArchiveFile(name: name, bytes: archive.bytes, cachedDate: archive.cachedDate, packSize: packSize)
    }

    /// Whether `later` is this archive re-dated only: the same size, a later date, and the
    /// pack grew by less than the archive (a re-dating record, not the archive again).
    func isRedatedOnly(_ later: ArchiveFile) -> Bool {
        later.bytes == bytes && later.cachedDate > cachedDate && later.packSize - packSize < bytes
    }
}

struct Options {
    var root = FileManager.default.temporaryDirectory.appending(path: "news-feed-cache", directoryHint: .isDirectory)
    var user = "reader"
    var edition = 1
    var offline = false
    var forceStale = false
    var serverDelay = Duration.milliseconds(300)
    var posts = 8
    var live = false
    var bookmark: Int?
    var offlineFor = Duration.milliseconds(500)
    var staysOffline = false
    var onePost = false
    var backgroundRefresh = false
    var deadline = Duration.milliseconds(2000)
    var help = false

    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    init(arguments: [String]) throws {
        var remaining = arguments[...]
        func value(for flag: String) throws -> String {
            guard let value = remaining.popFirst() else { throw Invalid(description: "\(flag) needs a value") }
            return value
        }
        func count(for flag: String) throws -> Int {
            guard let count = Int(try value(for: flag)), count >= 0 else { throw Invalid(description: "\(flag) takes a whole number") }
            return count
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--root": root = URL(filePath: try value(for: argument), directoryHint: .isDirectory)
            case "--user":
                user = try value(for: argument)
                guard !user.isEmpty else { throw Invalid(description: "--user must not be empty") }
            case "--edition": edition = try count(for: argument)
            case "--offline": offline = true
            case "--force-stale": forceStale = true
            case "--server-delay": serverDelay = .milliseconds(try count(for: argument))
            case "--posts": posts = try count(for: argument)
            case "--live": live = true
            case "--bookmark":
                bookmark = try count(for: argument)
                guard bookmark! >= 1 else { throw Invalid(description: "--bookmark counts posts from 1") }
            case "--offline-for": offlineFor = .milliseconds(try count(for: argument))
            case "--stay-offline": staysOffline = true
            case "--one-post": onePost = true
            case "--background-refresh": backgroundRefresh = true
            case "--deadline": deadline = .milliseconds(try count(for: argument))
            case "--help", "-h": help = true
            default: throw Invalid(description: "unknown option '\(argument)'")
            }
        }
    }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
