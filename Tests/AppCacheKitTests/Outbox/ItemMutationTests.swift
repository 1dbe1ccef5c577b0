import Foundation
import Testing

@testable import AppCacheKit

/// Offline changes by id: one queued change shown in every list holding its item (lists cached
/// after it too), sent once, folded everywhere when accepted; queued changes that outlive a
/// model change; readers that are not senders; sign-out during a send; no change shown twice.
@Suite struct ItemMutationTests {
    struct Like: ItemMutation, Equatable {
        static let mutationName = "like"
        var postID: Int
        var isLiked: Bool
        var itemIDs: [Int] { [postID] }
        func apply(to post: inout Post) { post.isLiked = isLiked }
    }

    /// Bookmarks a post: marks it everywhere and adds it to (or drops it from) the bookmarks.
    struct Bookmark: ItemMutation, Equatable {
        static let mutationName = "bookmark"
        var post: Post
        var isBookmarked: Bool
        var itemIDs: [Int] { [post.id] }
        var key: String? { "bookmarks" }
        func apply(to item: inout Post) { item.isBookmarked = isBookmarked }
        func apply(to items: inout [Post], key: String?) {
            guard key == "bookmarks" else { return applyToItems(&items) }
            items.removeAll { $0.id == post.id }
            if isBookmarked {
                var saved = post
                saved.isBookmarked = true
                items.insert(saved, at: 0)
            }
        }
    }

    /// Appends a number to a post's title: not idempotent on purpose, so that a change applied
    /// twice shows.
    struct Mark: CacheMutation {
        static let mutationName = "mark"
        var number: Int
        var key: String? { "marks" }
        func apply(to items: inout [Post]) { items.append(Post(id: 10_000 + number)) }
    }

    /// Records sends; holds them while its gate is shut, when asked.
    final class Server: Sendable {
        private let sent = Locked<[(id: UUID, name: String)]>([])
        let gate = Gate()
        let holds: Bool

        init(holds: Bool = false) { self.holds = holds }

        var sends: [(id: UUID, name: String)] { sent.withLock { $0 } }

        func send<M: CacheMutation>(_ change: M, _ id: UUID) async throws {
            sent.withLock { $0.append((id, M.mutationName)) }
            if holds { await gate.wait() }
        }
    }

    static let timeline = (1...4).map { Post(id: $0, author: $0.isMultiple(of: 2) ? "bo" : "ann") }

    func openCache(_ fixture: Fixture, user: String? = "alice") throws -> AppCache {
        var configuration = fixture.configuration(user: user, memory: .layer(writeBackDelay: nil))
        configuration.mutationRetry = .exponentialBackoff(maxAttempts: 1, initialDelay: .milliseconds(5), maximumDelay: .milliseconds(20))
        return try AppCache(configuration: configuration)
    }

    func liked(_ posts: [Post], _ id: Int, _ value: Bool = true) -> [Post] {
        Post.changing(posts, id) { $0.isLiked = value }
    }

