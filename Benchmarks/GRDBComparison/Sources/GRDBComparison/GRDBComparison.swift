import AppCacheKit
import Foundation
import GRDB

/// `swift run -c release GRDBComparison [--quick] [--keep] [--only PARTS] [--repeat N] [--directory PATH]`
/// (in Benchmarks/GRDBComparison; `--keep` leaves the work directory's files for a look;
/// `--only` runs some parts of the table; `--repeat` runs them N times, one after the other,
/// and ends with each row's medians over the runs and the range of its ratio)
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
        var runs = 1
        var base = URL(filePath: FileManager.default.currentDirectoryPath).appending(path: ".build/comparison-work", directoryHint: .isDirectory)
        var arguments = CommandLine.arguments.dropFirst()
        while let argument = arguments.popFirst() {
            switch argument {
            case "--quick": quick = true
            case "--keep": keep = true
            case "--only":
                guard let names = arguments.popFirst() else { fail("--only needs a list of parts") }
                only = Set(names.split(separator: ",").map(String.init))
            case "--repeat":
                guard let text = arguments.popFirst(), let count = Int(text), (1...100).contains(count) else {
                    fail("--repeat needs a number of runs from 1 to 100")
                }
                runs = count
            case "--directory":
                guard let path = arguments.popFirst() else { fail("--directory needs a path") }
                base = URL(filePath: path, directoryHint: .isDirectory)
            default:
                fail("usage: GRDBComparison [--quick] [--keep] [--only writes,reads,opening,first-read,fresh,space,bytes] [--repeat N] [--directory PATH]")
            }
        }
        #if DEBUG
        print("!! DEBUG BUILD: these timings mean nothing. Run: swift run -c release GRDBComparison")
        #endif
        // Each run's table, then (several runs) each row's runs together: the machines are
        // shared and noisy, and a row near its goal is judged on the median of several runs.
        // Each run works in a directory of its own, removed after it (unless kept).
        var tables: [[Row]] = []
        for run in 1...runs {
            let work = base.appending(path: "run-\(UUID().uuidString)", directoryHint: .isDirectory)
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            defer { if !keep { try? FileManager.default.removeItem(at: work) } }
            let scenarios = ComparisonScenarios(work: work, quick: quick)
            let parts: [(String, () throws -> [Row])] = [
                ("writes", scenarios.writes), ("reads", scenarios.reads), ("opening", scenarios.opening),
                ("first-read", scenarios.firstRead), ("fresh", scenarios.freshInstanceHits), ("space", scenarios.space),
                ("bytes", scenarios.bytesPerUpdate),
            ]
            let runName = runs == 1 ? "" : " (run \(run) of \(runs))"
            print("AppCache beside GRDB\(quick ? " (quick run)" : "")\(runName): \(work.path(percentEncoded: false)), \(Date())")
            var rows: [Row] = []
            for (name, part) in parts where only?.contains(name) ?? true { rows += try part() }
            print("")
            print("| work (per collection) | AppCache | GRDB (or the baseline named) | ratio |")
            print("|---|---:|---:|---:|")
            for row in rows { print(row.line) }
            print("")
            tables.append(rows)
        }
        guard runs > 1 else { return }
        guard tables.allSatisfy({ $0.map(\.work) == tables[0].map(\.work) }) else { fail("the runs gave different rows") }
        print("Medians of the \(runs) runs above (each side's figure, the ratio) and the range of the ratio:")
        print("")
        print("| work (per collection) | AppCache | GRDB (or the baseline named) | ratio | ratio's range |")
        print("|---|---:|---:|---:|---:|")
        for position in tables[0].indices {
            print(Row.summary(of: tables.map { $0[position] }))
        }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("GRDBComparison: \(message)\n".utf8))
        exit(2)
    }
}

/// One line of the table: each side's figure (its median per collection, or a size) and
/// their ratio.
struct Row {
    enum Unit { case seconds, bytes }

    var work: String
    var appCache: Double
    var baseline: Double
    var ratio: Double
    var unit: Unit
    /// What the baseline is when it is not GRDB (named before its figure).
    var baselineName: String?

    init(_ comparison: Comparison, baseline name: String? = nil) {
        self.init(
            work: comparison.title, appCache: comparison.appCacheMedian, grdb: comparison.grdbMedian, ratio: comparison.ratio,
            unit: .seconds)
        baselineName = name
    }

    /// A row of two figures; the ratio is theirs unless given (bytes per update give the
    /// ratio of the totals, before the division).
    init(work: String, appCache: Double, grdb: Double, ratio: Double? = nil, unit: Unit) {
        self.work = work
        self.appCache = appCache
        baseline = grdb
        self.ratio = ratio ?? appCache / grdb
        self.unit = unit
    }

    /// A figure of this row's unit, for the table.
    func formatted(_ value: Double) -> String {
        switch unit {
        case .seconds: format(seconds: value)
        case .bytes: format(bytes: Int(value))
        }
    }

    /// The line's first cells: the work, then each side's figure (the baseline named when it
    /// is not GRDB).
    private func cells(appCache: Double, baseline: Double) -> String {
        "| \(work) | \(formatted(appCache)) | \(baselineName.map { "\($0): " } ?? "")\(formatted(baseline)) |"
    }

    /// The line of the table.
    var line: String {
        "\(cells(appCache: appCache, baseline: baseline)) \(format(ratio: ratio)) |"
    }

    /// The line of the summary of several runs of the row (`runs`, this one first): each
    /// side's median, the median ratio and the range of the ratios.
    static func summary(of runs: [Row]) -> String {
        let ratios = runs.map(\.ratio).sorted()
        let medians = runs[0].cells(appCache: Comparison.median(runs.map(\.appCache)), baseline: Comparison.median(runs.map(\.baseline)))
        return "\(medians) \(format(ratio: Comparison.median(ratios))) | \(format(ratio: ratios.first!)) to \(format(ratio: ratios.last!)) |"
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
