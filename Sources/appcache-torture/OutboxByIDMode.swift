import AppCacheKit
import Foundation
import MenuModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Offline changes *by id* under kills (issue 36), the second half of the outbox mode.
///
/// Pairs of children share a root holding four keyed lists of ``TorturePost`` (each post in
/// three of them, among filler posts), enqueue ``SetPostValue`` changes (a *set* of a numbered
/// value on one post; child `a…` changes posts 0–3, child `b…` posts 4–7) and send them to a
/// "server" log, while the parent kills them at random moments. Children also cache lists of
/// their own after they enqueued ("late" lists, holding their four posts at the values the
/// server holds, fetched under the server's lock as an app fetches). A last child drains.
///
/// Checked, beyond what ``OutboxMode/verify(log:reported:killedAt:episode:)`` checks (one id per
/// change through every re-send, every acknowledged change answered, never two sends at once,
/// each child's changes first sent in order):
/// - in the children: after `enqueue` returned, every cached list holding the post (the first
///   lists, the child's late lists, a late list cached right after the enqueue) reads with the
///   change applied for as long as it is pending;
/// - the server answered `ok` at most once per id (a re-send of an answered id gets the same
///   answer again, as an idempotent server gives);
/// - after the drain emptied the queue, every list on disk (the first four and every late list a
///   child said it cached) holds its posts once each, and each post shows the value of the
///   last change the server accepted for it (or its first value when none was).
extension OutboxMode {
    var byIDEpisodes: Int { quick ? 3 : 20 }
    var byIDRounds: Int { quick ? 3 : 6 }
    var byIDChangesPerChild: Int { quick ? 12 : 30 }

    mutating func runByID() throws {
        var figures = ByIDFigures()
        for episode in 0..<byIDEpisodes {
            let root = base.appending(path: "outbox-by-id-\(episode)", directoryHint: .isDirectory)
            let log = base.appending(path: "outbox-by-id-\(episode).server")
            try PostLists.cacheFirstLists(root: root)
            let run = try runEpisode(
                child: "outbox-by-id", label: "outbox by id \(episode)", root: root, log: log, rounds: byIDRounds, count: byIDChangesPerChild,
                delay: (20_000, 8_000))
            let (killedAt, drain) = (run.killedAt, run.drain)
            figures.kills += run.kills
            var reported: [Int: String] = [:]
            var lateLists: Set<String> = []
            for line in run.lines {
                let parts = line.split(separator: " ")
                if parts.first == "Q", parts.count == 3, let number = Int(parts[1]) { reported[number] = String(parts[2]) }
                if parts.first == "L", parts.count == 2 { lateLists.insert(String(parts[1])) }
                if parts.first == "C", parts.count == 3, let reads = Int(parts[1]), let pending = Int(parts[2]) {
                    figures.pendingReads += reads
                    figures.pendingShown += pending
                }
            }
            let outcome = verify(log: log, reported: reported, killedAt: killedAt, episode: episode)
            let server = ServerLog(log)
            checkAnswers(server, episode: episode)
            checkFinalLists(drain.printed, server: server, lateLists: lateLists, episode: episode, figures: &figures)
            figures.enqueued += reported.count
            figures.sends += outcome.sends
            figures.resends += outcome.resends
            figures.cutOff += outcome.cutOff
            figures.answeredAgain += server.answeredAgain
            figures.accepted += server.acceptedIDs.count
            figures.lateLists += lateLists.count
            report.operations += reported.count + outcome.sends
            let leftover = root.appending(path: "version-1/user-u/.outbox")
            if FileManager.default.fileExists(atPath: leftover.path(percentEncoded: false)) {
                report.violation("outbox by id \(episode): the queue file stayed after every change was answered")
            }
        }
        report.figure(
            "outbox by id: \(figures.enqueued) changes by id enqueued (enqueue returned), \(figures.accepted) accepted once each, \(figures.sends) sends, \(figures.resends) sends again (same id), \(figures.answeredAgain) of them of a change the server had answered (killed before recording it), \(figures.cutOff) cut off by a kill, \(figures.kills) kills")
        report.figure(
            "outbox by id: \(figures.pendingReads) list reads after an enqueue, \(figures.pendingShown) posts in them showing a change still pending after the read; at the end \(figures.finalLists) lists checked (\(figures.lateLists) cached after changes were enqueued), \(figures.finalValues) post values equal to the server's")
    }

