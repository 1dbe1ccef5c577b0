import AppCacheKit
import Foundation

/// The feed's model layer, shared by the SwiftUI screens and the headless run: the cache, the
/// fetches the views declare, and the like's sender. No view model: the views declare what
/// they show with `@CachedItems`, and the cache keeps every screen current.
struct Feed: Sendable {
    /// The key of the feed's collection.
    static let key = "top"
    /// The most stories the feed keeps, however many pages are loaded.
    static let maxCount = 200

    let cache: AppCache
    let server: StoryServer

    /// Opens the feed's cache in `root` and registers the like's sender (before anything is
    /// enqueued, at every launch).
    init(root: URL, server: StoryServer) throws {
        cache = try AppCache(configuration: AppCache.Configuration(rootDirectory: root, schemaVersion: "1"))
        self.server = server
        cache.registerSender(for: LikeStory.self) { [weak cache] like, id in
            let story = try await server.like(like.storyID, isLiked: like.isLiked, idempotencyKey: id)
            _ = try cache?.replaceItem(story)
        }
    }

    /// The first page: what `@CachedItems` and `watch` call, with the stored ETag.
    var firstPage: @Sendable (LoadContext<Story>) async throws -> FetchResult<Story> {
        { [server] context in
            guard let page = try await server.page(after: nil, ifNoneMatch: context.validators?.etag) else { return .notModified }
            return .page(page.stories, next: page.next, validators: page.etag.map { CacheValidators(etag: $0) })
        }
    }

    /// The page at a cursor: what `$stories.loadNextPage()` calls.
    var nextPage: @Sendable (String) async throws -> Page<Story> {
        { [server] cursor in
            let page = try await server.page(after: cursor, ifNoneMatch: nil)
            return Page(items: page?.stories ?? [], next: page?.next)
        }
    }

    /// Likes (or unlikes) a story: shown at once, sent when the network allows.
    ///
    /// - Returns: the id of the queued change.
    @discardableResult
    func like(_ story: Story, _ isLiked: Bool = true) throws -> UUID {
        try cache.enqueue(LikeStory(storyID: story.id, isLiked: isLiked))
    }
}
