import AppCacheKit
import Foundation
import MenuModel

// The glue an app writes to keep one post right in every list that shows it (the home
// timeline, its author's profile, the bookmarks list, its detail screen), made offline or not:
// the two changes, and their senders registered at launch. Nothing else: the cache applies a
// queued change to every cached collection holding the post, including collections fetched,
// paged or first opened after it was queued, and across a kill.

/// Liking a post: sets its "liked" tag wherever it is cached (sets, never toggles: it is applied
/// again to every list the server sends until the server has it).
struct Like: ItemMutation {
    static let mutationName = "like"
    static let tag = "liked"
    var postID: FeedPost.ID
    var isLiked: Bool
    var itemIDs: [FeedPost.ID] { [postID] }
    func apply(to post: inout FeedPost) { post.setTag(Self.tag, isLiked) }
}

/// Bookmarking a post: sets its "bookmarked" tag wherever it is cached, and adds it to (or
/// drops it from) the bookmarks list, which may not hold it yet.
struct Bookmark: ItemMutation {
    static let mutationName = "bookmark"
    static let tag = "bookmarked"
    var post: FeedPost
    var isBookmarked: Bool
    var itemIDs: [FeedPost.ID] { [post.id] }
    var key: String? { "bookmarks" }
    func apply(to post: inout FeedPost) { post.setTag(Self.tag, isBookmarked) }
    func apply(to items: inout [FeedPost], key: String?) {
        if key == "bookmarks" {
            if !isBookmarked {
                items.removeAll { $0.id == post.id }
            } else if !items.contains(where: { $0.id == post.id }) {
                items.insert(post, at: 0)
            }
        }
        applyToItems(&items)
    }
}

extension FeedPost {
    /// Adds or removes a tag (once).
    mutating func setTag(_ tag: String, _ isSet: Bool) {
        tags.removeAll { $0 == tag }
        if isSet { tags.append(tag) }
    }
}

/// The senders, registered at every launch before anything is enqueued. Each writes the post
/// the server answers with into every list holding it (`replaceItem`): the like count is the
/// server's.
func registerSenders(on cache: AppCache, server: SocialServer) {
    cache.registerSender(for: Like.self) { [weak cache] like, id in
        try cache?.replaceItem(try await server.like(like, id: id))
    }
    cache.registerSender(for: Bookmark.self) { [weak cache] bookmark, id in
        try cache?.replaceItem(try await server.bookmark(bookmark, id: id))
    }
}

/// The simulated social server: posts, the user's likes and bookmarks, and the endpoints
/// that change them (each takes a change once per idempotency key). Writes fail while
/// `acceptsWrites` is false (offline, or a signal too weak for a POST).
actor SocialServer {
    struct Unreachable: Error, CustomStringConvertible {
        var description: String { "the server cannot be reached (offline)" }
    }

    private(set) var acceptsWrites: Bool
    private(set) var acceptsReads = true
    /// The posts the server knows, as it has them (tags included).
    private var posts: [FeedPost]
    /// The bookmarked posts' ids, newest first.
    private var bookmarked: [FeedPost.ID]
    private var received: Set<UUID> = []
    /// How many POSTs reached it.
    private(set) var writes = 0

    /// - Parameter posts: the posts it knows; `bookmarked` of them are bookmarked.
    init(posts: [FeedPost] = [], bookmarked: [FeedPost.ID] = [], acceptsWrites: Bool) {
        self.posts = posts
        self.bookmarked = bookmarked
        self.acceptsWrites = acceptsWrites
        for id in bookmarked {
            if let index = self.posts.firstIndex(where: { $0.id == id }) { self.posts[index].setTag(Bookmark.tag, true) }
        }
    }

    func setNetwork(reads: Bool, writes: Bool) {
        acceptsReads = reads
        acceptsWrites = writes
    }

    /// `GET /home?cursor=`: 5 posts a page.
    func home(from cursor: String?) throws -> Page<FeedPost> {
        guard acceptsReads else { throw Unreachable() }
        let start = cursor.flatMap { Int($0.dropFirst(5)) } ?? 0
        let end = min(start + 5, posts.count)
        return Page(items: Array(posts[start..<end]), next: end < posts.count ? "page-\(end)" : nil)
    }

    /// `GET /authors/NAME/posts`.
    func profile(of author: String) throws -> [FeedPost] {
        guard acceptsReads else { throw Unreachable() }
        return posts.filter { $0.author.name == author }
    }

    /// `GET /bookmarks`.
    func bookmarks() throws -> [FeedPost] {
        guard acceptsReads else { throw Unreachable() }
        return bookmarked.compactMap { id in posts.first { $0.id == id } }
    }

    /// `GET /posts/ID`.
    func post(_ id: FeedPost.ID) throws -> [FeedPost] {
        guard acceptsReads else { throw Unreachable() }
        return posts.filter { $0.id == id }
    }

    /// `POST /likes` with an `Idempotency-Key`: the post as it is now.
    func like(_ like: Like, id: UUID) throws -> FeedPost {
        guard acceptsWrites else { throw URLError(.notConnectedToInternet) }
        writes += 1
        guard let index = posts.firstIndex(where: { $0.id == like.postID }) else { throw MutationRejected(reason: "no such post") }
        guard received.insert(id).inserted else {
            print("[server] POST /likes Idempotency-Key: \(id): already done")
            return posts[index]
        }
        if posts[index].tags.contains(Like.tag) != like.isLiked {
            posts[index].setTag(Like.tag, like.isLiked)
            posts[index].likes = (posts[index].likes ?? 0) + (like.isLiked ? 1 : -1)
        }
        print("[server] POST /likes post \(like.postID.uuidString.prefix(8)) liked=\(like.isLiked) Idempotency-Key: \(id): \(posts[index].likes ?? 0) likes")
        return posts[index]
    }

    /// `POST /bookmarks` with an `Idempotency-Key`: the post as it is now.
    func bookmark(_ bookmark: Bookmark, id: UUID) throws -> FeedPost {
        guard acceptsWrites else { throw URLError(.notConnectedToInternet) }
        writes += 1
        guard received.insert(id).inserted else {
            print("[server] POST /bookmarks Idempotency-Key: \(id): already done")
            return posts.first { $0.id == bookmark.post.id } ?? bookmark.post
        }
        print("[server] POST /bookmarks post \(bookmark.post.id.uuidString.prefix(8)) bookmarked=\(bookmark.isBookmarked) Idempotency-Key: \(id)")
        bookmarked.removeAll { $0 == bookmark.post.id }
        if bookmark.isBookmarked { bookmarked.insert(bookmark.post.id, at: 0) }
        guard let index = posts.firstIndex(where: { $0.id == bookmark.post.id }) else {
            // A post of the top feed, which this server does not keep: it answers with the post.
            var post = bookmark.post
            post.setTag(Bookmark.tag, bookmark.isBookmarked)
            return post
        }
        posts[index].setTag(Bookmark.tag, bookmark.isBookmarked)
        return posts[index]
    }
}
