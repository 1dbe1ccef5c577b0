import AppCacheKit
import Foundation
import MenuModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Offline changes under kills: pairs of children share a root, each enqueueing numbered
/// changes and sending the queue to a "server" (a log file every process appends to), and the
/// parent kills them at random moments, mid-enqueue and mid-send included. A last child drains
/// what is left. From the server's log and what the children said they enqueued, the verifier
/// proves: no change whose `enqueue` returned was lost (each was accepted or rejected), a change
/// kept one id through every re-send, no two sends ran at the same time (across processes),
/// and each child's changes were first sent in the order it enqueued them. Then the same with
/// changes by id shown on, and folded into, every list holding their item: ``runByID()``.
struct OutboxMode {
    let base: URL
    let quick: Bool
    let report: Report
    var random: SeededRandom

    var episodes: Int { quick ? 3 : 30 }
    var rounds: Int { quick ? 3 : 6 }
    var changesPerChild: Int { quick ? 15 : 40 }

    mutating func run() throws {
        var enqueued = 0
        var sends = 0
        var resends = 0
        var cutOff = 0
        for episode in 0..<episodes {
            let root = base.appending(path: "outbox-\(episode)", directoryHint: .isDirectory)
            let log = base.appending(path: "outbox-\(episode).server")
            let run = try runEpisode(child: "outbox", label: "outbox \(episode)", root: root, log: log, rounds: rounds, count: changesPerChild, delay: (10_000, 5_000))
            let killedAt = run.killedAt
            var reported: [Int: String] = [:]
            for line in run.lines {
                let parts = line.split(separator: " ")
                if parts.first == "Q", parts.count == 3, let number = Int(parts[1]) { reported[number] = String(parts[2]) }
            }
            let outcome = verify(log: log, reported: reported, killedAt: killedAt, episode: episode)
            enqueued += reported.count
            sends += outcome.sends
            resends += outcome.resends
            cutOff += outcome.cutOff
            report.operations += reported.count + outcome.sends
            let leftover = root.appending(path: "version-1/user-u/.outbox")
            if FileManager.default.fileExists(atPath: leftover.path(percentEncoded: false)) {
                report.violation("outbox \(episode): the queue file stayed after every change was answered")
            }
        }
        report.figure("outbox: \(enqueued) changes enqueued (enqueue returned), \(sends) sends, \(cutOff) cut off by a kill, \(resends) sends again of a change (after a kill or a failure), each with its first id")
        try runByID()
    }

    /// Checks one episode's server log against what the children said they enqueued.
    /// What the children of one episode did: every line they printed, the last child that
    /// drained the queue, and when each killed child was killed.
    struct EpisodeRun {
        var lines: [String] = []
        var drain: ChildProcess
        var killedAt: [Int32: UInt64] = [:]
        var kills = 0
    }