    struct ByIDFigures {
        var enqueued = 0
        var accepted = 0
        var sends = 0
        var resends = 0
        var answeredAgain = 0
        var cutOff = 0
        var kills = 0
        var pendingReads = 0
        var pendingShown = 0
        var finalLists = 0
        var lateLists = 0
        var finalValues = 0
    }

    /// An idempotent server answers `ok` once per id: a second `ok` means a change was applied twice.
    func checkAnswers(_ server: ServerLog, episode: Int) {
        for (id, count) in server.okCount where count > 1 {
            report.violation("outbox by id \(episode): the server accepted change \(id) \(count) times")
        }
    }

    /// Every list the drain read (`V key post value`, `N key count`) against the server's values.
    func checkFinalLists(_ printed: [String], server: ServerLog, lateLists: Set<String>, episode: Int, figures: inout ByIDFigures) {
        var counts: [String: Int] = [:]
        var values: [String: [Int: Int]] = [:]
        for line in printed {
            let parts = line.split(separator: " ").map(String.init)
            if parts.first == "N", parts.count == 3, let count = Int(parts[2]) { counts[parts[1]] = count }
            if parts.first == "V", parts.count == 4, let post = Int(parts[2]), let value = Int(parts[3]) {
                if values[parts[1], default: [:]].updateValue(value, forKey: post) != nil {
                    report.violation("outbox by id \(episode): list \(parts[1]) holds post \(post) twice")
                }
            }
        }
        for (index, key) in PostLists.firstKeys.enumerated() {
            guard let count = counts[key] else {
                report.violation("outbox by id \(episode): list \(key) is gone")
                continue
            }
            let expected = PostLists.firstList(index)
            if count != expected.count { report.violation("outbox by id \(episode): list \(key) holds \(count) posts, not \(expected.count)") }
            let posts = Set(values[key, default: [:]].keys)
            let wanted = Set(expected.map(\.id).filter { PostLists.posts.contains($0) })
            if posts != wanted { report.violation("outbox by id \(episode): list \(key) holds posts \(posts.sorted()), not \(wanted.sorted())") }
        }
        for key in lateLists {
            guard let count = counts[key] else {
                report.violation("outbox by id \(episode): late list \(key) (written through before the child said so) is gone")
                continue
            }
            let letter = key.split(separator: "-").dropFirst().first?.first ?? "?"
            let wanted = Set(PostLists.posts(of: letter))
            if count != PostLists.lateListCount || Set(values[key, default: [:]].keys) != wanted {
                report.violation("outbox by id \(episode): late list \(key) holds \(count) posts, \(values[key, default: [:]].keys.sorted()) of the changed ones")
            }
        }
        for (key, posts) in values.sorted(by: { $0.key < $1.key }) {
            for (post, value) in posts.sorted(by: { $0.key < $1.key }) {
                let wanted = server.value[post] ?? PostLists.firstValue
                if value == wanted {
                    figures.finalValues += 1
                } else {
                    report.violation("outbox by id \(episode): list \(key) shows post \(post) at \(value) once every change was answered; the server holds \(wanted)")
                }
            }
        }
        figures.finalLists += counts.count
    }
}

/// A post of the by-id episodes: `value` is the number of the last change that set it.
struct TorturePost: CacheableModel, Identifiable, Hashable {
    static let cacheName = "TorturePosts"
    var id: Int
    var value: Int
    var setBy: String
}

/// Sets one post's value: a *set*, so applying it again changes nothing.
struct SetPostValue: ItemMutation {
    static let mutationName = "torture-set-post"
    var post: Int
    var number: Int
    var owner: String
    var itemIDs: [Int] { [post] }
    func apply(to item: inout TorturePost) {
        item.value = number
        item.setBy = owner
    }
}

/// The lists of the by-id episodes.
enum PostLists {
    /// The posts changed: child `a…` changes 0–3, child `b…` 4–7 (concurrent children touch
    /// different posts, so a child knows which value a post it changed must show).
    static let posts = 0..<8
    static let firstKeys = (0..<4).map { "list-\($0)" }
    static let firstValue = -1
    static let lateListCount = 12

    static func posts(of letter: Character) -> [Int] {
        letter == "a" ? [0, 1, 2, 3] : [4, 5, 6, 7]
    }

    /// Post `post` is in three of the four first lists.
    static func holds(list: Int, post: Int) -> Bool {
        (post + list) % 4 != 0
    }

