import AppCacheKit
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A removal (`removeUser`, `removeAllUsers`, `removeAll()`, `signOut(removingData: true)`) is
/// visible to every process before the call returns, and survives its caller's death:
///
/// - **readers**: this process writes a fresh user's 12 collections; two child processes read
///   them in a loop (``RemovalReader``, one from memory, one from disk); this process removes
///   them and then creates a marker file: a read in a child that began after it saw the marker
///   and found the data is a violation; after a `flush()` the user directory is off the disk;
/// - **kill**: a child writes a user's 12 collections (``KilledRemover``); this process takes
///   the lock file's `flock`, so that no batch of the child can run; the child removes them and
///   kills itself (`SIGKILL`) the moment the call returns; the lock let go, a fresh cache must
///   read 0 of the 12 before any batch of its own, and after its `flush()` the user directory
///   must be off the disk.
struct RemovalMode {
    let base: URL
    let quick: Bool
    let report: Report

    /// The collections each round writes and removes.
    static let keys = (0..<12).map { "k\($0)" }

    /// Runs the reader rounds, then the kills, each removal call in turn; records violations
    /// and figures in ``report``.
    func run() throws {
        let rounds = quick ? 1 : 5
        var readsAfterMarker = 0
        for round in 0..<rounds {
            for call in RemovalCall.allCases { readsAfterMarker += try readers(call, round: round) }
        }
        var readable = 0
        var kills = 0
        var stillOnDisk = 0
        for round in 0..<rounds {
            for call in RemovalCall.allCases {
                let (found, onDisk) = try killed(call, round: round)
                kills += 1
                readable += found
                if onDisk { stillOnDisk += 1 }
            }
        }
        report.figure("removal: \(readsAfterMarker) reads in other processes after a removal returned, all misses required")
        report.figure(
            "removal: \(readable) of \(kills * Self.keys.count) readable after the kill (\(kills) kills, \(readable) of 12 at most each; the user directory still on disk at \(stillOnDisk) of the kills)")
    }

    /// Creates the empty file at `path`, a signal to the children.
    ///
    /// - Throws: `POSIXError` when it cannot.
    private func create(_ path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else { throw POSIXError(.EIO) }
    }

    // MARK: - Readers in other processes

