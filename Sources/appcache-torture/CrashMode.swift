import AppCacheKit
import Foundation
import MenuModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Kills writers with `SIGKILL` at random moments and checks, after each kill, every invariant
/// a reopened cache must keep.
struct CrashMode {
    let base: URL
    let episodes: Int
    let report: Report
    var random: SeededRandom

    /// What the parent learned from a root's workers: the last durable state per user and key.
    enum Durable {
        case written(Int)
        /// A removal had started (and maybe finished) when the worker was killed.
        case removing
        case removed
    }

    /// Collections a user no operation removes holds in the plain root (``Worker/fillerUser``):
    /// enough for its pack to be checkpointed, so that reopening reads through the checkpoint.
    static let filler = 1_000

    mutating func run() throws {
        let roots = [
            (url: base.appending(path: "crash-plain", directoryHint: .isDirectory), budget: Int?.none),
            (url: base.appending(path: "crash-budget", directoryHint: .isDirectory), budget: Int?.some(24_000)),
        ]
        var models: [[String: Durable]] = [[:], [:]]
        var sequenceStart = 0
        for episode in 0..<episodes {
            let which = episode % 2
            let (root, budget) = roots[which]
            let delays = ["0", "20", "none"]
            let delay = delays[Int(random.next() % 3)]
            // Now and then a child opens another schema version (wiping this one) and is killed
            // while it wipes; the next open must finish the job.
            let otherVersion = episode % 10 == 9
            var arguments = [
                "--child", "worker", "--root", root.path(percentEncoded: false), "--seed", "\(random.next() % 1_000_000)",
                "--delay", delay, "--sequence-start", "\(sequenceStart)",
            ]
            if let budget { arguments += ["--budget", "\(budget)"] } else { arguments += ["--filler", "\(Self.filler)"] }
            if otherVersion { arguments += ["--schema-version", "2"] }
            sequenceStart += 10_000_000
            let child = try ChildProcess(arguments: arguments)
            usleep(UInt32(30_000 + random.next() % 350_000))
            child.kill()
            child.wait(timeout: 30)
            report.kills += 1
            report.episodes += 1
            let lines = child.printed
            report.operations += lines.reversed().lazy.compactMap { $0.hasPrefix("N\t") ? Int($0.dropFirst(2)) : nil }.first ?? 0
            for line in lines where line.hasPrefix("VIOLATION") { report.violation("crash episode \(episode) (delay \(delay)): child: \(line)") }
            if otherVersion {
                models[which] = [:]  // that version's data is gone, or going
            } else {
                apply(lines, to: &models[which])
            }
            verify(root: root, budget: budget, model: models[which], episode: episode, delay: delay)
        }
    }

    /// Takes a worker's lines into the model, in order.
    private func apply(_ lines: [String], to model: inout [String: Durable]) {
        for line in lines {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            switch fields.first {
            case "D" where fields.count == 4:
                if let sequence = Int(fields[3]) { model[fields[1] + "\t" + fields[2]] = .written(sequence) }
            case "r" where fields.count == 3: model[fields[1] + "\t" + fields[2]] = .removing
            case "R" where fields.count == 3: model[fields[1] + "\t" + fields[2]] = .removed
            case "u" where fields.count == 2:
                for key in model.keys where key.hasPrefix(fields[1] + "\t") { model[key] = .removing }
            case "U" where fields.count == 2:
                for key in model.keys where key.hasPrefix(fields[1] + "\t") { model[key] = .removed }
            default: break
            }
        }
    }