    @Test func aLikeShowsInEveryListHoldingThePostIncludingListsCachedAfterIt() async throws {
        let fixture = try Fixture()
        let cache = try openCache(fixture)
        try cache.cacheItems(Self.timeline, forKey: "timeline")
        try cache.cacheItems([Self.timeline[2]], forKey: "post-3")
        try cache.cacheItems([Self.timeline[1]], forKey: "post-2")
        let detail = StreamRecorder(cache.updates(Post.self, forKey: "post-3"))
        #expect(await eventually { detail.seen.count == 1 })

        let id = try cache.enqueue(Like(postID: 3, isLiked: true))

        #expect(try cache.getCachedItems(Post.self, forKey: "timeline") == liked(Self.timeline, 3))
        #expect(try cache.getCachedItems(Post.self, forKey: "post-3") == liked([Self.timeline[2]], 3))
        #expect(try cache.getCachedItems(Post.self, forKey: "post-2") == [Self.timeline[1]])
        #expect(await eventually { detail.last == .some(liked([Self.timeline[2]], 3)) }, "observers of every list are told")
        // The author's profile, opened for the first time after the tap: the server's older state.
        try cache.cacheItems([Self.timeline[0], Self.timeline[2]], forKey: "profile-ann")
        #expect(try cache.getCachedItems(Post.self, forKey: "profile-ann") == liked([Self.timeline[0], Self.timeline[2]], 3))
        #expect(cache.pendingMutations.map(\.id) == [id], "one change, whatever the number of lists")

        // A relaunch: a process that registers the kind (for reading) shows it too.
        try cache.flush()
        let relaunched = try openCache(fixture)
        relaunched.registerMutationKind(Like.self)
        #expect(try relaunched.getCachedItems(Post.self, forKey: "profile-ann") == liked([Self.timeline[0], Self.timeline[2]], 3))
        let server = Server()
        relaunched.registerSender(for: Like.self, send: server.send)
        #expect(await eventually { relaunched.pendingMutations.isEmpty })
        #expect(server.sends.map(\.id) == [id], "sent once")
        // Folded into every confirmed list: a process knowing no kinds reads it.
        try relaunched.flush()
        let plain = try fixture.openCache()
        #expect(try plain.getCachedItems(Post.self, forKey: "timeline") == liked(Self.timeline, 3))
        #expect(try plain.getCachedItems(Post.self, forKey: "profile-ann") == liked([Self.timeline[0], Self.timeline[2]], 3))
        #expect(try plain.getCachedItems(Post.self, forKey: "post-2") == [Self.timeline[1]])
        cache.outbox.stop()
    }

    @Test func aChangeWhoseItemNoListHoldsIsStillQueuedAndSent() async throws {
        let fixture = try Fixture()
        let cache = try openCache(fixture)
        try cache.cacheItems([Self.timeline[0]], forKey: "timeline")
        let id = try cache.enqueue(Like(postID: 77, isLiked: true))
        #expect(cache.pendingMutations.map(\.id) == [id])
        let server = Server()
        cache.registerSender(for: Like.self, send: server.send)
        #expect(await eventually { cache.pendingMutations.isEmpty })
        #expect(server.sends.map(\.id) == [id])
        #expect(try cache.getCachedItems(Post.self, forKey: "timeline") == [Self.timeline[0]])
    }

    @Test func aBookmarkMarksThePostEverywhereAndAddsItToTheBookmarks() async throws {
        let fixture = try Fixture()
        let cache = try openCache(fixture)
        try cache.cacheItems(Self.timeline, forKey: "timeline")
        try cache.cacheItems([Self.timeline[3]], forKey: "bookmarks")
        try cache.enqueue(Bookmark(post: Self.timeline[1], isBookmarked: true))
        let marked = Post.changing(Self.timeline, 2) { $0.isBookmarked = true }
        #expect(try cache.getCachedItems(Post.self, forKey: "timeline") == marked)
        #expect(try cache.getCachedItems(Post.self, forKey: "bookmarks") == [marked[1], Self.timeline[3]])
        try cache.enqueue(Bookmark(post: Self.timeline[1], isBookmarked: false))
        #expect(try cache.getCachedItems(Post.self, forKey: "timeline") == Self.timeline)
        #expect(try cache.getCachedItems(Post.self, forKey: "bookmarks") == [Self.timeline[3]])
        #expect(cache.pendingMutations.count == 2)
    }

    /// `Bookmark` as version 1 stored it: its post had no `likes`.
    struct BookmarkV1: Decodable, Sendable {
        struct PostV1: Decodable, Sendable {
            var id: Int
            var author: String
            var title: String
        }
        var post: PostV1
        var isBookmarked: Bool
    }

    /// `Bookmark` one version later: what it stores changed shape.
    struct BookmarkV2: ItemMutation {
        static let mutationName = "bookmark"
        static var schemaVersion: Int { 2 }
        static var upgrades: [MutationUpgrade<BookmarkV2>] {
            [MutationUpgrade(from: 1, decoding: BookmarkV1.self) { old in
                BookmarkV2(postID: old.post.id, title: old.post.title, saved: old.isBookmarked)
            }]
        }
        var postID: Int
        var title: String
        var saved: Bool
        var itemIDs: [Int] { [postID] }
        func apply(to item: inout Post) { item.isBookmarked = saved }
    }