    /// Runs one episode's children on `root`: `rounds` rounds of two children of kind `child`
    /// ("a" and "b"), each given `count` changes numbered on from the last round's; seven rounds
    /// in ten the parent kills some of them after `delay.base` plus up to `delay.perChange` per
    /// change (microseconds), mid-enqueue and mid-send included. Then a last child drains what
    /// is left. A hung child, a drain that did not empty the queue and every `VIOLATION` a child
    /// printed are violations, named by `label`.
    mutating func runEpisode(
        child kind: String, label: String, root: URL, log: URL, rounds: Int, count: Int, delay: (base: Int, perChange: Int)
    ) throws -> EpisodeRun {
        func child(_ owner: String, start: Int, count: Int, seed: UInt64) throws -> ChildProcess {
            try ChildProcess(arguments: [
                "--child", kind, "--root", root.path(percentEncoded: false), "--log", log.path(percentEncoded: false),
                "--owner", owner, "--start", String(start), "--count", String(count), "--seed", String(seed),
            ])
        }
        var lines: [String] = []
        var killedAt: [Int32: UInt64] = [:]
        var kills = 0
        var sequence = 0
        report.episodes += 1
        for round in 0..<rounds {
            let children = try ["a", "b"].map { owner -> ChildProcess in
                defer { sequence += count }
                return try child("\(owner)\(round)", start: sequence, count: count, seed: random.next() % 1_000_000)
            }
            if random.next() % 10 < 7 {
                usleep(UInt32(delay.base + Int(random.next() % UInt64(count * delay.perChange))))
                for child in children where random.next() % 3 != 0 {
                    child.kill()
                    killedAt[child.pid] = OutboxChild.monotonicNanoseconds()
                    report.kills += 1
                    kills += 1
                }
            }
            for child in children {
                if !child.wait(timeout: 120) { report.violation("\(label): a child hung") }
                for line in child.printed where line.hasPrefix("VIOLATION") { report.violation("\(label): \(line)") }
                lines += child.printed
            }
        }
        let drain = try child("drain", start: 0, count: 0, seed: 1)
        if !drain.wait(timeout: 120) || !drain.printed.contains("DONE") {
            report.violation("\(label): the last child did not empty the queue (\(drain.termination))")
        }
        for line in drain.printed where line.hasPrefix("VIOLATION") { report.violation("\(label): drain: \(line)") }
        return EpisodeRun(lines: lines, drain: drain, killedAt: killedAt, kills: kills)
    }

    func verify(log: URL, reported: [Int: String], killedAt: [Int32: UInt64], episode: Int) -> (sends: Int, resends: Int, cutOff: Int) {
        struct Send {
            var start: UInt64
            var end: UInt64?
            var pid: Int32
            var id: String
            var owner: String
            var number: Int
        }
        let lines = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n")
        var sends: [Send] = []
        var answered: Set<String> = []
        for line in lines {
            let parts = line.split(separator: " ").map(String.init)
            guard parts.count >= 4, let time = UInt64(parts[1]), let pid = Int32(parts[2]) else {
                report.violation("outbox \(episode): a server line that does not parse: \(line)")
                continue
            }
            // The by-id episodes add the post changed after the number.
            if parts[0] == "S", parts.count >= 6, let number = Int(parts[5]) {
                sends.append(Send(start: time, pid: pid, id: parts[3], owner: parts[4], number: number))
            } else if parts[0] == "F", parts.count == 5 {
                if let index = sends.lastIndex(where: { $0.pid == pid && $0.id == parts[3] && $0.end == nil }) { sends[index].end = time }
                if parts[4] != "fail" { answered.insert(parts[3]) }
            }
        }
        // One id per change, the one its enqueue returned.
        var idOf: [Int: String] = [:]
        for send in sends {
            if let known = idOf[send.number], known != send.id {
                report.violation("outbox \(episode): change \(send.number) was sent with two ids, \(known) and \(send.id)")
            }
            idOf[send.number] = send.id
        }
        for (number, id) in reported.sorted(by: { $0.key < $1.key }) {
            guard let sent = idOf[number] else {
                report.violation("outbox \(episode): change \(number) was enqueued and never sent")
                continue
            }
            if sent != id { report.violation("outbox \(episode): change \(number) was enqueued as \(id) but sent as \(sent)") }
            if !answered.contains(id) { report.violation("outbox \(episode): change \(number) was never accepted or rejected") }
        }
        // Never two sends at once: a send lasts until its answer, or until its process was killed.
        let intervals = sends.map { send -> (UInt64, UInt64, Send) in
            (send.start, send.end ?? killedAt[send.pid] ?? UInt64.max, send)
        }.sorted { $0.0 < $1.0 }
        for (earlier, later) in zip(intervals, intervals.dropFirst()) where later.0 < earlier.1 {
            report.violation("outbox \(episode): change \(later.2.number) (process \(later.2.pid)) was sent while change \(earlier.2.number) (process \(earlier.2.pid)) still was")
        }
        // Each child's changes first sent in the order it enqueued them.
        var firstSent: [String: [Int]] = [:]
        var seen: Set<Int> = []
        for send in sends.sorted(by: { $0.start < $1.start }) where seen.insert(send.number).inserted {
            firstSent[send.owner, default: []].append(send.number)
        }
        for (owner, numbers) in firstSent where numbers != numbers.sorted() {
            report.violation("outbox \(episode): \(owner)'s changes were first sent out of order: \(numbers)")
        }
        let cutOff = sends.filter { $0.end == nil && killedAt[$0.pid] != nil }.count
        return (sends.count, sends.count - seen.count, cutOff)
    }
}

