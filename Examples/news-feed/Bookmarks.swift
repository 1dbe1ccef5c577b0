import AppCacheKit
import Foundation
import MenuModel

/// The bookmark part of the example: the lines an app writes, and what a reader sees.
enum Bookmarks {
    /// Bookmarks the `number`th cached post with the network down, shows it bookmarked at once
    /// and waiting, then (unless `staysOffline`) brings the network back and waits until the
    /// server has it.
    static func run(cache: AppCache, server: SocialServer, number: Int, offlineFor: Duration, staysOffline: Bool) async throws {
        guard let posts = try cache.getCachedItems(FeedPost.self, forKey: "top"), posts.indices.contains(number - 1) else {
            print("[bookmarks] post \(number) is not cached; run news-feed once online first")
            return
        }
        let post = posts[number - 1]
        print("[bookmarks] offline: bookmarking \"\(post.title)\"")
        let id = try cache.enqueue(Bookmark(post: post, isBookmarked: true))
        print("[bookmarks] queued as \(id), on disk before enqueue returned")
        show(try cache.getCachedItems(FeedPost.self, forKey: "top") ?? [], upTo: number)
        // The first send fails: no network.
        for _ in 0..<200 where cache.pendingMutations.first.map({ $0.lastError == nil }) ?? false { try await Task.sleep(for: .milliseconds(10)) }
        report(cache.pendingMutations)
        if staysOffline {
            print("[bookmarks] still offline: the bookmark waits in the queue for the next launch")
            return
        }
        try await Task.sleep(for: offlineFor)
        print("[network] back")
        await server.setNetwork(reads: true, writes: true)
        cache.networkDidBecomeAvailable()
        try await waitUntilSent(cache)
        show(try cache.getCachedItems(FeedPost.self, forKey: "top") ?? [], upTo: number)
    }

    /// Waits (a few seconds at most) until the queue is empty, and says so.
    static func waitUntilSent(_ cache: AppCache) async throws {
        for _ in 0..<500 where !cache.pendingMutations.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        report(cache.pendingMutations)
    }

    static func report(_ pending: [PendingMutation]) {
        guard !pending.isEmpty else {
            print("[outbox] nothing waits: the server has every change")
            return
        }
        for change in pending {
            print("[outbox] waiting: \(change.mutationName) \(change.id), tried \(change.attempts) time(s), last error: \(change.lastError ?? "none")")
        }
    }

    static func show(_ posts: [FeedPost], upTo number: Int) {
        for (index, post) in posts.prefix(max(number, 3)).enumerated() {
            print("  \(index + 1). \(post.tags.contains(Bookmark.tag) ? "★ " : "")\(post.title)")
        }
    }
}
