import Foundation
import Testing

@testable import AppCacheKit

/// Offline changes: shown at once on top of the confirmed items, rebased on every new
/// confirmed collection, stored before `enqueue` returns, sent in order, one at a time, with
/// one id per change, and gone from view when the server rejects them.
@Suite struct OutboxTests {
    /// Sets the tags of one note: a change that sets state, as the protocol asks.
    struct Retag: CacheMutation, Equatable {
        static let mutationName = "retag"
        var noteID: Int
        var tags: [String]
        var key: String? { "top" }
        func apply(to items: inout [Note]) {
            for index in items.indices where items[index].id == noteID { items[index].tags = tags }
        }
    }

    /// Another kind, of another model.
    struct Bump: CacheMutation {
        static let mutationName = "bump"
        var value: Int
        var key: String? { nil }
        func apply(to items: inout [Plain]) { items.append(Plain(value: value)) }
    }

    /// A server for queued changes: records every send, answers as scripted.
    final class Server: Sendable {
        enum Answer: Sendable { case accept, fail, reject, hold }
        private struct State {
            var sends: [(id: UUID, change: Retag)] = []
            var answers: [Answer] = []
            var inFlight = 0
            var mostInFlight = 0
        }
        private let state = Locked(State())
        let gate = Gate()

        init(_ answers: [Answer] = []) { state.withLock { $0.answers = answers } }

        var sends: [(id: UUID, change: Retag)] { state.withLock { $0.sends } }
        var mostInFlight: Int { state.withLock { $0.mostInFlight } }

        func send(_ change: Retag, _ id: UUID) async throws {
            let answer = state.withLock { state -> Answer in
                state.sends.append((id, change))
                state.inFlight += 1
                state.mostInFlight = max(state.mostInFlight, state.inFlight)
                return state.answers.isEmpty ? .accept : state.answers.removeFirst()
            }
            defer { state.withLock { $0.inFlight -= 1 } }
            switch answer {
            case .accept: return
            case .fail: throw URLError(.timedOut)
            case .reject: throw MutationRejected(reason: "no such note")
            case .hold:
                await gate.wait()
                throw URLError(.networkConnectionLost)
            }
        }
    }

    static let notes = [Note.make(1), Note.make(2)]

    static func tagged(_ notes: [Note], _ id: Int, _ tags: [String]) -> [Note] {
        notes.map { note in
            var note = note
            if note.id == id { note.tags = tags }
            return note
        }
    }

    func openCache(_ fixture: Fixture, user: String? = "alice") throws -> AppCache {
        var configuration = fixture.configuration(user: user, memory: .layer(writeBackDelay: nil))
        configuration.mutationRetry = .exponentialBackoff(maxAttempts: 1, initialDelay: .milliseconds(5), maximumDelay: .milliseconds(20))
        return try AppCache(configuration: configuration)
    }

    @Test func aChangeIsShownAtOnceStoredBeforeEnqueueReturnsAndSurvivesARelaunch() async throws {
        let fixture = try Fixture()
        let cache = try openCache(fixture)
        try cache.cacheItems(Self.notes, forKey: "top")
        let updates = StreamRecorder(cache.updates(Note.self, forKey: "top"))
        #expect(await eventually { updates.last == .some(Self.notes) })

        let id = try cache.enqueue(Retag(noteID: 1, tags: ["offline"]))
        let shown = Self.tagged(Self.notes, 1, ["offline"])
        #expect(try cache.getCachedItems(Note.self, forKey: "top") == shown)
        #expect(try cache.cachedCollection(Note.self, forKey: "top")?.items == shown)
        #expect(await eventually { updates.last == .some(shown) }, "observers see it at once")
        #expect(cache.pendingMutations.map(\.id) == [id])
        #expect(cache.pendingMutations.first.map { ($0.mutationName, $0.key, $0.attempts, $0.lastError) } ?? ("", nil, -1, "") == ("retag", "top", 0, nil))
        #expect(FileManager.default.fileExists(atPath: fixture.layout().userPath("alice") + "/.outbox"), "on disk before enqueue returned")

        // A relaunch (the first cache never flushed its items: the queue does not depend on it).
        try cache.flush()
        let relaunched = try openCache(fixture)
        #expect(relaunched.pendingMutations.map(\.id) == [id])
        #expect(try relaunched.getCachedItems(Note.self, forKey: "top") == Self.notes, "a kind this process does not know yet is not applied")
        let server = Server([.hold])
        relaunched.registerSender(for: Retag.self, send: server.send)
        #expect(try relaunched.getCachedItems(Note.self, forKey: "top") == shown, "decoded by its name once registered")
        server.gate.open()
        // What the released send leads to (a retry, an acceptance or a rejection) ends, and the
        // change leaves the queue, before the fixture's directory goes.
        #expect(await eventually { relaunched.pendingMutations.isEmpty })
        await relaunched.idle()
    }

