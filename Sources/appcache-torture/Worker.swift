import AppCacheKit
import Foundation
import MenuModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The child side of the crash and two-process modes: random operations on self-checking items,
/// reporting every operation that completed, so the parent knows what must have survived a kill.
///
/// Lines it prints (tab-separated):
/// - `D user key sequence`: that write is on disk (write-through returned, or a flush or exit
///   flush that covered it returned; a user switch writes the previous user's collections on
///   the cache's own thread, so only the next flush makes them durable);
/// - `r user key` / `R user key`: a removal starts / has finished; `u user` / `U user` the same
///   for a user's wipe;
/// - `E owner key sequence`/`E owner key -`: (two-process mode) the same for the shared event
///   file, written there too;
/// - `B milliseconds`: (two-process mode) an operation gave up with `busy`, after that long: the
///   other worker was stopped holding the lock file; nothing it wrote is claimed durable;
/// - `T milliseconds`: (two-process mode) the longest operation, and `Q milliseconds` the
///   longest read, at the end;
/// - `N count`: operations done so far; `VIOLATION text`: an invariant broke.
struct Worker {
    struct Options {
        var root: URL
        var seed: UInt64
        var users = ["u0", "u1", "u2"]
        var keys = (0..<6).map { "k\($0)" }
        var writeBackDelay: Duration? = .zero
        var diskByteLimit: Int?
        var memoryEntries = 16
        var sequenceStart = 0
        /// Two-process mode: this worker's name, the other's, and the shared event file.
        var owner: String?
        var other: String?
        var events: URL?
        /// How many operations before exiting normally (with unflushed items: the exit flush
        /// must write them); `nil`: until killed.
        var operations: Int?
        /// The app schema version to open with (another one wipes version 1).
        var schemaVersion = "1"
        /// Two-process mode: whether to check how long operations take (not in the worker the
        /// parent stops, whose clock runs on while it is stopped).
        var checksTiming = false
        /// Collections (`fill-0`, ...) the user ``fillerUser`` (whom no operation removes) is
        /// given once, so that its pack is checkpointed (and killed while it is) and read
        /// through the checkpoint; the parent reads them back.
        var filler = 0
    }

    /// The key of filler collection `index` (see ``Options/filler``).
    static func fillerKey(_ index: Int) -> String { "fill-\(index)" }
    /// The user the filler collections belong to.
    static let fillerUser = "filler"

    let options: Options
    private var random: SeededRandom
    private var sequence: Int
    private var cache: AppCache
    /// What this process cached last, per user and key (`nil`: removed), and what is on disk.
    private var latest: [String: Int?] = [:]
    private var dirty: [String: (user: String, key: String, sequence: Int)] = [:]
    private var user: String
    private var operationCount = 0
    /// Two-process mode: the other worker's latest events per key, and how far they were read.
    private var seenEvents: [String: Int?] = [:]
    private var eventsRead = 0
    private let violations = Shared(0)
    /// What the current step does, for the timing checks.
    private var operation = ""
    private var longestOperation: Duration = .zero
    private var longestRead: Duration = .zero
    /// The longest an operation may take: the lock timeout, plus room for a loaded machine.
    static let operationBound = Duration.seconds(3)
    /// The longest a read may take: reads never wait for the lock.
    static let readBound = Duration.milliseconds(500)

    init(options: Options) throws {
        self.options = options
        random = SeededRandom(seed: options.seed)
        sequence = options.sequenceStart
        user = options.users[0]
        var configuration = AppCache.Configuration(rootDirectory: options.root, schemaVersion: options.schemaVersion, user: user)
        TortureLayout.apply(to: &configuration)
        configuration.writeBackDelay = options.writeBackDelay
        configuration.diskByteLimit = options.diskByteLimit
        configuration.memoryEntryLimit = options.memoryEntries
        let violations = violations
        let sharesRoot = options.owner != nil
        configuration.diagnostics = { problem in
            // A background write that met the stopped peer: it stays dirty, and is retried.
            if sharesRoot, problem.code == .busy { return }
            violations.withLock { $0 += 1 }
            emit("VIOLATION diagnostics: \(problem)")
        }
        cache = try AppCache(configuration: configuration)
        if options.filler > 0 {
            try cache.switchUser(to: Self.fillerUser)
            if try cache.getCachedItems(TortureItem.self, forKey: Self.fillerKey(options.filler - 1)) == nil {
                // Killed while filling, the next worker fills again: kills land in big batches
                // and checkpoints too.
                for index in 0..<options.filler {
                    let key = Self.fillerKey(index)
                    try cache.cacheItems(TortureItem.collection(user: Self.fillerUser, key: key, sequence: index), forKey: key)
                }
                try cache.flush()
            }
            try cache.switchUser(to: user)
        }
    }

