import AppCacheKit
import Foundation
import MenuModel

/// `news-feed --one-post`: one post shown in four lists (the home timeline, paged; its
/// author's profile; the bookmarks list; its detail screen), bookmarked and liked offline, the
/// app killed, relaunched, and every list kept right with no code of the app's beyond the two
/// changes and their senders (`Changes.swift`).
///
/// Launch 1 opens the timeline (two pages), the bookmarks list and the post's detail screen,
/// loses the network, and bookmarks and likes the post on its detail screen. It is then killed:
/// the cache is dropped with nothing waiting in its memory (what a kill leaves), and launch 2
/// opens a new one on the same root. There the author's profile is opened for the first time:
/// the server still has the post unliked, and the profile shows it liked. Then the network
/// comes back, each change is sent once, and every list shows the server's post.
enum OnePost {
    /// The four lists, each a cached collection of `FeedPost`.
    struct Lists {
        var post: FeedPost
        var home: String { "home" }
        var profile: String { "profile:\(post.author.name)" }
        var bookmarks: String { "bookmarks" }
        var detail: String { "post:\(post.id)" }
        var all: [(name: String, key: String)] {
            [("home timeline", home), ("author's profile", profile), ("bookmarks", bookmarks), ("detail screen", detail)]
        }
    }

    static func run(root: URL, user: String) async throws {
        let catalog = FeedPost.sampleFeed(count: 12, seed: 5)
        // The server outlives the app's launches; it starts with one post bookmarked.
        let server = SocialServer(posts: catalog, bookmarked: [catalog[3].id], acceptsWrites: true)
        let lists = Lists(post: catalog[1])
        print("One post, every list: \"\(lists.post.title)\" by \(lists.post.author.name), user \(user), cache \(root.path(percentEncoded: false))")

        print("\nLaunch 1")
        let firstLaunch = try await launch1(root: root, user: user, server: server, lists: lists)
        // Killed: nothing of launch 1 runs any more (its sender stopped with it).
        for _ in 0..<200 where firstLaunch.cache != nil { try await Task.sleep(for: .milliseconds(5)) }
        print("[launch 1] killed\(firstLaunch.cache == nil ? "" : " (its cache is still alive: the demonstration is off)")")

        print("\nLaunch 2, the same root")
        let cache = try AppCache(configuration: configuration(root: root, user: user))
        registerSenders(on: cache, server: server)
        await server.setNetwork(reads: true, writes: false)
        print("[network] a weak signal: small reads get through, POSTs time out")
        print("[outbox] queued by launch 1: \(cache.pendingMutations.map(\.mutationName).joined(separator: ", "))")

        print("[profile] opened for the first time")
        for try await loaded in cache.load(FeedPost.self, forKey: lists.profile, policy: .fetchFirst, retry: .none, fetch: { _ in
            let posts = try await server.profile(of: lists.post.author.name)
            let old = posts.first { $0.id == lists.post.id }
            print("[server] GET /authors/\(lists.post.author.name)/posts: \(posts.count) posts, \"\(lists.post.title)\" \(old.map(marks) ?? "missing")")
            return .items(posts)
        }) {
            let shown = loaded.items.first { $0.id == lists.post.id }
            print("[profile] \(loaded.items.count) posts from the \(loaded.source == .fetch ? "server" : "cache"); shows \"\(lists.post.title)\" \(shown.map(marks) ?? "nowhere")")
        }
        try show(cache, lists)

        try await Task.sleep(for: .milliseconds(100))
        print("[network] back")
        await server.setNetwork(reads: true, writes: true)
        cache.networkDidBecomeAvailable()
        for _ in 0..<500 where !cache.pendingMutations.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        Bookmarks.report(cache.pendingMutations)
        print("[server] \(await server.writes) POST(s) reached the server")
        try show(cache, lists)
        try await check(cache, lists, against: server)
    }

