public import AppCacheKit
public import Foundation

/// A post in a news feed: the nested sample model (identifiers, dates, an author with an
/// optional homepage, a kind, tags, an optional count and text in many scripts), used by the
/// news-feed example, the tests and the benchmarks beside the flat `MenuItem`.
public struct FeedPost: CacheableModel, Hashable {
    /// Who wrote a post.
    public struct Author: Codable, Hashable, Sendable {
        /// The author's display name.
        public var name: String
        /// The author's web page, if they have one.
        public var homepage: URL?

        /// Creates an author.
        public init(name: String, homepage: URL?) {
            self.name = name
            self.homepage = homepage
        }
    }

    /// What kind of post it is.
    public enum Kind: String, Codable, Hashable, Sendable {
        case article, photo, link
    }

    /// The post's identifier.
    public var id: UUID
    /// When it was published.
    public var published: Date
    /// Who wrote it.
    public var author: Author
    /// What kind of post it is.
    public var kind: Kind
    /// Its headline.
    public var title: String
    /// Its text.
    public var body: String
    /// Its tags.
    public var tags: [String]
    /// How many readers liked it, when the server says.
    public var likes: Int?

    /// Creates a post.
    public init(
        id: UUID, published: Date, author: Author, kind: Kind, title: String, body: String, tags: [String], likes: Int?
    ) {
        self.id = id
        self.published = published
        self.author = author
        self.kind = kind
        self.title = title
        self.body = body
        self.tags = tags
        self.likes = likes
    }

    /// Posts are fresh for five minutes.
    public static var stalenessThreshold: Duration? { .seconds(300) }
}

extension FeedPost {
    /// A feed of `count` posts, the same for the same `count` and `seed`.
    public static func sampleFeed(count: Int, seed: Int = 0) -> [FeedPost] {
        let authors = ["Zoë Kraus", "李娜", "Óscar Núñez", "Aarav Shah", "Ngozi Okafor"]
        let headlines = ["Grüße aus Zürich", "東京の朝", "Café com pão", "Monsoon diaries", "Ночь в Москве"]
        return (0..<count).map { index in
            let number = index + seed * 1_000
            let author = authors[number % authors.count]
            var uuidBytes = [UInt8](repeating: 0, count: 16)
            withUnsafeBytes(of: UInt64(number).littleEndian) { uuidBytes.replaceSubrange(0..<8, with: $0) }
            withUnsafeBytes(of: UInt64(seed).littleEndian) { uuidBytes.replaceSubrange(8..<16, with: $0) }
            let id = uuidBytes.withUnsafeBytes { UUID(uuid: $0.load(as: uuid_t.self)) }
            return FeedPost(
                id: id,
                published: Date(timeIntervalSince1970: 1_780_000_000 + Double(number) * 60),
                author: Author(
                    name: author,
                    homepage: number.isMultiple(of: 3) ? nil : URL(string: "https://people.example.com/\(number % 97)")),
                kind: [.article, .photo, .link][number % 3],
                title: "\(headlines[number % headlines.count]) #\(number)",
                body: "Post \(number) by \(author): 🍜 notes from the road, with café stops and 雨 in the afternoon.",
                tags: Array(["travel", "food", "städte", "夜"].prefix(number % 5)),
                likes: number.isMultiple(of: 4) ? nil : number * 7 % 500)
        }
    }
}

/// Posts are identified by their server id: a page that brings a post again replaces it.
extension FeedPost: Identifiable {}
