import AppCacheKit
import Foundation
import GRDB

/// `swift run -c release GRDBComparison [--quick] [--keep] [--directory PATH]` (in Benchmarks/GRDBComparison;
/// `--keep` leaves the work directory's files for a look; `--only` runs some parts of the table)
///
/// AppCache beside SQLite through GRDB, as many iOS developers cache instead: WAL,
/// `synchronous = NORMAL`, one row per key holding the collection as a blob encoded with the
/// same codec (`PayloadCodec.binary`). Both run in this process on the same directory's
/// volume, in interleaved rounds; the table gives each side's median per collection and the
/// ratio of the medians (AppCache / GRDB: below 1, AppCache is faster or smaller).
@main
struct GRDBComparison {
    static func main() throws {
        var quick = false
        var keep = false
        var only: Set<String>?
        var base = URL(filePath: FileManager.default.currentDirectoryPath).appending(path: ".build/comparison-work", directoryHint: .isDirectory)
        var arguments = CommandLine.arguments.dropFirst()
        while let argument = arguments.popFirst() {
            switch argument {
            case "--quick": quick = true
            case "--keep": keep = true
            case "--only":
                guard let names = arguments.popFirst() else { fail("--only needs a list of parts") }
                only = Set(names.split(separator: ",").map(String.init))
            case "--directory":
                guard let path = arguments.popFirst() else { fail("--directory needs a path") }
                base = URL(filePath: path, directoryHint: .isDirectory)
            default: fail("usage: GRDBComparison [--quick] [--keep] [--only writes,reads,opening,first-read,fresh,space,bytes] [--directory PATH]")
            }
        }
        #if DEBUG
        print("!! DEBUG BUILD: these timings mean nothing. Run: swift run -c release GRDBComparison")
        #endif
        let work = base.appending(path: "run-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { if !keep { try? FileManager.default.removeItem(at: work) } }
        print("AppCache beside GRDB \(quick ? "(quick run)" : ""): \(work.path(percentEncoded: false)), \(Date())")
        let scenarios = ComparisonScenarios(work: work, quick: quick)
        var rows: [Row] = []
        let parts: [(String, () throws -> [Row])] = [
            ("writes", scenarios.writes), ("reads", scenarios.reads), ("opening", scenarios.opening),
            ("first-read", scenarios.firstRead), ("fresh", scenarios.freshInstanceHits), ("space", scenarios.space),
            ("bytes", scenarios.bytesPerUpdate),
        ]
        for (name, part) in parts where only?.contains(name) ?? true { rows += try part() }
        print("")
        print("| work (per collection) | AppCache | GRDB (or the baseline named) | ratio |")
        print("|---|---:|---:|---:|")
        for row in rows { print("| \(row.work) | \(row.appCache) | \(row.grdb) | \(row.ratio) |") }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("GRDBComparison: \(message)\n".utf8))
        exit(2)
    }
}

/// One line of the table.
struct Row {
    var work: String
    var appCache: String
    var grdb: String
    var ratio: String

    init(_ comparison: Comparison) {
        work = comparison.title
        appCache = format(seconds: comparison.appCacheMedian)
        grdb = format(seconds: comparison.grdbMedian)
        ratio = format(ratio: comparison.ratio)
    }

    /// A row whose baseline is not GRDB: its name goes before the baseline's figure.
    init(_ comparison: Comparison, baseline: String) {
        self.init(comparison)
        grdb = "\(baseline): \(grdb)"
    }

    init(work: String, appCache: String, grdb: String, ratio: String) {
        self.work = work
        self.appCache = appCache
        self.grdb = grdb
        self.ratio = ratio
    }
}

/// SQLite through GRDB as a cache: one table, a row per key.
struct GRDBCache {
    let pool: DatabasePool
    let path: String

    init(directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appending(path: "cache.sqlite").path(percentEncoded: false)
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        pool = try DatabasePool(path: path, configuration: configuration)  // WAL
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY NOT NULL, payload BLOB NOT NULL, cachedAt DOUBLE NOT NULL)")
        }
    }

    /// One collection, in a transaction of its own.
    func write(_ blob: Data, forKey key: String) throws {
        try pool.write { db in try Self.insert(db, blob, key) }
    }

    /// Many collections in one transaction.
    func write(_ rows: [(key: String, blob: Data)]) throws {
        try pool.write { db in
            for row in rows { try Self.insert(db, row.blob, row.key) }
        }
    }

    func read(_ key: String) throws -> Data? {
        try pool.read { db in try Data.fetchOne(db.cachedStatement(sql: "SELECT payload FROM cache WHERE key = ?"), arguments: [key]) }
    }

    private static func insert(_ db: Database, _ blob: Data, _ key: String) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO cache (key, payload, cachedAt) VALUES (?, ?, ?)")
            .execute(arguments: [key, blob, Date().timeIntervalSince1970])
    }
}
