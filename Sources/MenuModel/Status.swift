public import AppCacheKit
public import Foundation

/// A post as a Mastodon server's API returns it (a "status"): the large sample model, with
/// the API's snake_case keys, an account, media with nested metadata, mentions, tags, custom
/// emoji, a link card and an optional poll, about 4 KB of JSON each. The codec benchmark
/// measures it beside the flat `MenuItem` and the small nested `FeedPost`.
public struct Status: CacheableModel, Hashable, Identifiable {
    /// Who may see a status.
    public enum Visibility: String, Codable, Hashable, Sendable {
        case `public`, unlisted, `private`, direct
    }

    /// A custom emoji a server defines.
    public struct Emoji: Codable, Hashable, Sendable {
        public var shortcode: String
        public var url: URL
        public var staticURL: URL
        public var visibleInPicker: Bool

        enum CodingKeys: String, CodingKey {
            case shortcode, url
            case staticURL = "static_url"
            case visibleInPicker = "visible_in_picker"
        }
    }

    /// A name and value an account shows on its profile.
    public struct Field: Codable, Hashable, Sendable {
        public var name: String
        public var value: String
        public var verifiedAt: Date?

        enum CodingKeys: String, CodingKey {
            case name, value
            case verifiedAt = "verified_at"
        }
    }

    /// The author of a status.
    public struct Account: Codable, Hashable, Sendable {
        public var id: String
        public var username: String
        public var acct: String
        public var displayName: String
        public var locked: Bool
        public var bot: Bool
        public var discoverable: Bool?
        public var group: Bool
        public var createdAt: Date
        public var note: String
        public var url: URL
        public var avatar: URL
        public var avatarStatic: URL
        public var header: URL
        public var headerStatic: URL
        public var followersCount: Int
        public var followingCount: Int
        public var statusesCount: Int
        public var lastStatusAt: String?
        public var emojis: [Emoji]
        public var fields: [Field]

        enum CodingKeys: String, CodingKey {
            case id, username, acct, locked, bot, discoverable, group, note, url, avatar, header, emojis, fields
            case displayName = "display_name"
            case createdAt = "created_at"
            case avatarStatic = "avatar_static"
            case headerStatic = "header_static"
            case followersCount = "followers_count"
            case followingCount = "following_count"
            case statusesCount = "statuses_count"
            case lastStatusAt = "last_status_at"
        }
    }

    /// The size of an image or a video frame.
    public struct Size: Codable, Hashable, Sendable {
        public var width: Int
        public var height: Int
        public var size: String
        public var aspect: Double
    }

    /// A picture, a video or a sound attached to a status.
    public struct Attachment: Codable, Hashable, Sendable {
        /// What an attachment is.
        public enum Kind: String, Codable, Hashable, Sendable {
            case image, gifv, video, audio, unknown
        }

        /// The sizes of the original and of the preview.
        public struct Meta: Codable, Hashable, Sendable {
            public var original: Size
            public var small: Size
        }

        public var id: String
        public var type: Kind
        public var url: URL
        public var previewURL: URL
        public var remoteURL: URL?
        public var meta: Meta
        public var description: String?
        public var blurhash: String?

        enum CodingKeys: String, CodingKey {
            case id, type, url, meta, description, blurhash
            case previewURL = "preview_url"
            case remoteURL = "remote_url"
        }
    }

    /// An account a status mentions.
    public struct Mention: Codable, Hashable, Sendable {
        public var id: String
        public var username: String
        public var url: URL
        public var acct: String
    }

    /// A hashtag a status uses.
    public struct Tag: Codable, Hashable, Sendable {
        public var name: String
        public var url: URL
    }

    /// The preview of a link in a status.
    public struct Card: Codable, Hashable, Sendable {
        public var url: URL
        public var title: String
        public var description: String
        public var type: String
        public var authorName: String
        public var providerName: String
        public var image: URL?
        public var width: Int
        public var height: Int
        public var blurhash: String?

        enum CodingKeys: String, CodingKey {
            case url, title, description, type, image, width, height, blurhash
            case authorName = "author_name"
            case providerName = "provider_name"
        }
    }