    @Test func aFetchThatLandsWhileAChangeWaitsBecomesTheBaseWithTheChangeOnTop() async throws {
        let fixture = try Fixture()
        let cache = try openCache(fixture)
        try cache.cacheItems(Self.notes, forKey: "top")
        try cache.enqueue(Retag(noteID: 2, tags: ["mine"]))
        fixture.clock.advance(by: .seconds(7200))

        // The server's newer collection, which does not hold the change yet.
        let fetched = [Note.make(2), Note.make(3)]
        let server = FakeServer(answer: .items(fetched, etag: nil))
        let (answers, _) = await collect(cache.load(Note.self, forKey: "top", retry: .none, fetch: server.fetch))
        #expect(answers.map(\.source) == [.memory, .fetch])
        #expect(answers.last?.items == Self.tagged(fetched, 2, ["mine"]), "rebased: the fetched items with the change applied")
        #expect(answers.map(\.hasPendingMutations) == [true, true])
        #expect(try cache.getCachedItems(Note.self, forKey: "top") == Self.tagged(fetched, 2, ["mine"]))
        #expect(try cache.updateItems(Note.self, forKey: "top") { _ in } == fetched, "an update works on the confirmed items")

        // A watch's yield of fetched items shows it too, and says so.
        let watch = StreamRecorder(cache.watch(Note.self, forKey: "top", policy: .fetchFirst, fetch: { _ in .items([Note.make(4), Note.make(2)]) }))
        #expect(await eventually { watch.last?.source == .fetch })
        #expect(watch.last?.items == Self.tagged([Note.make(4), Note.make(2)], 2, ["mine"]))
        #expect(watch.last?.hasPendingMutations == true)
        watch.stop()
        #expect(try cache.cachedCollection(Plain.self) == nil)
    }

    @Test func anAcceptedChangeLeavesTheQueueAndStaysInTheConfirmedItems() async throws {
        let fixture = try Fixture()
        let cache = try openCache(fixture)
        try cache.cacheItems(Self.notes, forKey: "top")
        let pending = StreamRecorder(cache.pendingMutationUpdates())
        let id = try cache.enqueue(Retag(noteID: 1, tags: ["sent"]))
        let server = Server()
        cache.registerSender(for: Retag.self, send: server.send)
        #expect(await eventually { cache.pendingMutations.isEmpty })
        #expect(server.sends.map(\.id) == [id])
        #expect(await eventually { pending.last == [] })
        #expect(pending.seen.contains { $0.map(\.id) == [id] })
        // Folded into the confirmed items: another process that knows no kinds reads it.
        try cache.flush()
        let plain = try fixture.openCache()
        #expect(try plain.getCachedItems(Note.self, forKey: "top") == Self.tagged(Self.notes, 1, ["sent"]))
        #expect(!FileManager.default.fileExists(atPath: fixture.layout().userPath("alice") + "/.outbox"), "an empty queue leaves no file")
    }

