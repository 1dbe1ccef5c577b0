@_spi(Benchmarks) import AppCacheKit
import Foundation
import MenuModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files planted inside the root at every path the cache uses: each scenario runs in a child
/// process under a watchdog, calls every API, and must neither crash, hang, touch anything
/// outside the root, nor spend memory on a file's claimed size.
struct HostileMode {
    static let scenarios = [
        "symlink-archive", "symlink-user-directory", "symlink-journal", "symlink-lock", "symlink-version", "symlink-temporary",
        "fifo-archive", "fifo-journal", "fifo-lock", "fifo-temporary", "socket-archive", "directory-archive",
        "journal-escape", "journal-overflow", "journal-garbage", "journal-long-line", "huge-archive", "huge-journal",
        "huge-intact-archive", "truncated-archives", "awkward-names", "growth", "symlink-records", "fifo-records",
        "huge-records", "garbage-records", "symlink-pack", "symlink-pack-intact", "fifo-pack", "directory-pack", "huge-pack",
        "huge-pack-2g", "huge-intact-pack", "garbage-pack", "truncated-packs", "pack-escape",
    ]

    /// The scenarios that plant something at a pack's path: a write must leave a regular file
    /// there (or none), and the disk within the budget.
    static let packScenarios: Set = [
        "symlink-pack", "symlink-pack-intact", "fifo-pack", "directory-pack", "huge-pack", "huge-pack-2g", "huge-intact-pack",
        "garbage-pack", "truncated-packs", "pack-escape",
    ]

    /// The scenarios that plant or damage archive files: their caches write every archive as
    /// a file of its own. The others write small archives into their user directory's pack.
    static let fileScenarios: Set = [
        "symlink-archive", "fifo-archive", "socket-archive", "directory-archive", "huge-archive", "huge-intact-archive", "truncated-archives",
    ]

    let base: URL
    let report: Report

    func run() throws {
        for (number, scenario) in Self.scenarios.enumerated() {
            let root = base.appending(path: "hostile-\(number)", directoryHint: .isDirectory)
            let outside = try Outside(in: base.appending(path: "hostile-\(number)-outside", directoryHint: .isDirectory))
            let child = try ChildProcess(arguments: [
                "--child", "hostile", "--scenario", scenario, "--root", root.path(percentEncoded: false),
                "--outside", outside.directory.path(percentEncoded: false),
            ])
            report.episodes += 1
            if !child.wait(timeout: 120) {
                let last = child.printed.last { $0.hasPrefix("API") } ?? "setup"
                report.violation("hostile \(scenario): hung in \(last)")
            } else if !child.exitedCleanly {
                let last = child.printed.last { $0.hasPrefix("API") } ?? "setup"
                report.violation("hostile \(scenario): the child ended with \(child.termination) in \(last)")
            }
            for line in child.printed {
                if line.hasPrefix("VIOLATION") { report.violation("hostile \(scenario): \(line)") }
                if line.hasPrefix("API") { report.operations += 1 }
                if line.hasPrefix("FIGURE") { report.figure("hostile \(scenario): \(line.dropFirst(7))") }
            }
            for change in outside.changes() { report.violation("hostile \(scenario): outside the root, \(change)") }
        }
    }
}

/// The child side of one hostile scenario.
struct HostileScenario {
    let scenario: String
    let root: URL
    let outside: URL
    private var rootPath: String { root.path(percentEncoded: false) }
    private var versionPath: String { rootPath + "/version-1" }
    private var sentinel: String { outside.path(percentEncoded: false) + "/sentinel" }

