import Foundation

/// The simulated server behind the feed (in-process, with latency): pages of stories, an ETag
/// for the first page, and the endpoint a like is sent to. Offline, every call throws.
actor StoryServer {
    struct Unreachable: Error, CustomStringConvertible {
        var description: String { "the server cannot be reached (offline)" }
    }

    /// A page of stories and the cursor of the next one.
    struct StoryPage: Sendable {
        var stories: [Story]
        var next: String?
        var etag: String?
    }

    private var stories: [Story]
    private let pageSize: Int
    private let delay: Duration
    private(set) var isOnline = true
    /// The requests it answered, as `GET /stories?after=...` or `POST /stories/ID/like`.
    private(set) var log: [String] = []

    init(count: Int = 25, pageSize: Int = 10, delay: Duration = .milliseconds(100)) {
        stories = (1...max(count, 1)).map { Story(id: $0, title: "Story \($0)", author: "author \($0 % 4)", likes: $0 * 3, isLiked: false) }
        self.pageSize = pageSize
        self.delay = delay
    }

    func setOnline(_ online: Bool) {
        isOnline = online
    }

    /// The page after `cursor` (`nil`: the first page); the first page answers `nil` when
    /// `etag` is still current (a `304`).
    func page(after cursor: String?, ifNoneMatch etag: String?) async throws -> StoryPage? {
        try await Task.sleep(for: delay)
        guard isOnline else { throw Unreachable() }
        log.append("GET /stories" + (cursor.map { "?after=\($0)" } ?? ""))
        let start = cursor.flatMap(Int.init) ?? 0
        let current = "\"\(stories.map(\.likes).reduce(0, +))\""
        if cursor == nil, etag == current { return nil }
        let slice = Array(stories.dropFirst(start).prefix(pageSize))
        let end = start + slice.count
        return StoryPage(stories: slice, next: end < stories.count ? String(end) : nil, etag: cursor == nil ? current : nil)
    }

    /// Records a like (once per idempotency key) and answers the story as the server has it.
    func like(_ id: Int, isLiked: Bool, idempotencyKey: UUID) async throws -> Story {
        try await Task.sleep(for: delay)
        guard isOnline, let index = stories.firstIndex(where: { $0.id == id }) else { throw Unreachable() }
        log.append("POST /stories/\(id)/like Idempotency-Key: \(idempotencyKey)")
        if stories[index].isLiked != isLiked {
            stories[index].isLiked = isLiked
            stories[index].likes += isLiked ? 1 : -1
        }
        return stories[index]
    }
}