    /// The first list `index`: the posts it holds among filler posts, 20 in all.
    static func firstList(_ index: Int) -> [TorturePost] {
        let changed = posts.filter { holds(list: index, post: $0) }.map { TorturePost(id: $0, value: firstValue, setBy: "") }
        let filler = (0..<(20 - changed.count)).map { TorturePost(id: 1000 + index * 100 + $0, value: 0, setBy: "filler") }
        var items = filler + changed
        // Spread the changed posts through the list.
        items.sort { ($0.id * 7919) % 101 < ($1.id * 7919) % 101 }
        return items
    }

    /// A late list: the letter's four posts at the server's values, among filler posts.
    static func lateList(letter: Character, server: [Int: Int], salt: Int) -> [TorturePost] {
        let changed = posts(of: letter).map { TorturePost(id: $0, value: server[$0] ?? firstValue, setBy: "server") }
        let filler = (0..<(lateListCount - changed.count)).map { TorturePost(id: 5000 + salt * 20 + $0, value: 0, setBy: "filler") }
        return changed + filler
    }

    static func configuration(root: URL) -> AppCache.Configuration {
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: "u")
        configuration.observesApplicationLifecycle = false
        configuration.writeBackDelay = .zero
        configuration.mutationRetry = .exponentialBackoff(maxAttempts: 1, initialDelay: .milliseconds(2), maximumDelay: .milliseconds(20))
        return configuration
    }

    /// The parent caches the first lists before any child runs.
    static func cacheFirstLists(root: URL) throws {
        let cache = try AppCache(configuration: configuration(root: root))
        for (index, key) in firstKeys.enumerated() { try cache.cacheItems(firstList(index), forKey: key) }
        try cache.flush()
    }
}

/// The server log of the by-id episodes, read back: `S time pid id owner number post` when a
/// send starts, `F time pid id ok|fail|reject|ok-again|reject-again` when it is answered.
struct ServerLog {
    /// The server's value of each post: the number of the last change it accepted.
    var value: [Int: Int] = [:]
    var okCount: [String: Int] = [:]
    var answers: [String: String] = [:]
    var acceptedIDs: Set<String> = []
    var answeredAgain = 0

    init(_ url: URL) {
        self.init(text: (try? String(contentsOf: url, encoding: .utf8)) ?? "")
    }

    init(text: String) {
        var changeOf: [String: (post: Int, number: Int)] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ").map(String.init)
            if parts.first == "S", parts.count == 7, let number = Int(parts[5]), let post = Int(parts[6]) {
                changeOf[parts[3]] = (post, number)
            } else if parts.first == "F", parts.count == 5 {
                let id = parts[3]
                switch parts[4] {
                case "ok":
                    okCount[id, default: 0] += 1
                    acceptedIDs.insert(id)
                    answers[id] = "ok"
                    if let change = changeOf[id] { value[change.post] = change.number }
                case "reject": answers[id] = "reject"
                case "ok-again", "reject-again": answeredAgain += 1
                default: break
                }
            }
        }
    }
}

