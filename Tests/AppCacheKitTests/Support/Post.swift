import Foundation

@testable import AppCacheKit

/// A post of a social app: the one item that a timeline, its author's profile, the bookmarks
/// list and its detail screen all hold. Counts its decodes, so that tests can tell how many
/// collections a call read.
struct Post: CacheableModel, Identifiable, Equatable {
    var id: Int
    var author: String
    var title: String
    var isLiked = false
    var isBookmarked = false
    var likes = 0

    static var cacheName: String { "Posts" }

    init(id: Int, author: String = "ann", title: String? = nil) {
        self.id = id
        self.author = author
        self.title = title ?? "Post \(id)"
    }

    enum CodingKeys: String, CodingKey {
        case id, author, title, isLiked, isBookmarked, likes
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        author = try container.decode(String.self, forKey: .author)
        title = try container.decode(String.self, forKey: .title)
        isLiked = try container.decode(Bool.self, forKey: .isLiked)
        isBookmarked = try container.decode(Bool.self, forKey: .isBookmarked)
        likes = try container.decode(Int.self, forKey: .likes)
        Post.decodes?.withLock { $0 += 1 }
        // Only a title made for a hook takes the lock: other decodes stay as the library's.
        if title.hasPrefix(Post.hookedTitlePrefix), let hook = Post.decodeHooks.withLock({ $0.removeValue(forKey: title) }) { hook() }
    }

    /// Hooks by post title, each run once, in the first decode of a post with its title,
    /// whatever the thread: a test's way into the middle of a read. The titles begin with
    /// ``hookedTitlePrefix``.
    static let decodeHooks = Locked<[String: @Sendable () -> Void]>([:])

    /// How the title of a post with a decode hook begins.
    static let hookedTitlePrefix = "Hooked post "

    /// Counts the posts decoded on this task (synchronous calls decode on the caller's thread):
    /// `Post.$decodes.withValue(counter) { ... }`.
    @TaskLocal static var decodes: Locked<Int>?

    /// `posts` with `change` applied to the one with `id`.
    static func changing(_ posts: [Post], _ id: Int, _ change: (inout Post) -> Void) -> [Post] {
        posts.map { post in
            var post = post
            if post.id == id { change(&post) }
            return post
        }
    }
}