    /// Version 2 with no upgrade for version 1.
    struct BookmarkV2WithoutUpgrade: ItemMutation {
        static let mutationName = "bookmark"
        static var schemaVersion: Int { 2 }
        var postID: Int
        var saved: Bool
        var itemIDs: [Int] { [postID] }
        func apply(to item: inout Post) { item.isBookmarked = saved }
    }

    @Test func aQueuedChangeIsReadThroughItsUpgradeAfterAnAppUpdate() async throws {
        let fixture = try Fixture()
        let old = try openCache(fixture)
        try old.cacheItems(Self.timeline, forKey: "timeline")
        let id = try old.enqueue(Bookmark(post: Self.timeline[0], isBookmarked: true))
        try old.flush()
        old.outbox.stop()

        let updated = try openCache(fixture)
        updated.registerMutationKind(BookmarkV2.self)
        #expect(try updated.getCachedItems(Post.self, forKey: "timeline") == Post.changing(Self.timeline, 1) { $0.isBookmarked = true })
        let sent = Locked<[BookmarkV2]>([])
        updated.registerSender(for: BookmarkV2.self) { change, sentID in
            #expect(sentID == id, "the same id as before the update")
            sent.withLock { $0.append(change) }
        }
        #expect(await eventually { updated.pendingMutations.isEmpty })
        #expect(sent.withLock { $0.map(\.title) } == ["Post 1"])
        #expect(!fixture.diagnostics.codes.contains(.modelMismatch))
    }

    @Test func aChangeThatDoesNotDecodeHoldsBackItsKindOnlyUntilDropped() async throws {
        let fixture = try Fixture()
        let old = try openCache(fixture)
        try old.cacheItems(Self.timeline, forKey: "timeline")
        let stuck = try old.enqueue(Bookmark(post: Self.timeline[0], isBookmarked: true))
        let like = try old.enqueue(Like(postID: 2, isLiked: true))
        let behind = try old.enqueue(BookmarkV2WithoutUpgrade(postID: 3, saved: true))
        try old.flush()
        old.outbox.stop()

        let updated = try openCache(fixture)
        let server = Server()
        updated.registerSender(for: BookmarkV2WithoutUpgrade.self, send: server.send)
        updated.registerSender(for: Like.self, send: server.send)
        #expect(await eventually { server.sends.map(\.id) == [like] }, "another kind goes ahead")
        #expect(await eventually { updated.pendingMutations.first?.lastError?.hasPrefix("It does not decode") == true })
        #expect(await eventually { updated.pendingMutations.map(\.id) == [stuck, behind] }, "its own kind waits behind it")
        #expect(server.sends.map(\.id) == [like])
        #expect(fixture.diagnostics.errors.filter { $0.code == .modelMismatch }.count == 1, "reported once")
        // The inspector reads the outbox file: the error is stored there.
        let log = try OutboxFile.read("alice", from: updated.store.disk.store).log
        #expect(log.entries.first?.lastError?.hasPrefix("It does not decode") == true)

        #expect(try updated.dropPendingMutation(stuck))
        #expect(await eventually { updated.pendingMutations.isEmpty })
        #expect(server.sends.map(\.id) == [like, behind])
        #expect(try updated.dropPendingMutation(stuck) == false, "gone already")
    }