    mutating func run() {
        let limit = options.operations ?? .max
        let clock = ContinuousClock()
        while operationCount < limit {
            let started = clock.now
            do {
                try step()
            } catch let error as AppCacheError where error.code == .busy && options.owner != nil {
                // The other worker is stopped holding the lock file: a bounded wait, nothing written.
                emit("B\t\(Self.milliseconds(clock.now - started))")
            } catch {
                emit("VIOLATION \(error)")
            }
            let took = clock.now - started
            if options.checksTiming {
                if operation == "read" {
                    longestRead = max(longestRead, took)
                    if took > Self.readBound { emit("VIOLATION a read took \(Self.milliseconds(took)) ms: reads never wait for the lock") }
                }
                longestOperation = max(longestOperation, took)
                if took > Self.operationBound { emit("VIOLATION \(operation) took \(Self.milliseconds(took)) ms, past the lock timeout's bound") }
            }
            operationCount += 1
            if operationCount % 50 == 0 { emit("N\t\(operationCount)") }
        }
        if options.checksTiming {
            emit("T\t\(Self.milliseconds(longestOperation))")
            emit("Q\t\(Self.milliseconds(longestRead))")
        }
        // Exit normally with items still dirty: the exit flush must write them. (They go to
        // the parent only: the other worker must not expect them before the flush has run.)
        for (_, write) in dirty {
            emit("D\t\(write.user)\t\(write.key)\t\(write.sequence)")
        }
    }

    private mutating func step() throws {
        let key = options.owner.map { "\($0)-\(options.keys[pick(options.keys.count)])" } ?? options.keys[pick(options.keys.count)]
        switch pick(100) {
        case 0..<40:
            operation = "write"
            sequence += 1
            try cache.cacheItems(TortureItem.collection(user: user, key: key, sequence: sequence), forKey: key)
            latest[user + "\t" + key] = sequence
            if options.writeBackDelay == .zero {
                emit("D\t\(user)\t\(key)\t\(sequence)")
                if options.owner != nil { logEvent(key, sequence) }
            } else {
                dirty[user + "\t" + key] = (user, key, sequence)
            }
        case 40..<70:
            operation = "read"
            try read(key)
        case 70..<78:
            operation = "flush"
            try cache.flush()
            markDirtyDurable()
        case 78..<83:
            operation = "removal"
            emit("r\t\(user)\t\(key)")
            if options.owner != nil { logEvent(key, nil, starting: true) }
            try cache.removeItems(TortureItem.self, forKey: key)
            latest[user + "\t" + key] = .some(nil)
            dirty[user + "\t" + key] = nil
            emit("R\t\(user)\t\(key)")
            if options.owner != nil { logEvent(key, nil) }
        case 83..<87 where options.owner == nil:
            let next = options.users[pick(options.users.count)]
            // The previous user's dirty collections are written on the cache's own thread: they
            // stay dirty here until a flush covers them.
            try cache.switchUser(to: next)
            user = next
        case 87..<89 where options.owner == nil:
            let victim = options.users[pick(options.users.count)]
            emit("u\t\(victim)")
            try cache.removeUser(victim)
            for stored in latest.keys where stored.hasPrefix(victim + "\t") { latest[stored] = .some(nil) }
            dirty = dirty.filter { $0.value.user != victim }
            emit("U\t\(victim)")
            if victim == user {
                // Removing the current user signs out; the worker signs back in, with no data.
                guard cache.user == nil else {
                    emit("VIOLATION removeUser of the current user left \(cache.user ?? "nobody") signed in")
                    return
                }
                try cache.switchUser(to: victim)
            }
        case 89..<92:
            operation = "removeExpired"
            try cache.removeExpired()
        case 92..<95:
            operation = "entries"
            for entry in try cache.entries() where entry.user != user {
                emit("VIOLATION entries() listed \(entry.user ?? "shared")'s collection for \(user)")
            }
        case 95..<97:
            operation = "diskUsage"
            _ = try cache.bytesOnDisk()
        default:
            operation = "read"
            if options.owner != nil { try checkOtherWorker() } else { _ = cache.isStale(TortureItem.self, forKey: key) }
        }
    }