    /// Reopens the root and checks every collection and the index.
    private func verify(root: URL, budget: Int?, model: [String: Durable], episode: Int, delay: String) {
        let checks = RootChecks(root: root)
        let violations = Shared<[String]>([])
        // The root as the kill left it, kept when a check fails so that the failure can be
        // reproduced.
        let asFound = FileManager.default.temporaryDirectory
            .appending(path: "appcache-torture-failures/crash-\(ProcessInfo.processInfo.processIdentifier)-\(episode)", directoryHint: .isDirectory)
        try? FileManager.default.createDirectory(at: asFound.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? FileManager.default.copyItem(at: root, to: asFound)
        defer {
            if violations.withLock({ $0.isEmpty }) {
                try? FileManager.default.removeItem(at: asFound)
            } else {
                print("note: crash episode \(episode): the root as the kill left it is kept at \(asFound.path(percentEncoded: false))")
            }
        }
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: "u0")
        TortureLayout.apply(to: &configuration)
        configuration.diskByteLimit = budget
        configuration.writeBackDelay = .zero
        configuration.diagnostics = { problem in violations.withLock { $0.append("diagnostics: \(problem)") } }
        do {
            let cache = try AppCache(configuration: configuration)
            if checks.files().contains(where: { $0.hasPrefix("version-2") }) {
                violations.withLock { $0.append("another version's data outlived the open") }
            }
            // A removal the killed writer recorded but did not carry out is carried out by the
            // open's first batch, which may be its own background one: its trash goes once that
            // batch lets go of the lock, on the cache's thread. It must go, but may take a moment.
            let deadline = Date().addingTimeInterval(5)
            while checks.files().contains(where: { $0.hasPrefix(".wipe-") }), Date() < deadline { usleep(10_000) }
            if checks.files().contains(where: { $0.hasPrefix(".wipe-") }) {
                violations.withLock { $0.append("trash outlived the open by 5 seconds") }
            }
            // (A first batch may evict: a killed writer can leave the disk over its budget, and
            // the budget holds again after the open; so the disk is measured after.)
            let usage = try cache.bytesOnDisk()
            let measured = checks.measuredUsage()
            if usage != measured {
                violations.withLock { $0.append("after the open, diskUsage \(usage) but the archive files and packs take \(measured) bytes") }
            }
            for user in ["u0", "u1", "u2"] {
                try cache.switchUser(to: user)
                for key in (0..<6).map({ "k\($0)" }) {
                    let items = try cache.getCachedItems(TortureItem.self, forKey: key)
                    if let items, let problem = TortureItem.problem(with: items, user: user, key: key) {
                        violations.withLock { $0.append("\(user)'s \(key): \(problem)") }
                    }
                    guard case .written(let sequence) = model[user + "\t" + key] else { continue }
                    if let found = items?[0].sequence {
                        if found < sequence {
                            violations.withLock { $0.append("\(user)'s \(key) is write \(found), older than durable write \(sequence)") }
                        }
                    } else if budget == nil {
                        violations.withLock { $0.append("\(user)'s \(key) is missing; write \(sequence) was durable") }
                    }
                }
            }
            if budget == nil {
                // Written once (a killed filling is done again): each whole, or not there yet;
                // all there once the last is.
                try cache.switchUser(to: Worker.fillerUser)
                let last = try cache.getCachedItems(TortureItem.self, forKey: Worker.fillerKey(Self.filler - 1)) != nil
                for index in [0, 1, Self.filler / 3, Self.filler / 2, Self.filler - 2, Self.filler - 1] {
                    let key = Worker.fillerKey(index)
                    let items = try cache.getCachedItems(TortureItem.self, forKey: key)
                    if let items, let problem = TortureItem.problem(with: items, user: Worker.fillerUser, key: key) {
                        violations.withLock { $0.append("the filler's \(key): \(problem)") }
                    } else if items == nil, last {
                        violations.withLock { $0.append("the filler's \(key) is missing, its last collection is there") }
                    }
                }
            }
            try cache.switchUser(to: "u0")
            violations.withLock { $0 += checks.afterOpenAndOneWrite(cache, budget: budget) }
        } catch {
            violations.withLock { $0.append("reopening failed: \(error)") }
        }
        for violation in violations.withLock({ $0 }) {
            report.violation("crash episode \(episode) (delay \(delay)): \(violation)")
        }
    }
}