/// The child side of the by-id episodes (see ``OutboxMode/runByID()``). Prints `Q number id`
/// once `enqueue` returned, `L key` once a late list is written through, `C reads shown` at the
/// end, `DONE` once the queue is empty; the drain (`--owner drain`) then prints `N key count`
/// and `V key post value` for every list of posts.
enum OutboxByIDChild {
    static func run(root: URL, log: URL, owner: String, start: Int, count: Int, seed: UInt64) throws -> Never {
        let cache = try AppCache(configuration: PostLists.configuration(root: root))
        let logPath = log.path(percentEncoded: false)
        let server = open(logPath, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        let serverLock = open(logPath + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard server >= 0, serverLock >= 0 else { fatalError("cannot open the server log") }
        let pid = getpid()
        let dice = Shared(SeededRandom(seed: seed))
        @Sendable func serverLine(_ text: String) {
            let line = text + "\n"
            _ = line.withCString { write(server, $0, strlen($0)) }
        }
        /// The server's state, read under its lock.
        @Sendable func readServer() -> ServerLog {
            ServerLog(text: (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")
        }
        // The server takes its lock for each request: a fetch (a late list) sees a send whole.
        cache.registerSender(for: SetPostValue.self) { change, id in
            flock(serverLock, LOCK_EX)
            defer { flock(serverLock, LOCK_UN) }
            serverLine("S \(OutboxChild.monotonicNanoseconds()) \(pid) \(id) \(change.owner) \(change.number) \(change.post)")
            let (pause, roll) = dice.withLock { ($0.next() % 3_000, $0.next() % 100) }
            usleep(UInt32(pause))
            // Idempotent: an id answered before gets the same answer.
            switch readServer().answers[id.uuidString] {
            case "ok":
                serverLine("F \(OutboxChild.monotonicNanoseconds()) \(pid) \(id) ok-again")
                return
            case "reject":
                serverLine("F \(OutboxChild.monotonicNanoseconds()) \(pid) \(id) reject-again")
                throw MutationRejected(reason: "refused by the torture server, again")
            default: break
            }
            try OutboxChild.answer(roll, id: id, pid: pid, log: serverLine)
        }
        let letter = owner.first ?? "?"
        let mine = PostLists.posts(of: letter)
        /// This child's last change of each of its posts: what a list holding the post must show
        /// while that change is pending.
        var last: [Int: (number: Int, id: UUID)] = [:]
        var lateKeys: [String] = []
        var reads = 0
        var shown = 0
        /// Reads a list and checks that each of this child's posts in it shows its last change
        /// while that change is pending.
        func check(_ key: String, after what: String) {
            guard let items = (try? cache.getCachedItems(TorturePost.self, forKey: key)) ?? nil else {
                emit("VIOLATION list \(key) is not cached (\(what))")
                return
            }
            reads += 1
            // Read after the list: a change still pending now was pending during the read.
            let pending = Set(cache.pendingMutations.map(\.id))
            var differing: [(post: Int, value: Int, change: (number: Int, id: UUID))] = []
            for item in items {
                guard let change = last[item.id] else { continue }
                if item.value != change.number {
                    differing.append((item.id, item.value, change))
                } else if pending.contains(change.id) {
                    shown += 1
                }
            }
            for wrong in differing where pending.contains(wrong.change.id) {
                emit("VIOLATION list \(key) shows post \(wrong.post) at \(wrong.value) while change \(wrong.change.number) (\(wrong.change.id)) setting it is pending (\(what))")
            }
        }
        for number in start..<(start + count) {
            let post = mine[Int(dice.withLock { $0.next() } % UInt64(mine.count))]
            do {
                let id = try cache.enqueue(SetPostValue(post: post, number: number, owner: owner))
                last[post] = (number, id)
                emit("Q \(number) \(id)")
            } catch {
                emit("E \(number) \(error)")
                continue
            }
            for (index, key) in PostLists.firstKeys.enumerated() where PostLists.holds(list: index, post: post) {
                check(key, after: "after enqueueing \(number)")
            }
            for key in lateKeys { check(key, after: "after enqueueing \(number)") }
            if lateKeys.count < 4, dice.withLock({ $0.next() % 4 }) == 0 {
                // A list first cached after the change was enqueued, with the server's values as
                // an app would fetch them: no send is answered between the fetch and the write.
                let key = "late-\(owner)-\(number)"
                flock(serverLock, LOCK_EX)
                let items = PostLists.lateList(letter: letter, server: readServer().value, salt: number)
                let cached: Bool
                do {
                    try cache.cacheItems(items, forKey: key)
                    cached = true
                } catch {
                    emit("E late \(key) \(error)")
                    cached = false
                }
                flock(serverLock, LOCK_UN)
                if cached {
                    emit("L \(key)")
                    lateKeys.append(key)
                    check(key, after: "first read of a list cached after enqueueing \(number)")
                }
            }
            usleep(UInt32(dice.withLock { $0.next() % 6_000 }))
        }
        let deadline = Date().addingTimeInterval(90)
        while !cache.pendingMutations.isEmpty && Date() < deadline {
            cache.networkDidBecomeAvailable()
            usleep(5_000)
        }
        emit("C \(reads) \(shown)")
        let done = cache.pendingMutations.isEmpty
        emit(done ? "DONE" : "PENDING \(cache.pendingMutations.count)")
        if done && owner == "drain" {
            // Every list of posts, as this process reads it once every change was answered.
            for entry in try cache.entries() where entry.cacheName == TorturePost.cacheName {
                guard let key = entry.key else { continue }
                guard let items = try cache.getCachedItems(TorturePost.self, forKey: key) else {
                    emit("VIOLATION list \(key) is listed but does not read")
                    continue
                }
                emit("N \(key) \(items.count)")
                for item in items where PostLists.posts.contains(item.id) { emit("V \(key) \(item.id) \(item.value)") }
            }
        }
        exit(0)
    }
}