    @Test func aRejectedChangeDisappearsAndKeepsTheWritesThatLandedMeanwhile() async throws {
        let fixture = try Fixture()
        let cache = try openCache(fixture)
        try cache.cacheItems(Self.notes, forKey: "top")
        let server = Server([.hold])
        try cache.enqueue(Retag(noteID: 1, tags: ["doomed"]))
        try cache.enqueue(Retag(noteID: 2, tags: ["kept"]))
        cache.registerSender(for: Retag.self, send: server.send)
        #expect(await eventually { server.sends.count == 1 })
        // While the first send is out: a newer confirmed collection lands.
        let newer = Self.notes + [Note.make(3)]
        try cache.cacheItems(newer, forKey: "top")
        #expect(try cache.getCachedItems(Note.self, forKey: "top") == Self.tagged(Self.tagged(newer, 1, ["doomed"]), 2, ["kept"]))
        // The held send fails (retried), then the server rejects it for good.
        let rejecting = Server([.reject, .hold])
        cache.registerSender(for: Retag.self, send: rejecting.send)
        server.gate.open()
        #expect(await eventually { cache.pendingMutations.count == 1 })
        #expect(try cache.getCachedItems(Note.self, forKey: "top") == Self.tagged(newer, 2, ["kept"]), "recomputed, not restored: note 3 stays")
        rejecting.gate.open()
        // What the released send leads to (a retry, an acceptance or a rejection) ends, and the
        // change leaves the queue, before the fixture's directory goes.
        #expect(await eventually { cache.pendingMutations.isEmpty })
        await cache.idle()
    }

    @Test func changesAreSentInOrderOneAtATimeWithOneIdPerChange() async throws {
        let fixture = try Fixture()
        let cache = try openCache(fixture)
        try cache.cacheItems(Self.notes, forKey: "top")
        var ids: [UUID] = []
        for number in 1...4 { ids.append(try cache.enqueue(Retag(noteID: 1, tags: ["\(number)"]))) }
        let server = Server([.fail, .fail, .accept, .fail, .accept])
        cache.registerSender(for: Retag.self, send: server.send)
        #expect(await eventually { cache.pendingMutations.isEmpty })
        let sends = server.sends
        #expect(sends.map(\.id) == [ids[0], ids[0], ids[0], ids[1], ids[1], ids[2], ids[3]])
        #expect(sends.map(\.change.tags) == [["1"], ["1"], ["1"], ["2"], ["2"], ["3"], ["4"]])
        #expect(server.mostInFlight == 1)
        #expect(try cache.getCachedItems(Note.self, forKey: "top") == Self.tagged(Self.notes, 1, ["4"]))
    }

    @Test func failuresAreVisibleWithTheirCountAndError() async throws {
        let fixture = try Fixture()
        let cache = try openCache(fixture)
        let server = Server([.fail, .hold])
        try cache.enqueue(Retag(noteID: 1, tags: ["x"]))
        cache.registerSender(for: Retag.self, send: server.send)
        #expect(await eventually { server.sends.count == 2 })
        let pending = try #require(cache.pendingMutations.first)
        #expect(pending.attempts == 2)
        #expect(pending.lastError == String(describing: URLError(.timedOut)))
        server.gate.open()
        // What the released send leads to (a retry, an acceptance or a rejection) ends, and the
        // change leaves the queue, before the fixture's directory goes.
        #expect(await eventually { cache.pendingMutations.isEmpty })
        await cache.idle()
    }