    /// A poll attached to a status.
    public struct Poll: Codable, Hashable, Sendable {
        /// One answer of a poll, and its votes so far.
        public struct Option: Codable, Hashable, Sendable {
            public var title: String
            public var votesCount: Int?

            enum CodingKeys: String, CodingKey {
                case title
                case votesCount = "votes_count"
            }
        }

        public var id: String
        public var expiresAt: Date?
        public var expired: Bool
        public var multiple: Bool
        public var votesCount: Int
        public var options: [Option]
        public var voted: Bool?
        public var ownVotes: [Int]?

        enum CodingKeys: String, CodingKey {
            case id, expired, multiple, options, voted
            case expiresAt = "expires_at"
            case votesCount = "votes_count"
            case ownVotes = "own_votes"
        }
    }

    /// The app a status was posted from.
    public struct Application: Codable, Hashable, Sendable {
        public var name: String
        public var website: URL?
    }

    public var id: String
    public var createdAt: Date
    public var inReplyToID: String?
    public var inReplyToAccountID: String?
    public var sensitive: Bool
    public var spoilerText: String
    public var visibility: Visibility
    public var language: String?
    public var uri: String
    public var url: URL?
    public var repliesCount: Int
    public var reblogsCount: Int
    public var favouritesCount: Int
    public var editedAt: Date?
    public var favourited: Bool?
    public var reblogged: Bool?
    public var muted: Bool?
    public var bookmarked: Bool?
    public var pinned: Bool?
    /// The text, as HTML.
    public var content: String
    public var application: Application?
    public var account: Account
    public var mediaAttachments: [Attachment]
    public var mentions: [Mention]
    public var tags: [Tag]
    public var emojis: [Emoji]
    public var card: Card?
    public var poll: Poll?

    enum CodingKeys: String, CodingKey {
        case id, sensitive, visibility, language, uri, url, favourited, reblogged, muted, bookmarked, pinned, content
        case application, account, mentions, tags, emojis, card, poll
        case createdAt = "created_at"
        case inReplyToID = "in_reply_to_id"
        case inReplyToAccountID = "in_reply_to_account_id"
        case spoilerText = "spoiler_text"
        case repliesCount = "replies_count"
        case reblogsCount = "reblogs_count"
        case favouritesCount = "favourites_count"
        case editedAt = "edited_at"
        case mediaAttachments = "media_attachments"
    }

    /// Timelines are fresh for a minute.
    public static var stalenessThreshold: Duration? { .seconds(60) }
}

