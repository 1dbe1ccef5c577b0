import AppCacheKit
import Foundation
import MenuModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes through to a cache with a disk budget and the packed layout: random keys of two
/// users, random sizes (some collections past the pack limit, so files of their own), rewrites,
/// removals and reads. After each change the archive files and packs must take at most the
/// budget; alone on the root, ``AppCache/diskUsage`` must equal what they take.
///
/// In the budget mode's own process, or as a child (`--child budget`) of two sharing a root:
/// then the disk is measured holding the lock file's lock (between any process's batches),
/// `diskUsage` is compared by the parent at the end, and the child prints `VIOLATION text`,
/// `N count` (operations so far) and, at the end, `S largest compactions largestArchive`.
struct BudgetWriter {
    struct Options {
        var root: URL
        var budget: Int
        var seed: UInt64
        /// How many changes (writes and removals) to make.
        var changes: Int
        /// The prefix of this writer's keys when another writer shares the root; `nil` alone.
        var owner: String?
    }

    /// What a run found.
    struct Outcome {
        var violations: [String] = []
        var operations = 0
        /// The most the archive files and packs took after a change.
        var largest = 0
        /// How many times a pack was replaced by a compaction, as seen between changes.
        var compactions = 0
        /// The largest collection's filler written, in bytes.
        var largestArchive = 0
    }

    let options: Options

    static let users = ["u0", "u1"]

