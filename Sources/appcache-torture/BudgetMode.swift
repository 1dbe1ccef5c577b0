import AppCacheKit
import Foundation
import MenuModel

/// Holds caches with a disk budget to it, counted in bytes on disk: for each budget, one
/// writer alone on a root (``BudgetWriter``) while a sampler measures the disk continuously,
/// then two child processes writing to one root at once. After every change the archive files
/// and packs (dead records included) take at most the budget, and `diskUsage` equals what they
/// take; the largest overshoot seen in the middle of a batch is reported, and must stay
/// within that batch's own write.
struct BudgetMode {
    let base: URL
    let quick: Bool
    let report: Report
    var random: SeededRandom

    static let budgets = [120_000, 2_000_000]

    /// Runs each budget alone, then shared, recording violations and figures in ``report``.
    mutating func run() throws {
        for budget in Self.budgets {
            try alone(budget: budget)
            try shared(budget: budget)
        }
    }

    /// One writer on its own root, in this process.
    private mutating func alone(budget: Int) throws {
        let root = base.appending(path: "budget-\(budget)", directoryHint: .isDirectory)
        let sampler = DiskSampler(versionPath: root.path(percentEncoded: false) + "/version-1")
        let writer = BudgetWriter(options: .init(root: root, budget: budget, seed: random.next() % 1_000_000, changes: quick ? 500 : 20_000))
        let outcome = try writer.run()
        let sampled = sampler.stop()
        report.episodes += 1
        report.operations += outcome.operations
        for violation in outcome.violations { report.violation("budget \(budget), one process: \(violation)") }
        // A batch writes one collection here: mid-batch, the disk may pass the budget by that
        // archive (its filler, and room for its header and items), never by more.
        let bound = outcome.largestArchive + 16_384
        if sampled.largest - budget > bound {
            report.violation("budget \(budget), one process: mid-batch the disk took \(sampled.largest) bytes, past the budget by more than a batch's write (\(bound))")
        }
        report.figure(
            "budget \(budget), one process: \(outcome.operations) operations; after each change at most \(outcome.largest) bytes on disk (overshoot \(max(outcome.largest - budget, 0))); mid-batch at most \(sampled.largest) bytes in \(sampled.samples) samples (overshoot \(max(sampled.largest - budget, 0)), largest collection \(outcome.largestArchive) bytes); \(outcome.compactions) compactions seen")
    }

    /// Two child processes writing to one root, each with the budget.
    private mutating func shared(budget: Int) throws {
        let root = base.appending(path: "budget-\(budget)-shared", directoryHint: .isDirectory)
        let changes = quick ? 250 : 5000
        let children = try ["A", "B"].map { owner in
            try ChildProcess(arguments: [
                "--child", "budget", "--root", root.path(percentEncoded: false), "--budget", "\(budget)", "--owner", owner,
                "--seed", "\(random.next() % 1_000_000)", "--changes", "\(changes)",
            ])
        }
        var largest = 0
        var compactions = 0
        for child in children {
            if !child.wait(timeout: quick ? 300 : 1800) { report.violation("budget \(budget), two processes: a writer hung after \(child.printed.last ?? "start")") }
            if !child.exitedCleanly { report.violation("budget \(budget), two processes: a writer ended with \(child.termination)") }
            report.operations += child.printed.reversed().lazy.compactMap { $0.hasPrefix("N\t") ? Int($0.dropFirst(2)) : nil }.first ?? 0
            for line in child.printed {
                if line.hasPrefix("VIOLATION") { report.violation("budget \(budget), two processes: \(line)") }
                let fields = line.split(separator: "\t")
                if fields.first == "S", fields.count == 4 {
                    largest = max(largest, Int(fields[1]) ?? 0)
                    compactions += Int(fields[2]) ?? 0
                }
            }
        }
        report.episodes += 1
        // Both gone: a fresh cache's diskUsage is what the disk holds, within the budget.
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: BudgetWriter.users[0])
        TortureLayout.apply(to: &configuration)
        configuration.diskByteLimit = budget
        configuration.writeBackDelay = .zero
        let report = report
        configuration.diagnostics = { problem in report.violation("budget \(budget), two processes, reopened: diagnostics: \(problem)") }
        let cache = try AppCache(configuration: configuration)
        let checks = RootChecks(root: root)
        let usage = try cache.bytesOnDisk()
        let measured = checks.measuredUsage()
        if usage != measured { report.violation("budget \(budget), two processes: reopened, diskUsage \(usage) but the archive files and packs take \(measured) bytes") }
        for violation in checks.afterOpenAndOneWrite(cache, budget: budget) { report.violation("budget \(budget), two processes: \(violation)") }
        report.figure(
            "budget \(budget), two processes: \(changes) changes each; between batches at most \(largest) bytes on disk (overshoot \(max(largest - budget, 0))); \(compactions) compactions seen")
    }
}