    private func configuration(user: String? = "u0") -> AppCache.Configuration {
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: user)
        if HostileMode.fileScenarios.contains(scenario) { configuration.packLimit = 0 }
        configuration.writeBackDelay = .zero
        configuration.diskByteLimit = 1 << 20
        configuration.memoryEntryLimit = 0  // every read goes to the disk
        configuration.diagnostics = { _ in }  // damage is expected here; it is reported, fine
        return configuration
    }

    func run() throws {
        // A cache with a few collections of two users, written and closed.
        weak var written: AppCache?
        do {
            let cache = try AppCache(configuration: configuration())
            written = cache
            for user in ["u0", "u1"] {
                try cache.switchUser(to: user)
                for key in 0..<4 { try cache.cacheItems(TortureItem.collection(user: user, key: "k\(key)", sequence: key + 1), forKey: "k\(key)") }
            }
        }
        // Its last batch on its own thread (the signed-in user's record, the disk index) holds
        // it until done, and would make a version directory planted away again: wait for it.
        let deadline = Date().addingTimeInterval(10)
        while written != nil && Date() < deadline { usleep(1000) }
        let archive = try archivePath(user: "u0", key: "k0")
        let userDirectory = (archive as NSString).deletingLastPathComponent
        switch scenario {
        case "symlink-archive": try replace(archive) { try link($0, to: sentinel) }
        case "symlink-user-directory": try replace(userDirectory) { try link($0, to: outside.path(percentEncoded: false)) }
        case "symlink-journal": try replace(versionPath + "/.index") { try link($0, to: sentinel) }
        case "symlink-lock": try replace(versionPath + "/.lock") { try link($0, to: sentinel) }
        case "symlink-version": try replace(versionPath) { try link($0, to: outside.path(percentEncoded: false)) }
        case "symlink-temporary": try link(userDirectory + "/.tmp-planted", to: sentinel)
        case "fifo-archive": try replace(archive) { try fifo($0) }
        case "fifo-journal": try replace(versionPath + "/.index") { try fifo($0) }
        case "fifo-lock": try replace(versionPath + "/.lock") { try fifo($0) }
        case "fifo-temporary": try fifo(userDirectory + "/.tmp-planted")
        case "socket-archive": try replace(archive) { try socketFile($0) }
        case "directory-archive":
            try replace(archive) { path in
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
                try link(path + "/escape", to: outside.path(percentEncoded: false))
            }
        case "journal-escape":
            try journal([
                "S 44 0 ../../\(outside.lastPathComponent)/sentinel", "D ../sentinel", "D /\(sentinel)", "X ../",
                "I .tmp-x ../../sentinel", "S 10 0 user-u0/../../../sentinel", "A user-u0/\0", "J ..",
            ])
        case "journal-overflow":
            try journal((0..<9000).map { "S \(1 << 50) 0 shared/\($0).archive" } + ["S 9223372036854775807 0 shared/x.archive"])
        case "journal-garbage":
            var generator = SeededRandom(seed: 3)
            try Data((0..<(1 << 20)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }).write(to: URL(filePath: versionPath + "/.index"))
        case "journal-long-line":
            try Data(repeating: UInt8(ascii: "S"), count: 10 << 20).write(to: URL(filePath: versionPath + "/.index"))
        case "symlink-records":
            // The small record files beside the journal: the signed-in user, the model mismatches.
            for name in [".signed-in", ".model-mismatches"] { try replace(versionPath + "/" + name) { try link($0, to: sentinel) } }
        case "fifo-records":
            for name in [".signed-in", ".model-mismatches"] { try replace(versionPath + "/" + name) { try fifo($0) } }
        case "huge-records":
            for name in [".signed-in", ".model-mismatches"] { try sparse(versionPath + "/" + name, size: 3 << 30) }
        case "garbage-records":
            try Data("u\0../../sentinel".utf8).write(to: URL(filePath: versionPath + "/.signed-in"))
            try Data("../../\(outside.lastPathComponent)/sentinel\t1\t2\tx\n/\(sentinel)\t-1\t2\tx\nuser-u0/../x\t9\t9\tx\n\0\t\t\t\n".utf8)
                .write(to: URL(filePath: versionPath + "/.model-mismatches"))
        case "huge-archive": try sparse(archive, size: 3 << 30)
        case "huge-journal": try sparse(versionPath + "/.index", size: 3 << 30)
        case "huge-intact-archive":
            // The collection's own archive, its header intact, made 3 GB long (sparse): only
            // the payload length the header promises gives it away.
            let handle = try FileHandle(forWritingTo: URL(filePath: archive))
            try handle.truncate(atOffset: 3 << 30)
            try handle.close()
        case "truncated-archives":
            for (number, path) in try CacheRootListing.read(root: root).archives.map(\.path).enumerated() {
                let bytes = try Data(contentsOf: URL(filePath: path))
                try bytes.prefix(number * 37 % max(bytes.count, 1)).write(to: URL(filePath: path))
            }
        case "symlink-pack": try replace(userDirectory + "/.pack") { try link($0, to: sentinel) }
        case "symlink-pack-intact":
            // A link to a copy of the very pack, outside the root: a read that follows it
            // finds whole collections, so any hit is a followed link.
            let copy = outsidePack()
            try FileManager.default.createDirectory(atPath: (copy as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: userDirectory + "/.pack", toPath: copy)
            try replace(userDirectory + "/.pack") { try link($0, to: copy) }
        case "fifo-pack": try replace(userDirectory + "/.pack") { try fifo($0) }
        case "directory-pack":
            try replace(userDirectory + "/.pack") { path in
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
                try link(path + "/escape", to: outside.path(percentEncoded: false))
            }
        case "huge-pack": try sparse(userDirectory + "/.pack", size: 3 << 30)
        case "huge-pack-2g": try sparse(userDirectory + "/.pack", size: 2 << 30)
        case "huge-intact-pack":
            // The pack's records intact, the file made 600 MB long (sparse) after them: zeros
            // are no record.
            let handle = try FileHandle(forWritingTo: URL(filePath: userDirectory + "/.pack"))
            try handle.truncate(atOffset: 600 << 20)
            try handle.close()
        case "garbage-pack":
            var generator = SeededRandom(seed: 5)
            try Data((0..<(1 << 20)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }).write(to: URL(filePath: userDirectory + "/.pack"))
        case "truncated-packs":
            for (number, directory) in ["user-u0", "user-u1"].enumerated() {
                let path = versionPath + "/" + directory + "/.pack"
                let bytes = try Data(contentsOf: URL(filePath: path))
                try bytes.prefix(bytes.count / 2 + number * 17).write(to: URL(filePath: path))
            }
        case "pack-escape":
            // Records whose prefixes check out but claim bodies past any limit, lengths that
            // run past the end, and every kind byte.
            var bytes = try Data(contentsOf: URL(filePath: userDirectory + "/.pack"))
            for (kind, length) in [(1, UInt32.max), (1, UInt32(2 << 20)), (2, UInt32(5)), (3, UInt32(1)), (9, UInt32(0)), (1, UInt32(4096))] {
                var prefix: [UInt8] = [0xAC, 0x50, UInt8(kind), 0]
                withUnsafeBytes(of: length.littleEndian) { prefix += $0 }
                prefix += [UInt8](repeating: 0x41, count: 24)
                withUnsafeBytes(of: CRC32.checksum(prefix).littleEndian) { prefix += $0 }
                bytes += prefix
            }
            try bytes.write(to: URL(filePath: userDirectory + "/.pack"))
        case "awkward-names":
            try awkwardNames()
            return
        case "growth":
            try growth()
            return
        default:
            emit("VIOLATION unknown scenario \(scenario)")
            return
        }
        let intactCopy = scenario == "symlink-pack-intact" ? try Data(contentsOf: URL(filePath: outsidePack())) : nil
        try callEveryAPI(measureMemory: scenario.hasPrefix("huge"), pack: HostileMode.packScenarios.contains(scenario) ? userDirectory + "/.pack" : nil)
        if let intactCopy, (try? Data(contentsOf: URL(filePath: outsidePack()))) != intactCopy {
            emit("VIOLATION the pack outside the root, linked from the root, changed")
        }
    }

    /// Where the symlink-pack-intact scenario keeps its copy of the pack: beside the outside
    /// directory (which must hold only its sentinel).
    private func outsidePack() -> String {
        outside.deletingLastPathComponent().appending(path: outside.lastPathComponent + "-pack/.pack").path(percentEncoded: false)
    }

    /// Every API, on the planted root; each must return, and reads must be misses or whole
    /// collections of the right user and key.
    ///
    /// - Parameter pack: the path of the pack planted on, whose collections a read must not
    ///   find (it is no pack, or a link), and where a write must leave a regular file.
    private func callEveryAPI(measureMemory: Bool, pack: String?) throws {
        var cache: AppCache?
        func api(_ name: String, _ body: () throws -> Void) {
            emit("API \(name)")
            let before = residentBytes()
            let peakBefore = peakResidentBytes()
            do {
                try body()
            } catch let error as AppCacheError {
                // Clear errors are fine here (a planted file may stand where a directory must).
                emit("ERROR \(name): \(error.code)")
            } catch {
                emit("VIOLATION \(name) threw \(error)")
            }
            if measureMemory, let before, let after = residentBytes() {
                let grown = after - before
                emit("FIGURE \(name): resident memory \(grown >= 0 ? "+" : "")\(grown / 1024) KiB")
                if grown > 1 << 20 { emit("VIOLATION \(name) grew resident memory by \(grown / 1024) KiB") }
            }
            // A huge allocation freed before the call returned shows in the peak alone.
            if measureMemory, let peakBefore, let peakAfter = peakResidentBytes(), peakAfter - peakBefore > 16 << 20 {
                emit("VIOLATION \(name) held \((peakAfter - peakBefore) >> 20) MiB more at its peak than before")
            }
        }
        func check(_ items: [TortureItem]?, _ user: String, _ key: String) {
            if let items, let problem = TortureItem.problem(with: items, user: user, key: key) { emit("VIOLATION \(problem)") }
        }
        api("init") { cache = try AppCache(configuration: configuration()) }
        guard let cache else { return }
        // Warm every path once on a good collection, so that lazy set-up is not counted.
        _ = try? cache.getCachedItems(TortureItem.self, forKey: "k1")
        _ = cache.cachedDate(TortureItem.self, forKey: "k1")
        _ = try? cache.entries()
        _ = try? CacheRootListing.read(root: root, verifyChecksums: true)
        api("cachedDate") { _ = cache.cachedDate(TortureItem.self, forKey: "k0") }
        api("isStale") { _ = cache.isStale(TortureItem.self, forKey: "k0") }
        api("entries") { _ = try cache.entries() }
        api("entriesOfAllUsers") { _ = try cache.entriesOfAllUsers() }
        api("inspector") { _ = try CacheRootListing.read(root: root, verifyChecksums: true) }
        api("diskUsage") { _ = try cache.bytesOnDisk() }
        api("getCachedItems") { check(try cache.getCachedItems(TortureItem.self, forKey: "k0"), "u0", "k0") }
        if let pack, scenario.hasPrefix("symlink") || scenario == "fifo-pack" || scenario == "directory-pack" {
            api("no read through the planted pack") {
                for key in 0..<4 {
                    if try cache.getCachedItems(TortureItem.self, forKey: "k\(key)") != nil { emit("VIOLATION u0's k\(key) was read with a \(scenario) at \(pack)") }
                }
            }
        }
        api("cachedCollection") { check(try cache.cachedCollection(TortureItem.self, forKey: "k1")?.items, "u0", "k1") }
        api("removeExpired") { try cache.removeExpired() }
        api("cacheItems") { try cache.cacheItems(TortureItem.collection(user: "u0", key: "k0", sequence: 9), forKey: "k0") }
        api("read back") {
            let items = try cache.getCachedItems(TortureItem.self, forKey: "k0")
            if items?[0].sequence != 9 { emit("VIOLATION a write after the damage did not read back") }
        }
        if let pack {
            api("pack replaced") {
                var info = stat()
                if lstat(pack, &info) == 0, info.st_mode & S_IFMT != S_IFREG {
                    emit("VIOLATION a write left a \(info.st_mode & S_IFMT == S_IFLNK ? "link" : "non-regular file") at \(pack)")
                }
                let measured = RootChecks(root: root).measuredUsage()
                if measured > 1 << 20 { emit("VIOLATION after a write the archive files and packs take \(measured) bytes, over the budget \(1 << 20)") }
            }
        }
        api("pin") { try cache.pin(TortureItem.self, forKey: "k0") }
        api("flush") { try cache.flush() }
        api("switchUser") { try cache.switchUser(to: "u1") }
        api("u1 reads") { for key in 0..<4 { check(try cache.getCachedItems(TortureItem.self, forKey: "k\(key)"), "u1", "k\(key)") } }
        api("removeItems") { try cache.removeItems(TortureItem.self, forKey: "k2") }
        api("removeUser") { try cache.removeUser("u0") }
        api("removeAllUsers") { try cache.removeAllUsers() }
        api("diskUsage after") {
            let usage = try cache.bytesOnDisk()
            let measured = RootChecks(root: root).measuredUsage()
            if usage != measured { emit("VIOLATION diskUsage \(usage), archive files and packs \(measured)") }
        }
    }

    /// Users and keys of every byte value and of long Unicode: each collection reads back as
    /// itself, and every file stays inside the version directory.
    private func awkwardNames() throws {
        let cache = try AppCache(configuration: configuration(user: nil))
        var names = (0...255).map { String(UnicodeScalar(UInt8($0))) }
        names.append(String((0...255).map { Character(UnicodeScalar(UInt8($0))) }))
        names += [String(repeating: "é", count: 3000), String(repeating: "🍜", count: 2000), "e\u{301}", "../..", "/", ".", "~", "+", "%41"]
        for (number, name) in names.enumerated() {
            emit("API name \(number)")
            let user = name.isEmpty ? "x" : name
            do {
                try cache.switchUser(to: user)
                try cache.cacheItems(TortureItem.collection(user: user, key: name, sequence: number + 1), forKey: name)
                let items = try cache.getCachedItems(TortureItem.self, forKey: name)
                if let problem = items.flatMap({ TortureItem.problem(with: $0, user: user, key: name) }) { emit("VIOLATION \(problem)") }
                if items?[0].sequence != number + 1 { emit("VIOLATION the collection of name \(number) did not read back") }
            } catch {
                emit("VIOLATION name \(number): \(error)")
            }
        }
        let reopened = try AppCache(configuration: configuration(user: nil))
        let listed = try reopened.entriesOfAllUsers().count
        if listed < names.count { emit("VIOLATION entriesOfAllUsers lists \(listed) of \(names.count + 8) collections") }
        for file in RootChecks(root: root).files() where !file.hasPrefix("version-1") {
            emit("VIOLATION a file outside the version directory: \(file)")
        }
    }

    /// 100,000 disk reads with no writes: resident memory stays where it was.
    private func growth() throws {
        let cache = try AppCache(configuration: configuration())
        for read in 0..<5_000 { _ = try cache.getCachedItems(TortureItem.self, forKey: "k\(read % 4)") }
        emit("API 100,000 disk reads")
        guard let before = residentBytes() else { return }
        for read in 0..<100_000 { _ = try cache.getCachedItems(TortureItem.self, forKey: "k\(read % 4)") }
        guard let after = residentBytes() else { return }
        emit("FIGURE 100,000 disk reads: resident memory \(after - before >= 0 ? "+" : "")\((after - before) / 1024) KiB")
        if after - before > 1 << 20 { emit("VIOLATION 100,000 disk reads grew resident memory by \((after - before) / 1024) KiB") }
    }

    // MARK: - Planting

    private func archivePath(user: String, key: String) throws -> String {
        guard let path = try CacheRootListing.read(root: root).archives.first(where: { $0.user == user && $0.key == key })?.path else {
            throw AppCacheError(code: .notCached, message: "no archive for \(user)'s \(key)")
        }
        return path
    }

    private func replace(_ path: String, with plant: (String) throws -> Void) throws {
        try? FileManager.default.removeItem(atPath: path)
        try plant(path)
    }

    private func link(_ path: String, to target: String) throws {
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
    }

    private func fifo(_ path: String) throws {
        guard mkfifo(path, 0o600) == 0 else { throw POSIXError(.EIO) }
    }

    private func sparse(_ path: String, size: Int) throws {
        guard FileManager.default.createFile(atPath: path, contents: Data("ACA1".utf8)) else { throw POSIXError(.EIO) }
        let handle = try FileHandle(forWritingTo: URL(filePath: path))
        try handle.truncate(atOffset: UInt64(size))
        try handle.close()
    }

    /// A Unix socket at `path`: bound at a short path (socket paths are short), then moved.
    private func socketFile(_ path: String) throws {
        let short = "/tmp/acs-\(UInt32.random(in: 0 ... .max))"
        try bindSocket(short)
        try FileManager.default.moveItem(atPath: short, toPath: path)
    }

    private func bindSocket(_ path: String) throws {
        #if canImport(Glibc)
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw POSIXError(.EIO) }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw POSIXError(.ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw POSIXError(.EIO) }
    }

    /// A journal of CRC-valid lines with these bodies, after a valid header line.
    private func journal(_ bodies: [String]) throws {
        let lines = ["H 2"] + bodies
        let text = lines.map { body -> String in
            let checksum = String(CRC32.checksum(Array(body.utf8)), radix: 16)
            return String(repeating: "0", count: 8 - checksum.count) + checksum + " " + body + "\n"
        }.joined()
        try Data(text.utf8).write(to: URL(filePath: versionPath + "/.index"))
    }
}

/// CRC-32 as zlib computes it: the torture program crafts journal lines and headers whose
/// checksums are right, so that the cache's deeper checks are what it meets.
enum CRC32 {
    static func checksum(_ bytes: some Sequence<UInt8>, seed: UInt32 = 0) -> UInt32 {
        var crc = ~seed
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
