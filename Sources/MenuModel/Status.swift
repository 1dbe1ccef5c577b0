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
        /// The name between colons that stands for the emoji.
        public var shortcode: String
        /// The address of its picture.
        public var url: URL
        /// The address of a still picture of it.
        public var staticURL: URL
        /// Whether the server offers it in its emoji picker.
        public var visibleInPicker: Bool

        enum CodingKeys: String, CodingKey {
            case shortcode, url
            case staticURL = "static_url"
            case visibleInPicker = "visible_in_picker"
        }
    }

    /// A name and value an account shows on its profile.
    public struct Field: Codable, Hashable, Sendable {
        /// The field's label.
        public var name: String
        /// Its value, as HTML.
        public var value: String
        /// When the server checked that the link points back, if it did.
        public var verifiedAt: Date?

        enum CodingKeys: String, CodingKey {
            case name, value
            case verifiedAt = "verified_at"
        }
    }

    /// The author of a status.
    public struct Account: Codable, Hashable, Sendable {
        /// The account's identifier on this server.
        public var id: String
        /// The account name on its server.
        public var username: String
        /// The account name, with its server unless it is this one.
        public var acct: String
        /// The name the account shows.
        public var displayName: String
        /// Whether follows need approval.
        public var locked: Bool
        /// Whether the account posts automatically.
        public var bot: Bool
        /// Whether it may be suggested to others.
        public var discoverable: Bool?
        /// Whether it is a group.
        public var group: Bool
        /// When it was created.
        public var createdAt: Date
        /// Its profile text, as HTML.
        public var note: String
        /// Its profile page.
        public var url: URL
        /// Its picture.
        public var avatar: URL
        /// A still version of its picture.
        public var avatarStatic: URL
        /// Its banner.
        public var header: URL
        /// A still version of its banner.
        public var headerStatic: URL
        /// How many accounts follow it.
        public var followersCount: Int
        /// How many accounts it follows.
        public var followingCount: Int
        /// How many statuses it posted.
        public var statusesCount: Int
        /// The day it last posted.
        public var lastStatusAt: String?
        /// The custom emoji its text uses.
        public var emojis: [Emoji]
        /// The fields on its profile.
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
        /// In pixels.
        public var width: Int
        /// In pixels.
        public var height: Int
        /// Width and height, as text.
        public var size: String
        /// Width divided by height.
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
            /// The size of the original.
            public var original: Size
            /// The size of the preview.
            public var small: Size
        }

        /// Its identifier.
        public var id: String
        /// What it is.
        public var type: Kind
        /// Where the file is.
        public var url: URL
        /// Where a smaller preview is.
        public var previewURL: URL
        /// Where the original is on its own server, for a remote status.
        public var remoteURL: URL?
        /// Its sizes.
        public var meta: Meta
        /// A description for people who cannot see it.
        public var description: String?
        /// A tiny blurred placeholder, encoded.
        public var blurhash: String?

        enum CodingKeys: String, CodingKey {
            case id, type, url, meta, description, blurhash
            case previewURL = "preview_url"
            case remoteURL = "remote_url"
        }
    }

    /// An account a status mentions.
    public struct Mention: Codable, Hashable, Sendable {
        /// The account's identifier.
        public var id: String
        /// The account name on its server.
        public var username: String
        /// Its profile page.
        public var url: URL
        /// The account name, with its server unless it is this one.
        public var acct: String
    }

    /// A hashtag a status uses.
    public struct Tag: Codable, Hashable, Sendable {
        /// The tag, without `#`.
        public var name: String
        /// The tag's page.
        public var url: URL
    }

    /// The preview of a link in a status.
    public struct Card: Codable, Hashable, Sendable {
        /// The linked page.
        public var url: URL
        /// Its title.
        public var title: String
        /// A description for people who cannot see it.
        public var description: String
        /// `link`, `photo`, `video` or `rich`.
        public var type: String
        /// Who wrote the linked page.
        public var authorName: String
        /// The site the page is on.
        public var providerName: String
        /// The page's picture, if any.
        public var image: URL?
        /// In pixels.
        public var width: Int
        /// In pixels.
        public var height: Int
        /// A tiny blurred placeholder, encoded.
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
            /// The answer.
            public var title: String
            /// Votes so far.
            public var votesCount: Int?

            enum CodingKeys: String, CodingKey {
                case title
                case votesCount = "votes_count"
            }
        }

        /// Its identifier.
        public var id: String
        /// When the poll closes, if it does.
        public var expiresAt: Date?
        /// Whether it has closed.
        public var expired: Bool
        /// Whether several answers may be chosen.
        public var multiple: Bool
        /// Votes so far.
        public var votesCount: Int
        /// Its answers.
        public var options: [Option]
        /// Whether the reader voted.
        public var voted: Bool?
        /// The answers the reader chose, by index.
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
        /// The app's name.
        public var name: String
        /// Its web site, if any.
        public var website: URL?
    }

    /// Its identifier on this server.
    public var id: String
    /// When it was created.
    public var createdAt: Date
    /// The status it answers, if any.
    public var inReplyToID: String?
    /// The author of the status it answers, if any.
    public var inReplyToAccountID: String?
    /// Whether its media are hidden behind a warning.
    public var sensitive: Bool
    /// The content warning, or an empty string.
    public var spoilerText: String
    /// Who may see it.
    public var visibility: Visibility
    /// Its language, as a code.
    public var language: String?
    /// Its identifier across servers.
    public var uri: String
    /// Its page, if it has one.
    public var url: URL?
    /// How many replies it has.
    public var repliesCount: Int
    /// How many times it was boosted.
    public var reblogsCount: Int
    /// How many times it was favourited.
    public var favouritesCount: Int
    /// When it was last edited, if ever.
    public var editedAt: Date?
    /// Whether the reader favourited it.
    public var favourited: Bool?
    /// Whether the reader boosted it.
    public var reblogged: Bool?
    /// Whether the reader muted its conversation.
    public var muted: Bool?
    /// Whether the reader bookmarked it.
    public var bookmarked: Bool?
    /// Whether its author pinned it.
    public var pinned: Bool?
    /// The text, as HTML.
    public var content: String
    /// The app it was posted from, if known.
    public var application: Application?
    /// Its author.
    public var account: Account
    /// Its pictures, videos and sounds.
    public var mediaAttachments: [Attachment]
    /// The accounts it mentions.
    public var mentions: [Mention]
    /// Its hashtags.
    public var tags: [Tag]
    /// The custom emoji its text uses.
    public var emojis: [Emoji]
    /// A preview of the link in it, if any.
    public var card: Card?
    /// Its poll, if any.
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