    /// Launch 1: three lists opened online, then the bookmark and the like made offline.
    ///
    /// - Returns: the cache, weakly: it goes away when this returns.
    static func launch1(root: URL, user: String, server: SocialServer, lists: Lists) async throws -> WeakCache {
        let cache = try AppCache(configuration: configuration(root: root, user: user))
        registerSenders(on: cache, server: server)
        // An earlier run of this scenario opened the profile: forgotten, so launch 2 opens it first.
        try cache.removeItems(FeedPost.self, forKey: lists.profile)

        // The home timeline, two pages.
        for try await loaded in cache.load(FeedPost.self, forKey: lists.home, policy: .fetchFirst, retry: .none, fetch: { _ in
            let page = try await server.home(from: nil)
            return .page(page.items, next: page.next)
        }) where loaded.source == .fetch {
            print("[home] page 1: \(loaded.items.count) posts")
        }
        let home = try await cache.loadNextPage(FeedPost.self, forKey: lists.home) { cursor in try await server.home(from: cursor) }
        print("[home] page 2: \(home.items.count) posts")
        for try await loaded in cache.load(FeedPost.self, forKey: lists.bookmarks, policy: .fetchFirst, retry: .none, fetch: { _ in
            .items(try await server.bookmarks())
        }) where loaded.source == .fetch {
            print("[bookmarks] \(loaded.items.count) post(s)")
        }
        var detail: FeedPost?
        for try await loaded in cache.load(FeedPost.self, forKey: lists.detail, policy: .fetchFirst, retry: .none, fetch: { _ in
            .items(try await server.post(lists.post.id))
        }) where loaded.source == .fetch {
            detail = loaded.items.first
            print("[detail] \"\(lists.post.title)\" \(detail.map(marks) ?? "missing")")
        }
        // The app went to the background a moment: the cache wrote what it held in memory (it
        // does so itself on Apple platforms).
        try cache.flush()

        await server.setNetwork(reads: false, writes: false)
        print("[network] lost")
        guard let detail else { throw SocialServer.Unreachable() }
        let bookmark = try cache.enqueue(Bookmark(post: detail, isBookmarked: true))
        let like = try cache.enqueue(Like(postID: detail.id, isLiked: true))
        print("[detail] ★ then ♥, offline: queued as \(bookmark) and \(like), on disk before enqueue returned")
        try show(cache, lists)
        for _ in 0..<200 where cache.pendingMutations.first.map({ $0.lastError == nil }) ?? false { try await Task.sleep(for: .milliseconds(10)) }
        Bookmarks.report(cache.pendingMutations)
        print("[launch 1] \(cache.memoryStatistics.dirtyEntries) collection(s) in memory only (what a kill loses); the changes are on disk")
        return WeakCache(cache: cache)
    }

    /// What each list shows of the post.
    static func show(_ cache: AppCache, _ lists: Lists) throws {
        for (name, key) in lists.all {
            let label = name.padding(toLength: 17, withPad: " ", startingAt: 0)
            guard let items = try cache.getCachedItems(FeedPost.self, forKey: key) else {
                print("  \(label) not opened yet")
                continue
            }
            let shown = items.first { $0.id == lists.post.id }
            print("  \(label) \(shown.map(marks) ?? "does not hold it")   (\(items.count) post\(items.count == 1 ? "" : "s"))")
        }
    }

    /// Fetches every list again and compares it with what the cache shows.
    static func check(_ cache: AppCache, _ lists: Lists, against server: SocialServer) async throws {
        let home = try await server.home(from: nil).items + server.home(from: "page-5").items
        let fromServer = [
            lists.home: home,
            lists.profile: try await server.profile(of: lists.post.author.name),
            lists.bookmarks: try await server.bookmarks(),
            lists.detail: try await server.post(lists.post.id),
        ]
        var differing: [String] = []
        for (name, key) in lists.all {
            let shown = try cache.getCachedItems(FeedPost.self, forKey: key) ?? []
            if shown.map(\.id) != fromServer[key]?.map(\.id) || shown.map(marks) != fromServer[key]?.map(marks) { differing.append(name) }
        }
        print(differing.isEmpty
            ? "[check] every list fetched again from the server: the same as the cache shows"
            : "[check] differs from the server: \(differing.joined(separator: ", "))")
    }

    static func marks(_ post: FeedPost) -> String {
        let liked = post.tags.contains(Like.tag) ? "♥" : "♡"
        let bookmarked = post.tags.contains(Bookmark.tag) ? "★" : "☆"
        return "\(liked) \(bookmarked) \(post.likes ?? 0) likes"
    }

    static func configuration(root: URL, user: String) -> AppCache.Configuration {
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: user)
        configuration.diagnostics = { problem in printError("[cache] \(problem.message)") }
        return configuration
    }

    /// A cache held weakly, to see it go.
    struct WeakCache {
        weak var cache: AppCache?
    }
}