/// Two workers on one root at once, as an app and its extension: writes, reads, flushes,
/// sweeps, removals and (in budget rounds) evictions; one is killed and restarted now and then,
/// and the other must go on; then it is stopped (`SIGSTOP`) while it holds the lock file, and
/// the other must go on within the lock timeout's bound, its reads never waiting. Every worker
/// checks that the other's durable writes are what it reads next; at the end both exit
/// normally and their exit flushes must be on disk. Last, two processes append to one
/// collection with `updateItems` at once (``SharedUpdates``): every item of both must be there.
struct TwoProcessMode {
    let base: URL
    let rounds: Int
    let operationsPerWorker: Int
    /// How many times two processes append to one collection with `updateItems`.
    let sharedUpdateRounds: Int
    let report: Report
    var random: SeededRandom

    mutating func run() throws {
        var stops = 0
        var busyDuringStops = 0
        var longestOperation = 0
        var longestRead = 0
        for round in 0..<rounds {
            let budget: Int? = round % 3 == 2 ? 40_000 : nil
            let root = base.appending(path: "two-\(round)", directoryHint: .isDirectory)
            let events = base.appending(path: "two-\(round)-events")
            try Data().write(to: events)
            let delay = ["0", "20", "none"][round % 3]
            var sequenceStart = 0
            func spawn(_ owner: String, _ other: String) throws -> ChildProcess {
                sequenceStart += 10_000_000
                var arguments = [
                    "--child", "worker", "--root", root.path(percentEncoded: false), "--seed", "\(random.next() % 1_000_000)",
                    "--delay", delay, "--sequence-start", "\(sequenceStart)", "--owner", owner, "--other", other,
                    "--events", events.path(percentEncoded: false), "--operations", "\(operationsPerWorker)",
                ]
                if let budget { arguments += ["--budget", "\(budget)"] }
                // The first worker is never stopped: it checks that it never waits past the bound.
                if owner == "A" { arguments += ["--check-timing", "yes"] }
                return try ChildProcess(arguments: arguments)
            }
            let first = try spawn("A", "B")
            var second = try spawn("B", "A")
            var finished: [ChildProcess] = []
            // Kill the second worker a few times while the first works on, then let it finish.
            for _ in 0..<2 {
                usleep(UInt32(50_000 + random.next() % 250_000))
                guard second.process.isRunning else { break }
                let before = progress(of: first)
                second.kill()
                second.wait(timeout: 30)
                report.kills += 1
                finished.append(second)
                // The survivor must not be blocked by a lock its killed peer held.
                let deadline = Date().addingTimeInterval(20)
                while first.process.isRunning && progress(of: first) == before && Date() < deadline { usleep(20_000) }
                if first.process.isRunning && progress(of: first) == before {
                    report.violation("two-process round \(round): the surviving worker made no progress after its peer was killed")
                }
                second = try spawn("B", "A")
            }
            // Stop the second worker (SIGSTOP) while it holds the lock file, as a suspended or
            // stopped extension would, for a few lock timeouts: the first must go on (reads at
            // once, writes done or `busy` within the bound), and both must go on after SIGCONT.
            usleep(UInt32(100_000 + random.next() % 200_000))
            let lockFile = root.appending(path: "version-1/.lock").path(percentEncoded: false)
            if second.process.isRunning, StoppedPeer.stop(second, whileHolding: lockFile, random: &random) {
                let before = first.printed.count
                usleep(2_500_000)
                second.resume()
                stops += 1
                busyDuringStops += first.printed.dropFirst(before).filter { $0.hasPrefix("B\t") }.count
            }
            for worker in [first, second] where !worker.wait(timeout: 180) {
                report.violation("two-process round \(round): a worker did not finish (hang)")
            }
            for worker in [first, second] where !worker.exitedCleanly {
                report.violation("two-process round \(round): a worker ended with \(worker.termination)")
            }
            // Per key (each has one writer), its last durable event, and whether a worker that
            // then exited normally made it (exact) or a killed one (an unreported write of its
            // may have landed after it).
            var lastDurable: [String: (sequence: Int?, exact: Bool)] = [:]
            for (number, worker) in (finished + [first, second]).enumerated() {
                report.operations += worker.printed.reversed().lazy.compactMap { $0.hasPrefix("N\t") ? Int($0.dropFirst(2)) : nil }.first ?? 0
                let exact = number >= finished.count
                for line in worker.printed {
                    if line.hasPrefix("VIOLATION") { report.violation("two-process round \(round): \(line)") }
                    let fields = line.split(separator: "\t").map(String.init)
                    switch fields.first {
                    case "T" where fields.count == 2: longestOperation = max(longestOperation, Int(fields[1]) ?? 0)
                    case "Q" where fields.count == 2: longestRead = max(longestRead, Int(fields[1]) ?? 0)
                    case "D" where fields.count == 4: lastDurable[fields[2]] = (Int(fields[3]), exact)
                    case "R" where fields.count == 3: lastDurable[fields[2]] = (nil, exact)
                    case "r" where fields.count == 3: lastDurable[fields[2]] = (nil, false)
                    default: break
                    }
                }
            }
            report.episodes += 1
            verify(root: root, budget: budget, lastDurable: lastDurable, round: round)
        }
        if stops == 0 { report.violation("two-process: the second worker was never caught holding the lock file to stop it") }
        report.figure(
            "two-process: \(stops) stops of a worker holding the lock file (2.5 s each, lock timeout 1 s): the other gave up with busy \(busyDuringStops) times; longest operation \(longestOperation) ms, longest read \(longestRead) ms")
        var shared = SharedUpdates(
            base: base, rounds: sharedUpdateRounds, itemsPerProcess: 1000, report: report, random: SeededRandom(seed: random.next()))
        try shared.run()
    }