/// A numbered change of the outbox mode; its local change renames one item of the collection.
struct TortureChange: CacheMutation {
    static let mutationName = "torture-change"
    var owner: String
    var number: Int
    var key: String? { "outbox" }
    func apply(to items: inout [MenuItem]) {
        for index in items.indices where index == number % 20 { items[index].name = "changed by \(owner)" }
    }
}

/// The child side of the outbox mode: enqueues its numbered changes (printing `Q number id`
/// once `enqueue` returned), sends the queue to the server log (`S time pid id owner number`
/// when a send starts, `F time pid id ok|fail|reject` when it answers), and prints `DONE` once
/// the queue is empty.
enum OutboxChild {
    static func run(root: URL, log: URL, owner: String, start: Int, count: Int, seed: UInt64) throws -> Never {
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: "u")
        configuration.observesApplicationLifecycle = false
        configuration.writeBackDelay = .zero
        configuration.mutationRetry = .exponentialBackoff(maxAttempts: 1, initialDelay: .milliseconds(2), maximumDelay: .milliseconds(20))
        let cache = try AppCache(configuration: configuration)
        let server = open(log.path(percentEncoded: false), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard server >= 0 else { fatalError("cannot open the server log") }
        let pid = getpid()
        let dice = Shared(SeededRandom(seed: seed))
        @Sendable func serverLine(_ text: String) {
            let line = text + "\n"
            _ = line.withCString { write(server, $0, strlen($0)) }
        }
        cache.registerSender(for: TortureChange.self) { change, id in
            serverLine("S \(monotonicNanoseconds()) \(pid) \(id) \(change.owner) \(change.number)")
            let (pause, roll) = dice.withLock { ($0.next() % 3_000, $0.next() % 100) }
            usleep(UInt32(pause))
            try answer(roll, id: id, pid: pid, log: serverLine)
        }
        if count > 0, (try? cache.getCachedItems(MenuItem.self, forKey: "outbox")) == nil {
            try? cache.cacheItems(MenuItem.sampleMenu(count: 20, seed: 1), forKey: "outbox")
        }
        for number in start..<(start + count) {
            do {
                let id = try cache.enqueue(TortureChange(owner: owner, number: number))
                emit("Q \(number) \(id)")
            } catch {
                // Not claimed: the verifier asks nothing of a change whose enqueue threw.
                emit("E \(number) \(error)")
            }
            usleep(UInt32(dice.withLock { $0.next() % 8_000 }))
        }
        let deadline = Date().addingTimeInterval(90)
        while !cache.pendingMutations.isEmpty && Date() < deadline {
            cache.networkDidBecomeAvailable()
            usleep(5_000)
        }
        emit(cache.pendingMutations.isEmpty ? "DONE" : "PENDING \(cache.pendingMutations.count)")
        exit(0)
    }

    /// The system's monotonic clock, the same in every process.
    /// The torture server's answer to a send of `id` (by process `pid`), by `roll` (0 to 99): a
    /// failure 20 times in 100, a rejection 5, else acceptance, each written to its log.
    static func answer(_ roll: UInt64, id: UUID, pid: Int32, log: (String) -> Void) throws {
        if roll < 20 {
            log("F \(monotonicNanoseconds()) \(pid) \(id) fail")
            throw URLError(.timedOut)
        }
        if roll < 25 {
            log("F \(monotonicNanoseconds()) \(pid) \(id) reject")
            throw MutationRejected(reason: "refused by the torture server")
        }
        log("F \(monotonicNanoseconds()) \(pid) \(id) ok")
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
