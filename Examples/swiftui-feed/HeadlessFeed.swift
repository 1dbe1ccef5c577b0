#if !canImport(SwiftUI, _version: 5.0)
import AppCacheKit
import Foundation

/// The feed's model layer without SwiftUI (Linux): what the screens do, step by step, through
/// the same fetches and the same mutation, printing what they would show.
///
/// ```sh
/// swift run swiftui-feed --root /tmp/feed   # 1st run: fetched; 2nd run: from the cache at once
/// ```
@main
struct HeadlessFeed {
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var root = FileManager.default.temporaryDirectory.appending(path: "swiftui-feed-cache")
        if let index = arguments.firstIndex(of: "--root"), index + 1 < arguments.count {
            root = URL(fileURLWithPath: arguments[index + 1])
            arguments.removeSubrange(index...index + 1)
        }
        do {
            try await run(root: root)
        } catch {
            FileHandle.standardError.write(Data("swiftui-feed: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run(root: URL) async throws {
        let server = StoryServer(delay: .milliseconds(20))
        let feed = try Feed(root: root, server: server)

        // The list appears: what memory holds shows at once, the disk is read off the main
        // thread, and the watch fetches what is missing or stale.
        var first: LoadedItems<Story>?
        for try await loaded in feed.cache.watch(Story.self, forKey: Feed.key, fetch: feed.firstPage) {
            first = loaded
            break
        }
        guard let first else { return }
        print("[feed] \(first.items.count) stories from the \(first.source == .fetch ? "server" : "cache"), more: \(feed.cache.hasNextPage(Story.self, forKey: Feed.key))")

        // Scrolled to the bottom: the next page, appended and kept with the cursor.
        if feed.cache.hasNextPage(Story.self, forKey: Feed.key) {
            let all = try await feed.cache.loadNextPage(Story.self, forKey: Feed.key, maxCount: Feed.maxCount, fetch: feed.nextPage)
            print("[pages] \(all.items.count) stories, more: \(feed.cache.hasNextPage(Story.self, forKey: Feed.key))")
        }

        // A like, offline: shown at once in the list (and the detail screen), sent later.
        await server.setOnline(false)
        guard let story = try feed.cache.getCachedItems(Story.self, forKey: Feed.key)?.first else { return }
        try feed.like(story, !story.isLiked)
        let shown = try feed.cache.getCachedItems(Story.self, forKey: Feed.key)?.first
        print("[like] \(story.title): liked \(shown?.isLiked ?? false), \(shown?.likes ?? 0) likes, shown at once; waiting: \(feed.cache.pendingMutations.count)")
        await server.setOnline(true)
        feed.cache.networkDidBecomeAvailable()
        for _ in 0..<500 where !feed.cache.pendingMutations.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        let confirmed = try feed.cache.getCachedItems(Story.self, forKey: Feed.key)?.first
        print("[like] sent: \(feed.cache.pendingMutations.isEmpty), the server's count: \(confirmed?.likes ?? 0)")
        print("[server] \(await server.log.count) request(s): \(await server.log.map { $0.split(separator: " ").prefix(2).joined(separator: " ") }.joined(separator: ", "))")
        try feed.cache.flush()
    }
}
#endif