    /// One round of readers: returns the reads made after the marker.
    private func readers(_ call: RemovalCall, round: Int) throws -> Int {
        let root = base.appending(path: "removal-readers", directoryHint: .isDirectory)
        let user = "r\(round)-\(call.rawValue.lowercased())"  // file names keep lowercase as it is
        let what = "removal \(call.label), readers, round \(round)"
        let report = report
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: user)
        configuration.writeBackDelay = .zero
        configuration.flushesAtExit = false
        configuration.diagnostics = { problem in report.violation("\(what): diagnostics: \(problem)") }
        let cache = try AppCache(configuration: configuration)
        for (number, key) in Self.keys.enumerated() {
            try cache.cacheItems(TortureItem.collection(user: user, key: key, sequence: round * 100 + number + 1), forKey: key)
        }
        let directory = root.path(percentEncoded: false) + "/version-1/user-" + user
        if !FileManager.default.fileExists(atPath: directory) { report.violation("\(what): no user directory at \(directory) after the writes") }
        let marker = base.path(percentEncoded: false) + "/removal-marker-\(round)-\(call.rawValue)"
        let stop = marker + "-stop"
        let children = try [true, false].map { usesMemory in
            try ChildProcess(arguments: [
                "--child", "removal-reader", "--root", root.path(percentEncoded: false), "--user", user, "--marker", marker,
                "--stop", stop, "--memory", usesMemory ? "yes" : "no",
            ])
        }
        let deadline = Date().addingTimeInterval(60)
        while children.contains(where: { !$0.printed.contains("READY") }) && Date() < deadline { usleep(2000) }
        if children.contains(where: { !$0.printed.contains("READY") }) { report.violation("\(what): a reader never read the 12 collections whole") }
        usleep(UInt32.random(in: 0..<20_000))
        try call.perform(on: cache, user: user)
        try create(marker)
        for key in Self.keys {
            if try cache.getCachedItems(TortureItem.self, forKey: key) != nil { report.violation("\(what): this process read \(key) after the call returned") }
        }
        usleep(quick ? 200_000 : 400_000)
        try create(stop)
        var afterMarker = 0
        for child in children {
            if !child.wait(timeout: 60) { report.violation("\(what): a reader hung") }
            if !child.exitedCleanly { report.violation("\(what): a reader ended with \(child.termination)") }
            for line in child.printed {
                if line.hasPrefix("VIOLATION") { report.violation("\(what): \(line)") }
                let fields = line.split(separator: "\t")
                if fields.first == "R", fields.count == 3 {
                    report.operations += Int(fields[1]) ?? 0
                    afterMarker += Int(fields[2]) ?? 0
                }
            }
        }
        if afterMarker == 0 { report.violation("\(what): no reader read after the marker; nothing was checked") }
        try cache.flush()
        if FileManager.default.fileExists(atPath: directory) { report.violation("\(what): the user directory is still on disk after a flush") }
        report.episodes += 1
        return afterMarker
    }

    // MARK: - A remover killed right after the call

    /// One kill: returns how many of the 12 a fresh cache read, and whether the user directory
    /// was still on disk at the kill (the background batch had not run).
    private func killed(_ call: RemovalCall, round: Int) throws -> (readable: Int, stillOnDisk: Bool) {
        let root = base.appending(path: "removal-kill-\(call.rawValue)-\(round)", directoryHint: .isDirectory)
        let user = "k\(round)"
        let what = "removal \(call.label), killed remover, round \(round)"
        let go = base.path(percentEncoded: false) + "/removal-go-\(call.rawValue)-\(round)"
        let child = try ChildProcess(arguments: [
            "--child", "removal-killer", "--root", root.path(percentEncoded: false), "--user", user, "--call", call.rawValue, "--go", go,
        ])
        let deadline = Date().addingTimeInterval(60)
        while !child.printed.contains("WRITTEN") && child.process.isRunning && Date() < deadline { usleep(2000) }
        guard child.printed.contains("WRITTEN") else {
            child.wait(timeout: 1)
            report.violation("\(what): the child did not write its collections (\(child.termination)): \(child.printed.suffix(3))")
            return (0, false)
        }
        let version = root.path(percentEncoded: false) + "/version-1"
        let lock = try HeldLock(path: version + "/.lock")
        lock.lock()
        try create(go)
        if !child.wait(timeout: 60) { report.violation("\(what): the child hung") }
        report.kills += 1
        report.episodes += 1
        if child.termination != "signal \(SIGKILL)" { report.violation("\(what): the child ended with \(child.termination), not its own SIGKILL") }
        for line in child.printed where line.hasPrefix("VIOLATION") { report.violation("\(what): child: \(line)") }
        let directory = version + "/user-" + user
        let stillOnDisk = FileManager.default.fileExists(atPath: directory)
        lock.unlock()
        // A relaunch: nothing of the user reads, before any batch of its own.
        let problems = Shared<[String]>([])
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: user)
        configuration.writeBackDelay = .zero
        configuration.flushesAtExit = false
        configuration.diagnostics = { problem in problems.withLock { $0.append("diagnostics: \(problem)") } }
        let cache = try AppCache(configuration: configuration)
        var readable = 0
        for key in Self.keys {
            if try cache.getCachedItems(TortureItem.self, forKey: key) != nil || cache.cachedDate(TortureItem.self, forKey: key) != nil {
                readable += 1
            }
        }
        if readable > 0 { report.violation("\(what): \(readable) of 12 readable after the kill") }
        try cache.flush()
        if FileManager.default.fileExists(atPath: directory) { report.violation("\(what): the user directory is still on disk after a fresh cache's flush") }
        report.operations += Self.keys.count
        for problem in problems.withLock({ $0 }) { report.violation("\(what): \(problem)") }
        return (readable, stillOnDisk)
    }
}