    @Test func aReaderShowsPendingChangesWithoutSending() async throws {
        let fixture = try Fixture()
        let app = try openCache(fixture)
        let widget = try openCache(fixture)
        try app.cacheItems(Self.timeline, forKey: "timeline")
        try app.flush()
        widget.registerMutationKind(Like.self)
        let id = try widget.enqueue(Like(postID: 1, isLiked: true))
        #expect(try app.getCachedItems(Post.self, forKey: "timeline") == Self.timeline, "the app knows no kind yet")
        #expect(try widget.getCachedItems(Post.self, forKey: "timeline") == liked(Self.timeline, 1))
        // The widget's own sender task ran and found no sender: it holds no lease, sends nothing.
        widget.outbox.sendNow()
        let lease = widget.store.disk.coordinator.senderLease
        #expect(await eventually { lease.words.load(LockFileWord.senderLease.rawValue) == 0 })
        let server = Server()
        app.registerSender(for: Like.self, send: server.send)
        #expect(await eventually { widget.pendingMutations.isEmpty })
        #expect(server.sends.map(\.id) == [id], "the app sent what the widget enqueued")
        // Registering for reading after a sender keeps the sender.
        app.registerMutationKind(Like.self)
        let second = try widget.enqueue(Like(postID: 1, isLiked: false))
        #expect(await eventually { server.sends.map(\.id) == [id, second] })
        // The second send's answer is recorded before the fixture's directory goes.
        #expect(await eventually { app.pendingMutations.isEmpty })
        await app.idle()
    }

    @Test func aChangeAcceptedWhileItsUserIsSwitchedAwayIsFoldedIntoTheirItems() async throws {
        let fixture = try Fixture()
        let cache = try openCache(fixture)
        try cache.cacheItems(Self.timeline, forKey: "timeline")
        try cache.cacheItems([Self.timeline[0]], forKey: "post-1")
        let server = Server(holds: true)
        cache.registerSender(for: Like.self, send: server.send)
        try cache.enqueue(Like(postID: 1, isLiked: true))
        #expect(await eventually { server.sends.count == 1 })
        try cache.signOut(removingData: false)
        server.gate.open()
        #expect(await eventually { (try? OutboxFile.read("alice", from: cache.store.disk.store).log.entries.isEmpty) == true })
        try cache.switchUser(to: "alice")
        #expect(cache.pendingMutations.isEmpty)
        #expect(try cache.getCachedItems(Post.self, forKey: "timeline") == liked(Self.timeline, 1), "the server applied it; so do her lists")
        #expect(try cache.getCachedItems(Post.self, forKey: "post-1") == liked([Self.timeline[0]], 1))
    }

    /// The reads that apply the queue to a collection they read.
    enum Read: CaseIterable, Sendable {
        case getCachedItems, cachedCollection, load, watch

        /// The items `cache` shows for `key`, read on a thread that may block (a load or watch
        /// reads on a library thread of its own).
        func items(of cache: AppCache, forKey key: String) async throws -> [Post]? {
            switch self {
            case .getCachedItems, .cachedCollection:
                let result = Locked<Result<[Post]?, any Error>?>(nil)
                Thread.detachNewThread {
                    let read = Result {
                        self == .getCachedItems
                            ? try cache.getCachedItems(Post.self, forKey: key) : try cache.cachedCollection(Post.self, forKey: key)?.items
                    }
                    result.withLock { $0 = read }
                }
                guard await eventually({ result.withLock { $0 != nil } }) else { return nil }
                return try result.withLock { $0 }?.get()
            case .load:
                for try await answer in cache.load(Post.self, forKey: key, policy: .cacheFirst, fetch: { _ in .notModified }) {
                    return answer.items
                }
                return nil
            case .watch:
                for await items in cache.updates(Post.self, forKey: key) { return items }
                return nil
            }
        }
    }

    /// Makes the next decode of the post titled `marker` wait, once the list's bytes are in
    /// hand, until `server` has answered `sender`'s held send and the change is folded into the
    /// list and out of the queue: before the read looks at the queue. (For a load or a watch
    /// the wait holds one of the library's threads, and the sender's step needs another: the
    /// pool has four.)
    ///
    /// - Parameter first: runs in the hook before the gate opens (a change enqueued there).
    /// - Returns: set when the change had left the queue by the time the decode went on.
    func acceptInTheMiddleOfARead(
        of marker: String, server: Server, sender: AppCache, first: @escaping @Sendable () -> Void = {}
    ) -> Locked<Bool> {
        let acceptedMidRead = Locked(false)
        Post.decodeHooks.withLock {
            $0[marker] = {
                first()
                server.gate.open()
                let deadline = Date().addingTimeInterval(60 * sanitizerSlowdown)
                while !sender.pendingMutations.isEmpty, Date() < deadline { Thread.sleep(forTimeInterval: 0.002) }
                acceptedMidRead.withLock { $0 = sender.pendingMutations.isEmpty }
            }
        }
        return acceptedMidRead
    }