    private mutating func read(_ key: String) throws {
        guard let items = try cache.getCachedItems(TortureItem.self, forKey: key) else {
            if options.diskByteLimit == nil, options.owner == nil, let expected = latest[user + "\t" + key], let sequence = expected {
                emit("VIOLATION a miss for \(user)'s \(key), last cached as write \(sequence)")
            }
            return
        }
        if let problem = TortureItem.problem(with: items, user: user, key: key) {
            emit("VIOLATION \(problem)")
        } else if options.owner == nil, let expected = latest[user + "\t" + key], items[0].sequence != expected {
            emit("VIOLATION \(user)'s \(key) read as write \(items[0].sequence), last cached as \(expected.map(String.init) ?? "removed")")
        }
    }

    private mutating func markDirtyDurable() {
        for (_, write) in dirty {
            emit("D\t\(write.user)\t\(write.key)\t\(write.sequence)")
            if options.owner != nil { logEvent(write.key, write.sequence) }
        }
        dirty = [:]
    }

    // MARK: - Two processes

    /// Appends one event line to the shared event file.
    private func logEvent(_ key: String, _ sequence: Int?, starting: Bool = false) {
        guard let events = options.events, let owner = options.owner else { return }
        // O_APPEND: both workers append at once, and each line must land whole.
        let descriptor = open(events.path(percentEncoded: false), O_WRONLY | O_APPEND)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let value = starting ? "r" : sequence.map(String.init) ?? "-"
        let line = Array("\(owner)\t\(key)\t\(value)\n".utf8)
        _ = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// Reads the other worker's new events; then, for one of its keys, the cache must return
    /// at least its last durable write (or nothing after its removal).
    private mutating func checkOtherWorker() throws {
        guard let events = options.events, let other = options.other else { return }
        /// Reads the new event lines; returns the keys the other worker started to remove in them.
        func readEvents() -> Set<String> {
            guard let text = try? String(contentsOf: events, encoding: .utf8) else { return [] }
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            var removed: Set<String> = []
            for line in lines.dropFirst(eventsRead) {
                let fields = line.split(separator: "\t").map(String.init)
                guard fields.count == 3, fields[0] == other else { continue }
                let isRemoval = fields[2] == "-" || fields[2] == "r"
                if isRemoval { removed.insert(fields[1]) }
                seenEvents[fields[1]] = isRemoval ? .some(nil) : Int(fields[2])
            }
            eventsRead = lines.count
            return removed
        }
        _ = readEvents()
        guard let (key, expected) = seenEvents.randomElement(using: &random), let sequence = expected else { return }
        let items = try cache.getCachedItems(TortureItem.self, forKey: key)
        if let items, let problem = TortureItem.problem(with: items, user: user, key: key) {
            emit("VIOLATION \(problem)")
            return
        }
        if let found = items?[0].sequence, found >= sequence { return }
        // A removal may have come since the line was read (maybe followed by a newer write):
        // then finding nothing is right. Finding an older write never is.
        let removedSince = readEvents()
        if items == nil && (removedSince.contains(key) || options.diskByteLimit != nil) { return }
        if case .some(.none) = seenEvents[key], items == nil { return }
        // Tell whether the disk or this process's memory is behind: a fresh instance reads the disk.
        var configuration = AppCache.Configuration(rootDirectory: options.root, schemaVersion: options.schemaVersion, user: user)
        TortureLayout.apply(to: &configuration)
        configuration.memoryEntryLimit = 0
        let fresh = (try? AppCache(configuration: configuration).getCachedItems(TortureItem.self, forKey: key))?.map { $0[0].sequence }
        emit("VIOLATION coherence: \(other)'s \(key) was written as \(sequence), this process read \(items.map { "write \($0[0].sequence)" } ?? "nothing") (the disk holds \(fresh.map { "write \($0)" } ?? "nothing"))")
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }

    private mutating func pick(_ count: Int) -> Int {
        Int(random.next() % UInt64(count))
    }
}