extension Status {
    /// A timeline of `count` statuses, the same for the same `count` and `seed`, each about as
    /// large as a real server's (two attachments, mentions, tags, a card; every third a poll).
    public static func sampleTimeline(count: Int, seed: UInt64 = 0) -> [Status] {
        var random = SeededRandom(seed: seed)
        let server = "https://social.example"
        let names = ["zoe", "lina", "oscar", "aarav", "ngozi", "mika"]
        let sentences = [
            "Walked along the river this morning; the fog lifted just as the café opened.",
            "Our release is out: faster sync, fewer crashes, and a new offline mode.",
            "東京の朝は静かで、コーヒーが美味しい。",
            "Reading a long thread about caching strategies and why invalidation is hard.",
            "Photos from the weekend market, with more bread than anyone needs.",
        ]
        func url(_ path: String) -> URL { URL(string: "\(server)/\(path)")! }
        func emoji(_ code: String) -> Emoji {
            Emoji(shortcode: code, url: url("emoji/\(code).png"), staticURL: url("emoji/\(code)_static.png"), visibleInPicker: true)
        }
        return (0..<count).map { index in
            let number = Int(random.next() % 1_000_000)
            let name = names[index % names.count]
            let created = Date(timeIntervalSince1970: 1_780_000_000 + Double(index) * 97)
            let account = Account(
                id: String(100_000 + number % 5_000), username: name, acct: "\(name)@social.example", displayName: "\(name.capitalized) :wave:",
                locked: false, bot: index.isMultiple(of: 11), discoverable: true, group: false,
                createdAt: Date(timeIntervalSince1970: 1_600_000_000 + Double(number)),
                note: "<p>Writes about cities, food and software. Posts in English and 日本語. <a href=\"\(server)/tags/coffee\">#coffee</a></p>",
                url: url("@\(name)"), avatar: url("avatars/\(name).png"), avatarStatic: url("avatars/\(name)_static.png"),
                header: url("headers/\(name).jpg"), headerStatic: url("headers/\(name)_static.jpg"),
                followersCount: number % 9_000, followingCount: number % 700, statusesCount: number % 40_000,
                lastStatusAt: "2026-11-\(10 + index % 18)", emojis: [emoji("wave")],
                fields: [
                    Field(name: "Web", value: "<a href=\"https://\(name).example\">\(name).example</a>", verifiedAt: created),
                    Field(name: "Pronouns", value: "they/them", verifiedAt: nil),
                ])
            let size = Size(width: 1_600, height: 1_200, size: "1600x1200", aspect: 1.3333333333333333)
            let small = Size(width: 400, height: 300, size: "400x300", aspect: 1.3333333333333333)
            let attachments = (0..<(index % 3)).map { picture in
                Attachment(
                    id: "\(number)\(picture)", type: .image, url: url("media/\(number)_\(picture).jpg"),
                    previewURL: url("media/\(number)_\(picture)_small.jpg"), remoteURL: nil, meta: Attachment.Meta(original: size, small: small),
                    description: "A picture from the market: bread, flowers and a dog.", blurhash: "UBL_:rOpGG-;~qRjWBt7RjRjt7V@-;t7ofof")
            }
            let text = (0..<4).map { sentences[($0 + index) % sentences.count] }.joined(separator: " ")
            return Status(
                id: String(109_000_000_000_000_000 + number), createdAt: created, inReplyToID: index.isMultiple(of: 4) ? String(number - 1) : nil,
                inReplyToAccountID: index.isMultiple(of: 4) ? account.id : nil, sensitive: false, spoilerText: "",
                visibility: index.isMultiple(of: 7) ? .unlisted : .public, language: "en", uri: "\(server)/users/\(name)/statuses/\(number)",
                url: url("@\(name)/\(number)"), repliesCount: number % 30, reblogsCount: number % 120, favouritesCount: number % 400,
                editedAt: index.isMultiple(of: 5) ? created.addingTimeInterval(300) : nil, favourited: false, reblogged: false, muted: false,
                bookmarked: index.isMultiple(of: 6), pinned: nil,
                content: "<p>\(text) <a href=\"\(server)/tags/cities\" class=\"mention hashtag\">#<span>cities</span></a> "
                    + "<span class=\"h-card\"><a href=\"\(server)/@lina\" class=\"u-url mention\">@<span>lina</span></a></span></p>",
                application: Application(name: "AppCache Reader", website: URL(string: "https://reader.example")),
                account: account, mediaAttachments: attachments,
                mentions: [Mention(id: "100001", username: "lina", url: url("@lina"), acct: "lina")],
                tags: [Tag(name: "cities", url: url("tags/cities")), Tag(name: "coffee", url: url("tags/coffee"))],
                emojis: [emoji("coffee")],
                card: Card(
                    url: URL(string: "https://news.example/articles/\(number)")!, title: "How cities feed themselves",
                    description: "A long read about markets, bakeries and the logistics of fresh food.", type: "link",
                    authorName: "Ana Ruiz", providerName: "News Example", image: URL(string: "https://news.example/images/\(number).jpg"),
                    width: 1_200, height: 630, blurhash: "UFGuzj~q%M?b%Mt7ofRj4nIUt7Rj"),
                poll: index.isMultiple(of: 3)
                    ? Poll(
                        id: String(number), expiresAt: created.addingTimeInterval(86_400), expired: false, multiple: false, votesCount: number % 90,
                        options: [Poll.Option(title: "Bread", votesCount: number % 50), Poll.Option(title: "Flowers", votesCount: number % 40)],
                        voted: false, ownVotes: [])
                    : nil)
        }
    }
}