    /// A change the server accepts while a list is read (folded into the list, then out of the
    /// queue) shows in what the read returns, though the list's bytes were read before the
    /// fold and the queue after: the read is made again.
    @Test(arguments: Read.allCases) func aChangeAcceptedInTheMiddleOfAReadShowsInIt(_ read: Read) async throws {
        let fixture = try Fixture()
        // Memory off: each read decodes the list from disk.
        var configuration = fixture.configuration(user: "alice")
        configuration.mutationRetry = .exponentialBackoff(maxAttempts: 1, initialDelay: .milliseconds(5), maximumDelay: .milliseconds(20))
        let cache = try AppCache(configuration: configuration)
        defer { cache.outbox.stop() }
        let marker = Post.hookedTitlePrefix + UUID().uuidString
        let timeline = [Post(id: 1), Post(id: 2, title: marker), Post(id: 3)]
        try cache.cacheItems(timeline, forKey: "timeline")
        let server = Server(holds: true)
        cache.registerSender(for: Like.self, send: server.send)
        try cache.enqueue(Like(postID: 2, isLiked: true))
        #expect(await eventually { server.sends.count == 1 })

        let acceptedMidRead = acceptInTheMiddleOfARead(of: marker, server: server, sender: cache)
        defer { Post.decodeHooks.withLock { $0[marker] = nil } }
        let shown = try await read.items(of: cache, forKey: "timeline")
        #expect(acceptedMidRead.withLock { $0 }, "the server accepted the change in the middle of the read")
        #expect(shown == liked(timeline, 2))
        #expect(try cache.getCachedItems(Post.self, forKey: "timeline") == liked(timeline, 2), "folded")
    }

    /// A change queued once the read has looked at the queue, then sent, accepted and folded
    /// before the read applies the queue: the read saw it in neither look, and still shows it.
    @Test func aChangeQueuedAndAcceptedInTheMiddleOfAReadShowsInIt() async throws {
        let fixture = try Fixture()
        let cache = try AppCache(configuration: fixture.configuration(user: "alice"))
        defer { cache.outbox.stop() }
        let marker = Post.hookedTitlePrefix + UUID().uuidString
        let timeline = [Post(id: 1), Post(id: 2, title: marker)]
        try cache.cacheItems(timeline, forKey: "timeline")
        let server = Server()
        cache.registerSender(for: Like.self, send: server.send)

        let acceptedMidRead = acceptInTheMiddleOfARead(of: marker, server: server, sender: cache) {
            _ = try? cache.enqueue(Like(postID: 2, isLiked: true))
        }
        defer { Post.decodeHooks.withLock { $0[marker] = nil } }
        let shown = try await Read.getCachedItems.items(of: cache, forKey: "timeline")
        #expect(acceptedMidRead.withLock { $0 } && server.sends.count == 1, "queued, sent and accepted in the middle of the read")
        #expect(shown == liked(timeline, 2))
        // The accepted send's answer is recorded before the fixture's directory goes.
        #expect(await eventually { cache.pendingMutations.isEmpty })
        await cache.idle()
    }