    private func progress(of worker: ChildProcess) -> Int {
        worker.printed.reversed().lazy.compactMap { $0.hasPrefix("N\t") ? Int($0.dropFirst(2)) : nil }.first ?? 0
    }

    private func verify(root: URL, budget: Int?, lastDurable: [String: (sequence: Int?, exact: Bool)], round: Int) {
        let checks = RootChecks(root: root)
        let violations = Shared<[String]>([])
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: "u0")
        TortureLayout.apply(to: &configuration)
        configuration.diskByteLimit = budget
        configuration.diagnostics = { problem in violations.withLock { $0.append("diagnostics: \(problem)") } }
        do {
            let cache = try AppCache(configuration: configuration)
            for (key, expected) in lastDurable {
                let items = try cache.getCachedItems(TortureItem.self, forKey: key)
                if let items, let problem = TortureItem.problem(with: items, user: "u0", key: key) {
                    violations.withLock { $0.append("\(key): \(problem)") }
                }
                // Each key has one writer; its last durable write (the exit flush included) is
                // what the disk holds, unless the budget evicted it.
                guard budget == nil else { continue }
                let found = items?[0].sequence
                let holds = "\(key) holds \(found.map { "write \($0)" } ?? "nothing")"
                switch (expected.sequence, expected.exact) {
                case (let sequence?, true) where found != sequence:
                    violations.withLock { $0.append("\(holds), not its last durable write \(sequence)") }
                case (let sequence?, false) where (found ?? .min) < sequence:
                    violations.withLock { $0.append("\(holds), older than its durable write \(sequence)") }
                case (nil, true) where found != nil:
                    violations.withLock { $0.append("\(holds) after its removal") }
                default: break
                }
            }
            violations.withLock { $0 += checks.afterOpenAndOneWrite(cache, budget: budget) }
        } catch {
            violations.withLock { $0.append("reopening failed: \(error)") }
        }
        for violation in violations.withLock({ $0 }) {
            report.violation("two-process round \(round): \(violation)")
        }
    }
}