    @Test func aSendThatFailsAfterTheAppAskedForATryNowIsTriedAgainAtOnce() async throws {
        let fixture = try Fixture()
        var configuration = fixture.configuration(user: "alice", memory: .layer(writeBackDelay: nil))
        // A backoff the test would never see end.
        configuration.mutationRetry = .exponentialBackoff(maxAttempts: 1, initialDelay: .seconds(3600), maximumDelay: .seconds(3600))
        let cache = try AppCache(configuration: configuration)
        let attempts = Locked(0)
        // The app becomes active (the network back) while the first send is out, and that send
        // then fails: it may have failed before the network came back.
        cache.registerSender(for: Retag.self) { [weak cache] _, _ in
            guard attempts.withLock({ $0 += 1; return $0 }) == 1 else { return }
            cache?.didResume()
            throw URLError(.notConnectedToInternet)
        }
        try cache.enqueue(Retag(noteID: 1, tags: ["x"]))
        #expect(await eventually { cache.pendingMutations.isEmpty })
        #expect(attempts.withLock { $0 } == 2)
    }

    @Test func aSendCutOffBeforeItsAnswerIsSentAgainWithTheSameId() async throws {
        let fixture = try Fixture()
        let first = try openCache(fixture)
        let id = try first.enqueue(Retag(noteID: 1, tags: ["once"]))
        let lost = Server([.hold])
        first.registerSender(for: Retag.self, send: lost.send)
        #expect(await eventually { first.pendingMutations.first?.attempts == 1 })
        // The process dies with the send out: its sender stops, its lease goes.
        first.outbox.stop()

        let relaunched = try openCache(fixture)
        let server = Server()
        relaunched.registerSender(for: Retag.self, send: server.send)
        #expect(await eventually { relaunched.pendingMutations.isEmpty })
        #expect(lost.sends.map(\.id) == [id] && server.sends.map(\.id) == [id], "the same id: the server makes it once")
        lost.gate.open()
        // The lost send's answer lands before the fixture's directory goes.
        await first.idle()
    }

    @Test func aQueueWaitsForItsSenderAndItsUser() async throws {
        let fixture = try Fixture()
        let cache = try openCache(fixture)
        let aliceChange = try cache.enqueue(Retag(noteID: 1, tags: ["alice"]))
        try cache.switchUser(to: "bob")
        #expect(cache.pendingMutations.isEmpty, "per user")
        let server = Server()
        cache.registerSender(for: Retag.self, send: server.send)
        let bobChange = try cache.enqueue(Retag(noteID: 1, tags: ["bob"]))
        #expect(await eventually { cache.pendingMutations.isEmpty })
        #expect(server.sends.map(\.id) == [bobChange], "alice's queue waits while bob is signed in")
        try cache.switchUser(to: "alice")
        #expect(await eventually { cache.pendingMutations.isEmpty })
        #expect(server.sends.map(\.id) == [bobChange, aliceChange])
    }

    @Test func aQueueBehindAnUnknownKindWaitsAndIsReportedOnce() async throws {
        let fixture = try Fixture()
        let writer = try openCache(fixture)
        try writer.cacheItems(Self.notes, forKey: "top")
        try writer.flush()
        let unknown = try writer.enqueue(Bump(value: 1))
        try writer.enqueue(Retag(noteID: 1, tags: ["behind"]))
        writer.outbox.stop()

        let other = try openCache(fixture)
        let server = Server()
        other.registerSender(for: Retag.self, send: server.send)
        #expect(await eventually { fixture.diagnostics.errors.contains { $0.code == .modelMismatch && $0.message.contains("\"bump\"") } })
        #expect(server.sends.isEmpty, "order is kept: nothing passes the change that waits")
        #expect(other.pendingMutations.map(\.mutationName) == ["bump", "retag"])
        #expect(other.pendingMutations.first?.id == unknown)
        #expect(try other.getCachedItems(Note.self, forKey: "top") == Self.tagged(Self.notes, 1, ["behind"]), "known changes still show")
        // The sender looks at the queue again, twice: each look that finds it waiting lets go of
        // the lease (as `SenderLease` says), so the lease handed to this instance going proves a
        // step ran, and the second one going proves the first step after the report ended.
        let lease = other.store.disk.coordinator.senderLease
        let root = other.store.disk.store.fileSystem.versionPath
        for _ in 1...2 {
            #expect(lease.acquire(by: ObjectIdentifier(other.outbox), root: root) == .held)
            other.outbox.sendNow()
            #expect(await eventually { lease.words.load(LockFileWord.senderLease.rawValue) == 0 }, "the sender looked again")
        }
        #expect(fixture.diagnostics.errors.filter { $0.code == .modelMismatch }.count == 1, "once")
    }