    /// The same when another process's sender has the change accepted: the reader's queue
    /// lost a change it held before the read.
    @Test func aChangeAnotherProcessHasAcceptedInTheMiddleOfAReadShowsInIt() async throws {
        let fixture = try Fixture()
        let app = try AppCache(configuration: fixture.configuration(user: "alice"))
        let widget = try AppCache(configuration: fixture.configuration(user: "alice"))
        defer { app.outbox.stop() }
        let marker = Post.hookedTitlePrefix + UUID().uuidString
        let timeline = [Post(id: 1), Post(id: 2, title: marker)]
        try app.cacheItems(timeline, forKey: "timeline")
        widget.registerMutationKind(Like.self)
        let server = Server(holds: true)
        app.registerSender(for: Like.self, send: server.send)
        try widget.enqueue(Like(postID: 2, isLiked: true))
        #expect(await eventually { server.sends.count == 1 })
        #expect(try widget.getCachedItems(Post.self, forKey: "timeline") == liked(timeline, 2), "pending")

        let acceptedMidRead = acceptInTheMiddleOfARead(of: marker, server: server, sender: app)
        defer { Post.decodeHooks.withLock { $0[marker] = nil } }
        let shown = try await Read.getCachedItems.items(of: widget, forKey: "timeline")
        #expect(acceptedMidRead.withLock { $0 }, "the server accepted the change in the middle of the read")
        #expect(shown == liked(timeline, 2))
        #expect(widget.pendingMutations.isEmpty)
    }

    @Test func aReadShowsTheQueueAsItIsNowAfterEveryKindOfChange() async throws {
        let fixture = try Fixture()
        let app = try openCache(fixture)
        let widget = try openCache(fixture)
        app.registerMutationKind(Like.self)
        try app.cacheItems(Self.timeline, forKey: "timeline")
        let first = try app.enqueue(Like(postID: 1, isLiked: true))
        for _ in 1...3 {
            #expect(try app.getCachedItems(Post.self, forKey: "timeline") == liked(Self.timeline, 1), "again and again")
        }
        let hits = app.store.state.withLock { $0.memory.hits }
        #expect(try app.cachedCollection(Post.self, forKey: "timeline")?.items == liked(Self.timeline, 1))
        #expect(app.store.state.withLock { $0.memory.hits } == hits + 1, "a memory hit, counted once")
        // Another process enqueues.
        try app.flush()
        try widget.enqueue(Like(postID: 2, isLiked: true))
        #expect(try app.getCachedItems(Post.self, forKey: "timeline") == liked(liked(Self.timeline, 1), 2))
        // The collection is written anew; a change leaves the queue.
        let reversed = Array(Self.timeline.reversed())
        try app.cacheItems(reversed, forKey: "timeline")
        #expect(try app.getCachedItems(Post.self, forKey: "timeline") == liked(liked(reversed, 1), 2))
        try app.dropPendingMutation(first)
        #expect(try app.getCachedItems(Post.self, forKey: "timeline") == liked(reversed, 2))
        // Another user, whose collection is the very same array: none of alice's changes.
        try app.switchUser(to: "bob")
        try app.cacheItems(reversed, forKey: "timeline")
        #expect(try app.getCachedItems(Post.self, forKey: "timeline") == reversed)
        try app.switchUser(to: "alice")
        #expect(try app.getCachedItems(Post.self, forKey: "timeline") == liked(reversed, 2))
        widget.outbox.stop()
    }

    @Test func changesEnqueuedAtOnceFromSeveralThreadsAreEachShownOnce() async throws {
        let fixture = try Fixture()
        let cache = try openCache(fixture)
        try cache.cacheItems([Post](), forKey: "marks")
        cache.registerMutationKind(Mark.self)
        let reads = Locked<[[Post]]>([])
        DispatchQueue.concurrentPerform(iterations: 5) { thread in
            for number in 0..<8 {
                _ = try? cache.enqueue(Mark(number: thread * 8 + number))
                if let items = try? cache.getCachedItems(Post.self, forKey: "marks") { reads.withLock { $0.append(items) } }
            }
        }
        let shown = try #require(try cache.getCachedItems(Post.self, forKey: "marks")).map(\.id)
        #expect(shown.count == 40 && Set(shown).count == 40, "each change once")
        #expect(cache.pendingMutations.count == 40)
        #expect(reads.withLock { $0 }.allSatisfy { Set($0.map(\.id)).count == $0.count }, "no read showed one twice")
    }
}
