import AppCacheKit
import Foundation
import MenuModel

/// `appcache-torture [--quick] [--modes crash,two-process,hostile,damaged,budget,removal,fuzz,exit,thread-exit,purge,read-only,outbox] [--seed N] [--layout packs|files] [--keep]`
///
/// Kills, starves and feeds garbage to AppCache the way trusted storage engines are tested, and
/// checks every invariant a cache that keeps a person's data must keep:
///
/// - **crash**: child processes do random operations on self-checking items and are killed with
///   `SIGKILL` at random moments; after each kill the root is reopened and every collection must
///   be whole, its user's and key's, no older than its last durable write, the index exact, the
///   budget holding and no temporary file left after one write;
/// - **two-process**: two children share one root (writes, reads, flushes, sweeps, removals,
///   evictions); each checks it reads the other's durable writes; one is killed and restarted
///   and the other must go on; one is stopped (`SIGSTOP`) while it holds the lock file and the
///   other's reads must answer at once and its writes complete or fail with `busy` within the
///   bound; their exit flushes must be on disk; then two children append 1,000 items each to
///   one collection with `updateItems` at once, one stopped for a while holding the lock, and
///   all 2,000 must be there;
/// - **hostile**: symbolic links, FIFOs, a socket and a directory at every path the cache uses,
///   crafted journals, 3 GB sparse files, 2 and 3 GiB sparse packs, a link to an intact pack
///   outside the root, truncated archives, names of every byte value and long Unicode; every
///   API must return, never read through a link or touch the outside sentinel, and spend no
///   memory on a file's claimed size; a write leaves a regular pack within the budget;
/// - **damaged**: every truncation, every bit flip and edited header fields with a recomputed
///   checksum, read from the disk and into a memory layer: a miss or the very collection
///   written, never other data; then a pack of about 1,000 collections with bytes flipped in
///   record prefixes and bodies, 4 KiB pages zeroed, a cut in a record, garbage appended and
///   inserted between records: every collection whose newest record is untouched reads back
///   exactly through a fresh cache, before the next write, after it and after a compaction;
/// - **budget**: caches with a disk budget (120,000 bytes, 2 MB) and the packed layout take
///   thousands of write-throughs of random keys and sizes (some past the pack limit), rewrites
///   and removals, alone and two processes on one root: after every change the archive files
///   and packs (dead records included) take at most the budget and `diskUsage` equals them;
///   the largest overshoot seen mid-batch is reported;
/// - **removal**: `removeUser`, `removeAllUsers`, `removeAll()` and `signOut(removingData:
///   true)` are seen by readers in other processes as soon as the call returns; a remover
///   killed right after the call, its background batch held off by the lock, leaves nothing
///   readable to the next launch, and that launch's first flush takes the directory away;
/// - **fuzz**: the binary decoder on mutated payloads of both sample models (100,000 quick,
///   50 million long), in children of a seed each: no crash, no hang;
/// - **exit**: a normal exit right after a cache's last reference went on another thread: every
///   collection its `deinit` was writing must be on disk;
/// - **thread-exit**: a cache whose last reference a `Thread`'s closure holds, updated from
///   `concurrentPerform` workers, with tasks following its events and a collection and a sender
///   inside its send, is released as that thread exits (after libdispatch tore down its data of
///   the thread): every child must end cleanly, every update be on disk, every stream end and
///   every queued change stay queued;
/// - **purge**: two instances write, read and flush from four threads while the root or the
///   version directory is deleted, or renamed away as trash, at random moments: reads are
///   whole or miss, a flush after the purges writes every dirty collection, and nothing is
///   written into a directory renamed away;
/// - **read-only**: a filled root made read-only (a tmpfs remounted read-only as root, write
///   bits removed otherwise) read by four instances from four threads while they try every
///   change: intact collections read whole, a damaged one is a miss, every change throws
///   `permissionDenied`, each instance says once that it is read-only, nothing on disk changes;
/// - **outbox**: children enqueue offline changes and send them to a "server" log while they are
///   killed at random moments, then a last child drains: every acknowledged change answered,
///   one id through every re-send, never two sends at once, each child's changes sent in order;
///   then changes by id (`ItemMutation`) over several lists of one model, lists cached after the
///   changes included: each list holding the item shows a change while it is pending, and once
///   all are answered every list shows the value the server accepted last.
///
/// Prints what it did and every violation; exits 1 on any. `--quick` (CI) takes under two
/// minutes; the default is the long run whose figures the README quotes.
@main
struct AppCacheTorture {
    static let usage = """
        usage: appcache-torture [--quick] [--modes crash,two-process,hostile,damaged,budget,removal,fuzz,exit,thread-exit,purge,read-only,outbox] [--seed N] [--layout packs|files] [--keep]

          --quick        a short run (CI); the default is the long run
          --modes LIST   which modes to run (default: all)
          --seed N       the random seed (default: from the clock; printed)
          --layout L     how the crash, two-process and budget modes store archives: packs
                         (small ones in their user's pack; the default) or files (each its own)
          --keep         keep the work directory
        """

    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "--child" {
            runChild(Array(arguments.dropFirst()))
            return
        }
        var quick = false
        var keep = false
        var modes = ["crash", "two-process", "hostile", "damaged", "budget", "removal", "fuzz", "exit", "thread-exit", "purge", "read-only", "outbox"]
        var seed = UInt64(Date().timeIntervalSince1970 * 1000) % 1_000_000
        while !arguments.isEmpty {
            let argument = arguments.removeFirst()
            switch argument {
            case "--quick": quick = true
            case "--keep": keep = true
            case "--modes":
                guard let list = arguments.first else { fail("--modes needs a list") }
                modes = list.split(separator: ",").map(String.init)
                arguments.removeFirst()
            case "--seed":
                guard let value = arguments.first.flatMap({ UInt64($0) }) else { fail("--seed needs a number") }
                seed = value
                arguments.removeFirst()
            case "--layout":
                guard let layout = arguments.first, ["packs", "files"].contains(layout) else { fail("--layout needs packs or files") }
                setenv(TortureLayout.variable, layout, 1)
                arguments.removeFirst()
            case "--help", "-h":
                print(usage)
                return
            default: fail("unknown argument '\(argument)'")
            }
        }
        let base = FileManager.default.temporaryDirectory.appending(path: "appcache-torture-\(UUID().uuidString)", directoryHint: .isDirectory)
        do {
            try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        } catch {
            fail("cannot create \(base.path(percentEncoded: false)): \(error)")
        }
        print("appcache-torture: \(quick ? "quick" : "long") run, seed \(seed), \(TortureLayout.isFiles ? "files" : "packs") layout, work directory \(base.path(percentEncoded: false))")
        let report = Report()
        let started = Date()
        var random = SeededRandom(seed: seed)
        for mode in modes {
            let modeStarted = Date()
            let (episodes, kills, operations, violations) = (report.episodes, report.kills, report.operations, report.violations.count)
            do {
                switch mode {
                case "crash":
                    var crash = CrashMode(base: base, episodes: quick ? 40 : 600, report: report, random: SeededRandom(seed: random.next()))
                    try crash.run()
                case "two-process":
                    var two = TwoProcessMode(
                        base: base, rounds: quick ? 6 : 30, operationsPerWorker: quick ? 3000 : 20000,
                        sharedUpdateRounds: quick ? 1 : 5, report: report,
                        random: SeededRandom(seed: random.next()))
                    try two.run()
                case "hostile":
                    try HostileMode(base: base, report: report).run()
                case "damaged":
                    try DamagedMode(base: base, quick: quick, report: report).run()
                case "budget":
                    var budget = BudgetMode(base: base, quick: quick, report: report, random: SeededRandom(seed: random.next()))
                    try budget.run()
                case "removal":
                    try RemovalMode(base: base, quick: quick, report: report).run()
                case "exit":
                    try ExitMode(base: base, quick: quick, report: report).run()
                case "thread-exit":
                    try ThreadExitMode(base: base, quick: quick, report: report).run()
                case "purge":
                    var purge = PurgeMode(base: base, quick: quick, report: report, random: SeededRandom(seed: random.next()))
                    try purge.run()
                case "read-only":
                    try ReadOnlyMode(base: base, quick: quick, report: report).run()
                case "outbox":
                    var outbox = OutboxMode(base: base, quick: quick, report: report, random: SeededRandom(seed: random.next()))
                    try outbox.run()
                case "fuzz":
                    var fuzz = FuzzMode(base: base, quick: quick, report: report, random: SeededRandom(seed: random.next()))
                    try fuzz.run()
                default:
                    fail("unknown mode '\(mode)'")
                }
            } catch {
                report.violation("\(mode): the run itself failed: \(error)")
            }
            print(String(
                format: "%@: %d episodes, %d kills, %d operations, %d violations (%.1f s)", mode,
                report.episodes - episodes, report.kills - kills, report.operations - operations,
                report.violations.count - violations, Date().timeIntervalSince(modeStarted)))
        }
        for figure in report.figures { print("figure: \(figure)") }
        // Again at the end, with the seed, where a log cut to its tail still shows them.
        for violation in report.violations { print("VIOLATION (seed \(seed)): \(violation)") }
        print(String(
            format: "total: %d episodes, %d kills, %d operations, %d violations (%.1f s)", report.episodes, report.kills,
            report.operations, report.violations.count, Date().timeIntervalSince(started)))
        if !keep { try? FileManager.default.removeItem(at: base) }
        if !report.violations.isEmpty { exit(1) }
    }

    /// The child side: `--child worker|hostile|damaged|budget|removal-reader|removal-killer ...`.
    static func runChild(_ arguments: [String]) {
        var values: [String: String] = [:]
        var flags: Set<String> = []
        var rest = arguments.dropFirst()
        while let argument = rest.popFirst() {
            if argument == "--quick" || argument == "--long" {
                flags.insert(argument)
            } else if let value = rest.popFirst() {
                values[argument] = value
            }
        }
        let root = URL(filePath: values["--root"] ?? "/nonexistent", directoryHint: .isDirectory)
        do {
            switch arguments.first {
            case "worker":
                var options = Worker.Options(root: root, seed: UInt64(values["--seed"] ?? "1") ?? 1)
                switch values["--delay"] {
                case "none": options.writeBackDelay = nil
                case let milliseconds?: options.writeBackDelay = .milliseconds(Int(milliseconds) ?? 0)
                case nil: break
                }
                options.diskByteLimit = values["--budget"].flatMap { Int($0) }
                options.sequenceStart = values["--sequence-start"].flatMap { Int($0) } ?? 0
                options.owner = values["--owner"]
                options.other = values["--other"]
                options.events = values["--events"].map { URL(filePath: $0) }
                options.operations = values["--operations"].flatMap { Int($0) }
                options.schemaVersion = values["--schema-version"] ?? "1"
                options.checksTiming = values["--check-timing"] == "yes"
                options.filler = values["--filler"].flatMap { Int($0) } ?? 0
                var worker = try Worker(options: options)
                worker.run()
            case "hostile":
                try HostileScenario(
                    scenario: values["--scenario"] ?? "", root: root,
                    outside: URL(filePath: values["--outside"] ?? "/nonexistent", directoryHint: .isDirectory)
                ).run()
            case "damaged":
                try DamagedArchives(root: root, quick: flags.contains("--quick")).run()
            case "budget":
                try BudgetWriter.runAsChild(
                    root: root, budget: Int(values["--budget"] ?? "") ?? 120_000, owner: values["--owner"] ?? "A",
                    seed: UInt64(values["--seed"] ?? "1") ?? 1, changes: Int(values["--changes"] ?? "100") ?? 100)
            case "removal-reader":
                try RemovalReader(
                    root: root, user: values["--user"] ?? "u0", marker: values["--marker"] ?? "/nonexistent",
                    stop: values["--stop"] ?? "/nonexistent", usesMemory: values["--memory"] == "yes"
                ).run()
            case "removal-killer":
                guard let call = values["--call"].flatMap(RemovalCall.init(rawValue:)) else { fail("--call needs a removal call") }
                try KilledRemover(root: root, user: values["--user"] ?? "u0", call: call, go: values["--go"] ?? "/nonexistent").run()
            case "exit-race":
                try ExitRace.run(
                    root: root, collections: Int(values["--collections"] ?? "100") ?? 100,
                    pause: UInt32(values["--pause-microseconds"] ?? "0") ?? 0)
            case "thread-exit":
                try ThreadExitRelease.run(
                    root: root, rounds: Int(values["--rounds"] ?? "") ?? ThreadExitMode.rounds,
                    updates: Int(values["--updates"] ?? "") ?? ThreadExitMode.updates)
            case "appender":
                try SharedUpdates.appendAsChild(
                    root: root, owner: values["--owner"] ?? "A", count: Int(values["--count"] ?? "1000") ?? 1000)
            case "outbox":
                try OutboxChild.run(
                    root: root, log: URL(filePath: values["--log"] ?? "/nonexistent"), owner: values["--owner"] ?? "a",
                    start: Int(values["--start"] ?? "0") ?? 0, count: Int(values["--count"] ?? "0") ?? 0,
                    seed: UInt64(values["--seed"] ?? "1") ?? 1)
            case "outbox-by-id":
                try OutboxByIDChild.run(
                    root: root, log: URL(filePath: values["--log"] ?? "/nonexistent"), owner: values["--owner"] ?? "a",
                    start: Int(values["--start"] ?? "0") ?? 0, count: Int(values["--count"] ?? "0") ?? 0,
                    seed: UInt64(values["--seed"] ?? "1") ?? 1)
            case "syscall-probe":
                try SyscallProbe.run(
                    root: root, count: Int(values["--count"] ?? "1") ?? 1, items: Int(values["--items"] ?? "1") ?? 1)
            case "in-memory-probe":
                try SyscallProbe.runInMemory(items: Int(values["--items"] ?? "100") ?? 100, onDiskAt: values["--on-disk"] != nil ? root : nil)
            case "watch-threads":
                try WatchThreads.run(root: root, streams: Int(values["--streams"] ?? "200") ?? 200, keys: Int(values["--keys"] ?? "200") ?? 200)
            case "fuzz":
                FuzzChild.run(seed: UInt64(values["--seed"] ?? "1") ?? 1, mutations: Int(values["--mutations"] ?? "1000") ?? 1000)
            default:
                fail("unknown child '\(arguments.first ?? "")'")
            }
        } catch {
            emit("VIOLATION the child failed: \(error)")
        }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("appcache-torture: \(message)\n\n\(usage)\n".utf8))
        exit(2)
    }
}