    @Test func signingOutWithItsDataDropsTheQueue() async throws {
        let fixture = try Fixture()
        let cache = try openCache(fixture)
        try cache.enqueue(Retag(noteID: 1, tags: ["gone"]))
        try cache.signOut(removingData: true)
        try cache.flush()
        try cache.switchUser(to: "alice")
        #expect(cache.pendingMutations.isEmpty)
        try cache.enqueue(Retag(noteID: 1, tags: ["again"]))
        try cache.removeUser("alice")
        try cache.flush()
        #expect(cache.pendingMutations.isEmpty)
    }

    @Test func twoInstancesShareOneQueueAndOneSenderSends() async throws {
        let fixture = try Fixture()
        let app = try openCache(fixture)
        let widget = try openCache(fixture)
        try app.cacheItems(Self.notes, forKey: "top")
        try app.flush()
        let server = Server()
        app.registerSender(for: Retag.self, send: server.send)
        widget.registerSender(for: Retag.self, send: server.send)
        var ids: [UUID] = []
        for number in 1...10 {
            ids.append(try (number.isMultiple(of: 2) ? app : widget).enqueue(Retag(noteID: 1, tags: ["\(number)"])))
        }
        #expect(await eventually { app.pendingMutations.isEmpty && widget.pendingMutations.isEmpty })
        #expect(server.sends.map(\.id) == ids, "each once, in order, though both could send")
        #expect(server.mostInFlight == 1)
        try app.flush()
        #expect(try widget.getCachedItems(Note.self, forKey: "top") == Self.tagged(Self.notes, 1, ["10"]))
    }

    @Test func aDamagedQueueIsReportedAndTheRestKept() async throws {
        let fixture = try Fixture()
        let cache = try openCache(fixture)
        try cache.cacheItems(Self.notes, forKey: "top")
        try cache.flush()
        let kept = try cache.enqueue(Retag(noteID: 1, tags: ["kept"]))
        try cache.enqueue(Retag(noteID: 2, tags: ["lost"]))
        // The writer goes, as a process that ends: its sender reads the queue no more (each
        // instance reports the damage it reads, once).
        cache.outbox.stop()
        await cache.outbox.state.withLock { $0.sending.task }?.value
        let path = fixture.layout().userPath("alice") + "/.outbox"
        var bytes = try Data(contentsOf: URL(filePath: path))
        bytes[bytes.count - 10] ^= 0xFF  // inside the second record
        try bytes.write(to: URL(filePath: path))

        let reader = try openCache(fixture)
        let server = Server([.hold])
        reader.registerSender(for: Retag.self, send: server.send)
        // The sender notes its attempt before it sends, rewriting the damaged file under the
        // lock: once the send is out (held), it writes nothing more, and cannot put back the
        // file the garbage below replaces.
        #expect(await eventually { server.sends.count == 1 })
        #expect(reader.pendingMutations.map(\.id) == [kept])
        #expect(fixture.diagnostics.codes.filter { $0 == .corruptArchive }.count == 1)
        #expect(try reader.getCachedItems(Note.self, forKey: "top") == Self.tagged(Self.notes, 1, ["kept"]))
        _ = reader.pendingMutations
        #expect(fixture.diagnostics.codes.filter { $0 == .corruptArchive }.count == 1, "once")

        // Garbage, a link, a huge claim: never a crash, and the next change is queued.
        // (Another process's file change is seen once the shared change count moves, as for
        // archives: a fresh instance reads it now.)
        try Data(repeating: 0x41, count: 100).write(to: URL(filePath: path))
        let later = try openCache(fixture)
        #expect(later.pendingMutations.isEmpty)
        let next = try later.enqueue(Retag(noteID: 2, tags: ["next"]))
        #expect(later.pendingMutations.map(\.id) == [next])
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/etc/passwd")
        let linked = try openCache(fixture)
        #expect(linked.pendingMutations.isEmpty)
        let afterLink = try linked.enqueue(Retag(noteID: 2, tags: ["after a link"]))
        #expect(linked.pendingMutations.map(\.id) == [afterLink])
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType == .typeRegular)

