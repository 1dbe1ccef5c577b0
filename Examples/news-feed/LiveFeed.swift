import AppCacheKit
import Foundation
import MenuModel

/// `news-feed --live`: the rest of a news app's model layer, in the lines an app writes.
///
/// - A paged timeline: the first page from a load (`.page(items, next:)`), then
///   `loadNextPage` until the server says there is no more.
/// - A live score, polled while watched (`RefreshTriggers(every:)`).
/// - Headlines invalidated by a settings change while offline: the watch keeps the cached items
///   with the error, then refetches when the network comes back (`networkDidBecomeAvailable()`,
///   what the system's path monitor calls on Apple platforms).
enum LiveFeed {
    static func run(cache: AppCache, delay: Duration) async throws {
        let server = LiveServer(delay: delay)

        // 1. A paged timeline.
        for try await loaded in cache.load(FeedPost.self, forKey: "timeline", policy: .fetchFirst, retry: .none, fetch: { _ in
            try await server.timeline(from: nil)
        }) {
            print("[timeline] \(loaded.items.count) posts, page 1; more: \(cache.hasNextPage(FeedPost.self, forKey: "timeline") ? "yes" : "no")")
        }
        var page = 1
        while cache.hasNextPage(FeedPost.self, forKey: "timeline") {
            let all = try await cache.loadNextPage(FeedPost.self, forKey: "timeline", maxCount: 100) { cursor in
                try await server.timeline(from: cursor)
            }
            page += 1
            print("[timeline] \(all.items.count) posts after page \(page); more: \(cache.hasNextPage(FeedPost.self, forKey: "timeline") ? "yes" : "no")")
        }

        // 2. A live score, polled every 100 ms while watched.
        let live = cache.watch(FeedPost.self, forKey: "live", refresh: RefreshTriggers(every: .milliseconds(100)), retry: .none) { _ in
            .items([try await server.score()])
        }
        var polls = 0
        for try await loaded in live {
            guard loaded.source == .fetch, let likes = loaded.items.first?.likes else { continue }
            polls += 1
            print("[live] \(likes) likes (poll \(polls))")
            if polls == 3 { break }  // leaving the screen ends the watch and its polling
        }

        // 3. Headlines: a settings change invalidates them while offline; the network comes back.
        try cache.cacheItems(FeedPost.sampleFeed(count: 3, seed: 40), forKey: "headlines")
        let headlines = cache.watch(FeedPost.self, forKey: "headlines", retry: .none) { _ in
            .items(try await server.headlines())
        }
        await server.setOffline(true)
        let watching = Task {
            var step = 0
            for try await loaded in headlines {
                step += 1
                switch (step, loaded.refreshError) {
                case (1, _):
                    print("[headlines] \(loaded.items.count) cached; the user changes a setting (invalidate) while offline")
                    try cache.invalidate(FeedPost.self, forKey: "headlines")
                case (_, let error?):
                    print("[headlines] keeps \(loaded.items.count) cached, stale: \(loaded.isStale); the refetch failed: \(error)")
                    await server.setOffline(false)
                    print("[network] back online")
                    cache.networkDidBecomeAvailable()
                case (_, nil):
                    print("[headlines] \(loaded.items.count) from the server after the reconnect (\(loaded.source))")
                    return
                }
            }
        }
        try await watching.value
    }
}

/// The simulated server of the live demo: timeline pages by cursor, a score, headlines.
actor LiveServer {
    let delay: Duration
    private var offline = false
    private var likes = 0

    init(delay: Duration) {
        self.delay = delay
    }

    func setOffline(_ offline: Bool) {
        self.offline = offline
    }

    /// `GET /timeline?max_id=cursor`: 5 posts a page, 3 pages.
    func timeline(from cursor: String?) async throws -> FetchResult<FeedPost> {
        let page = try await timelinePage(from: cursor)
        return .page(page.items, next: page.next)
    }

    func timeline(from cursor: String) async throws -> Page<FeedPost> {
        try await timelinePage(from: cursor)
    }

    private func timelinePage(from cursor: String?) async throws -> Page<FeedPost> {
        try await Task.sleep(for: delay)
        let all = FeedPost.sampleFeed(count: 15, seed: 7)
        let start = cursor.flatMap { Int($0.dropFirst(5)) } ?? 0
        let items = Array(all[start..<min(start + 5, all.count)])
        return Page(items: items, next: start + 5 < all.count ? "page-\(start + 5)" : nil)
    }

    /// `GET /live`: the live post, one more like each time.
    func score() async throws -> FeedPost {
        try await Task.sleep(for: delay)
        if offline { throw NewsServer.Offline() }
        likes += 1
        var post = FeedPost.sampleFeed(count: 1, seed: 9)[0]
        post.likes = likes
        return post
    }

    func headlines() async throws -> [FeedPost] {
        try await Task.sleep(for: delay)
        if offline { throw NewsServer.Offline() }
        return FeedPost.sampleFeed(count: 4, seed: 41)
    }
}