    /// Makes ``Options/changes`` changes, checking the disk after each.
    ///
    /// - Parameter progress: told the operations done so far, every 50.
    /// - Returns: what was found.
    /// - Throws: what opening the cache or an unexpected call throws.
    func run(progress: (Int) -> Void = { _ in }) throws -> Outcome {
        var random = SeededRandom(seed: options.seed)
        var outcome = Outcome()
        let problems = Shared<[String]>([])
        let sharesRoot = options.owner != nil
        var configuration = AppCache.Configuration(rootDirectory: options.root, schemaVersion: "1", user: Self.users[0])
        TortureLayout.apply(to: &configuration)
        configuration.writeBackDelay = .zero
        configuration.diskByteLimit = options.budget
        configuration.memoryEntryLimit = 8
        configuration.flushesAtExit = false
        configuration.diagnostics = { problem in
            // The other writer holds the lock file a moment too long: a background batch waits.
            if sharesRoot, problem.code == .busy { return }
            problems.withLock { $0.append("diagnostics: \(problem)") }
        }
        let cache = try AppCache(configuration: configuration)
        let versionPath = options.root.path(percentEncoded: false) + "/version-1"
        let lock = sharesRoot ? try HeldLock(path: versionPath + "/.lock") : nil
        let keys = (0..<(options.budget < 500_000 ? 60 : 200)).map { "\(options.owner ?? "")b\($0)" }
        var user = Self.users[0]
        /// The last write of each user's key (`nil`: removed); only this writer writes them.
        var latest: [String: Int?] = [:]
        var sequence = Int(options.seed % 1000) * 1_000_000
        var packs: [String: (UInt64, UInt64)] = [:]
        var changes = 0
        while changes < options.changes {
            let key = keys[Int(random.next() % UInt64(keys.count))]
            let roll = random.next() % 100
            outcome.operations += 1
            if outcome.operations % 50 == 0 { progress(outcome.operations) }
            do {
                switch roll {
                case 0..<70:
                    sequence += 1
                    let bytes = Self.size(budget: options.budget, &random)
                    outcome.largestArchive = max(outcome.largestArchive, bytes)
                    try cache.cacheItems(TortureItem.collection(user: user, key: key, sequence: sequence, bytes: bytes), forKey: key)
                    latest[user + "\t" + key] = sequence
                    // The collection just written is the most recently used: it stays unless it
                    // alone is past the budget.
                    if !sharesRoot, bytes < options.budget / 2, try cache.getCachedItems(TortureItem.self, forKey: key)?.first?.sequence != sequence {
                        outcome.violations.append("\(user)'s \(key) did not read back right after its write \(sequence)")
                    }
                case 70..<80:
                    try cache.removeItems(TortureItem.self, forKey: key)
                    latest[user + "\t" + key] = .some(nil)
                case 80..<83 where !sharesRoot:
                    let other = Self.users[Int(random.next() % UInt64(Self.users.count))]
                    try cache.removeUser(other)
                    for stored in latest.keys where stored.hasPrefix(other + "\t") { latest[stored] = .some(nil) }
                    if cache.user == nil { try cache.switchUser(to: user) }
                    if try cache.getCachedItems(TortureItem.self, forKey: key) != nil, other == user {
                        outcome.violations.append("\(user)'s \(key) read back after removeUser returned")
                    }
                case 83..<86:
                    user = Self.users[Int(random.next() % UInt64(Self.users.count))]
                    try cache.switchUser(to: user)
                    continue
                default:
                    let items = try cache.getCachedItems(TortureItem.self, forKey: key)
                    if let items, let problem = TortureItem.problem(with: items, user: user, key: key) {
                        outcome.violations.append("\(user)'s \(key): \(problem)")
                    } else if let found = items?.first?.sequence, let expected = latest[user + "\t" + key], found != expected {
                        outcome.violations.append("\(user)'s \(key) read as write \(found), last written as \(expected.map(String.init) ?? "removed")")
                    }
                    continue
                }
            } catch let error as AppCacheError where sharesRoot && error.code == .busy {
                continue
            }
            changes += 1
            // Between batches: at most the budget.
            let measured = lock.map { lock in lock.withLock { RootChecks.diskBytes(versionPath: versionPath) } }
                ?? RootChecks.diskBytes(versionPath: versionPath)
            outcome.largest = max(outcome.largest, measured)
            if measured > options.budget {
                outcome.violations.append("after change \(changes), the archive files and packs take \(measured) bytes, over the budget \(options.budget)")
            }
            if !sharesRoot {
                let usage = try cache.bytesOnDisk()
                let after = RootChecks.diskBytes(versionPath: versionPath)
                if usage != after {
                    outcome.violations.append("after change \(changes), diskUsage \(usage) but the archive files and packs take \(after) bytes")
                }
            }
            for name in Self.users.map({ "user-" + $0 }) {
                var info = stat()
                let now = lstat(versionPath + "/" + name + "/.pack", &info) == 0 ? (UInt64(info.st_ino), UInt64(info.st_size)) : nil
                if let now, let before = packs[name], before.0 != now.0, now.1 < before.1 { outcome.compactions += 1 }
                packs[name] = now
            }
        }
        outcome.violations += problems.withLock { $0 }
        return outcome
    }

    /// A collection's filler: mostly small (packed), some medium, one in ten past the pack
    /// limit (a file of its own), kept below the budget.
    static func size(budget: Int, _ random: inout SeededRandom) -> Int {
        let roll = random.next() % 100
        let value = Int(random.next() % 1_000_000)
        switch roll {
        case 0..<70: return 50 + value % 2_000
        case 70..<90: return 2_000 + value % 20_000
        default:
            let largest = min(budget * 3 / 4, 300_000)
            return 66_000 + value % max(largest - 66_000, 1)
        }
    }
}

// MARK: - As a child

extension BudgetWriter {
    /// The child side of the budget mode's two processes.
    static func runAsChild(root: URL, budget: Int, owner: String, seed: UInt64, changes: Int) throws {
        let writer = BudgetWriter(options: .init(root: root, budget: budget, seed: seed, changes: changes, owner: owner))
        let outcome = try writer.run { emit("N\t\($0)") }
        for violation in outcome.violations { emit("VIOLATION \(violation)") }
        emit("N\t\(outcome.operations)")
        emit("S\t\(outcome.largest)\t\(outcome.compactions)\t\(outcome.largestArchive)")
    }
}