        // The held send ends, and with it the reader's sender, before the directory goes.
        reader.outbox.stop()
        server.gate.open()
        await reader.outbox.state.withLock { $0.sending.task }?.value
    }

    @Test func aCollectionOfATypeWithPendingChangesKeepsItsPageCursorAndValidators() async throws {
        let fixture = try Fixture()
        let cache = try openCache(fixture)
        let server = Server([.hold])
        cache.registerSender(for: Retag.self, send: server.send)
        try cache.enqueue(Retag(noteID: 1, tags: ["x"]))
        // The type has a pending change: reads take the slow path from memory, which must carry
        // what the fast path did.
        let (answers, _) = await collect(cache.load(Note.self, forKey: "top", retry: .none) { _ in
            .page(Self.notes, next: "cursor-2", validators: CacheValidators(etag: "e1"))
        })
        #expect(answers.last?.items == Self.tagged(Self.notes, 1, ["x"]))
        #expect(cache.hasNextPage(Note.self, forKey: "top"))
        let switches = cache.store.state.withLock { $0.sessions.switches }
        #expect(try cache.queries.readForLoad(Note.self, key: "top", switches: switches)?.stored.validators?.etag == "e1")
        server.gate.open()
        // What the released send leads to (a retry, an acceptance or a rejection) ends, and the
        // change leaves the queue, before the fixture's directory goes.
        #expect(await eventually { cache.pendingMutations.isEmpty })
        await cache.idle()
    }

    @Test func aSenderMayCallBackIntoTheCache() async throws {
        let fixture = try Fixture()
        let cache = try openCache(fixture)
        try cache.cacheItems(Self.notes, forKey: "top")
        let seen = Locked<[Int]>([])
        // Weakly: the cache keeps its senders, so a sender holding the cache would keep both
        // alive for ever.
        cache.registerSender(for: Retag.self) { [weak cache] change, _ in
            guard let cache else { return }
            // Reads, the queue, and a follow-up change, all from inside a send.
            let pending = cache.pendingMutations.count
            _ = try cache.getCachedItems(Note.self, forKey: "top")
            seen.withLock { $0.append(pending) }
            if change.tags == ["first"] { try cache.enqueue(Retag(noteID: 2, tags: ["follow-up"])) }
        }
        try cache.enqueue(Retag(noteID: 1, tags: ["first"]))
        #expect(await eventually { cache.pendingMutations.isEmpty && seen.withLock { $0.count } == 2 })
        #expect(seen.withLock { $0 } == [1, 1], "each send saw itself still queued")
        #expect(try cache.getCachedItems(Note.self, forKey: "top") == Self.tagged(Self.tagged(Self.notes, 1, ["first"]), 2, ["follow-up"]))
    }

    @Test func enqueueRefusesWhatCannotBeStored() throws {
        struct Huge: CacheMutation {
            static let mutationName = "huge"
            var blob: String
            var key: String? { nil }
            func apply(to items: inout [Note]) {}
        }
        let fixture = try Fixture()
        let cache = try openCache(fixture)
        #expect(throws: AppCacheError.self) { try cache.enqueue(Huge(blob: String(repeating: "x", count: 2 << 20))) }
        do {
            try cache.enqueue(Huge(blob: String(repeating: "x", count: 2 << 20)))
        } catch let error as AppCacheError {
            #expect(error.code == .encodingFailed)
        }
        #expect(cache.pendingMutations.isEmpty, "nothing queued")
    }
}
