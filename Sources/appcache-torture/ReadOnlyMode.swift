@_spi(Benchmarks) import AppCacheKit
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A root that cannot be written: a cache filled by a writer (with a damaged archive planted
/// among the good ones) is made read-only (a tmpfs remounted read-only when this runs as root,
/// where permissions do not bind; the directories' write bits taken away otherwise), then
/// several instances read it from several threads at once and try every kind of change.
///
/// Checks that every intact collection reads back whole; the damaged one is a miss; every
/// change (write-through write, flush of a dirty collection, removal, user removal, pin) throws
/// `permissionDenied` and loses nothing from memory; each instance tells `diagnostics` once
/// that it is read-only; and not one byte, name or date on disk changed.
struct ReadOnlyMode {
    let base: URL
    let quick: Bool
    let report: Report

    var episodes: Int { quick ? 3 : 20 }
    static let collections = 24
    static let users = ["ro-a", "ro-b"]

    func run() throws {
        for episode in 0..<episodes {
            let mount = try ReadOnlyRoot(base.appending(path: "read-only-\(episode)", directoryHint: .isDirectory))
            defer { mount.remove() }
            try runEpisode(episode, root: mount.root, makeReadOnly: mount.makeReadOnly)
            report.episodes += 1
        }
        report.figure("read-only: \(ReadOnlyRoot.mechanism)")
    }

    private func configuration(_ root: URL, user: String, writeBackDelay: Duration? = nil) -> AppCache.Configuration {
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: user)
        configuration.writeBackDelay = writeBackDelay
        configuration.flushesAtExit = false
        configuration.observesApplicationLifecycle = false
        return configuration
    }

    private func runEpisode(_ episode: Int, root: URL, makeReadOnly: () throws -> Void) throws {
        // Fill it, then damage one archive of each user.
        do {
            for user in Self.users {
                let writer = try AppCache(configuration: configuration(root, user: user, writeBackDelay: .zero))
                for index in 0..<Self.collections {
                    try writer.cacheItems(TortureItem.collection(user: user, key: "k\(index)", sequence: episode), forKey: "k\(index)")
                }
            }
        }
        // The archive of k0 of each user, found as the inspector finds it.
        let listing = try CacheRootListing.read(root: root)
        for archive in listing.archives where archive.key == "k0" {
            // k0 was each user's first write: a packed one is the first record of the user's
            // pack, its header after the record's 36-byte prefix.
            let url = URL(filePath: archive.path)
            let handle = try FileHandle(forUpdating: archive.isPacked ? url.deletingLastPathComponent().appending(path: ".pack") : url)
            try handle.seek(toOffset: archive.isPacked ? 36 + 40 : 40)
            try handle.write(contentsOf: Data(repeating: 0xA5, count: 8))
            try handle.close()
        }
        try makeReadOnly()
        let before = try snapshot(root)

        let told = Shared<[String: Int]>([:])
        let instances = try (0..<4).map { index -> AppCache in
            var settings = configuration(root, user: Self.users[index % 2], writeBackDelay: index < 2 ? nil : .zero)
            let name = "instance \(index)"
            settings.diagnostics = { problem in
                // The notice at opening (a dirty collection that could not be written is reported
                // again when the instance goes away: that is data loss, and must be told).
                if problem.code == .permissionDenied, problem.message.hasPrefix("The cache directory cannot be written") {
                    told.withLock { $0[name, default: 0] += 1 }
                }
            }
            return try AppCache(configuration: settings)
        }
        let report = report
        let quick = quick
        let readers = DispatchGroup()
        for index in 0..<4 {
            DispatchQueue.global().async(group: readers) {
                let cache = instances[index]
                let user = Self.users[index % 2]
                for round in 0..<(quick ? 3 : 10) {
                    for key in 0..<Self.collections {
                        do {
                            let items = try cache.getCachedItems(TortureItem.self, forKey: "k\(key)")
                            report.operations += 1
                            if let items {
                                if key == 0 {
                                    report.violation("read-only: the damaged \(user)/k0 was read as items")
                                } else if let problem = TortureItem.problem(with: items, user: user, key: "k\(key)") {
                                    report.violation("read-only: \(user)/k\(key) read back wrong: \(problem)")
                                }
                            } else if round == 0, key != 0 {
                                report.violation("read-only: intact \(user)/k\(key) was a miss")
                            }
                        } catch {
                            report.violation("read-only: a read threw \(error)")
                        }
                    }
                }
            }
        }

        // Every change throws permissionDenied, and what memory holds stays.
        for (index, cache) in instances.enumerated() {
            let user = Self.users[index % 2]
            let fresh = TortureItem.collection(user: user, key: "new", sequence: 99)
            expectDenied("cacheItems (instance \(index))") {
                try cache.cacheItems(fresh, forKey: "new")
                if index < 2 { try cache.flush() }  // write-back: the flush is what fails
            }
            if index < 2, (try? cache.getCachedItems(TortureItem.self, forKey: "new")) != fresh {
                report.violation("read-only: a dirty collection left memory after its flush failed")
            }
            expectDenied("removeItems") { try cache.removeItems(TortureItem.self, forKey: "k1") }
            expectDenied("removeUser") { try cache.removeUser(user) }
            expectDenied("removeAll") { try cache.removeAll() }
            expectDenied("pin") { try cache.pin(TortureItem.self, forKey: "k2") }
        }
        readers.wait()
        defer { withExtendedLifetime(instances) {} }

        for index in instances.indices where told.withLock({ $0["instance \(index)"] }) != 1 {
            report.violation("read-only: instance \(index) told diagnostics \(told.withLock { $0["instance \(index)"] ?? 0 }) times that it is read-only, not once")
        }
        let after = try snapshot(root)
        if after != before {
            let changed = Set(before.keys).symmetricDifference(after.keys).union(before.keys.filter { before[$0] != after[$0] })
            report.violation("read-only: the disk changed under a read-only root: \(changed.sorted().prefix(5))")
        }
    }

    private func expectDenied(_ what: String, _ body: () throws -> Void) {
        do {
            try body()
            report.violation("read-only: \(what) did not throw")
        } catch let error as AppCacheError where error.code == .permissionDenied {
            report.operations += 1
        } catch {
            report.violation("read-only: \(what) threw \(error), not permissionDenied")
        }
    }

    /// Every file under `root`: size, modification time and a checksum of its bytes.
    private func snapshot(_ root: URL) throws -> [String: String] {
        var result: [String: String] = [:]
        let rootPath = root.path(percentEncoded: false)
        for name in FileManager.default.enumerator(atPath: rootPath)?.allObjects as? [String] ?? [] {
            let path = rootPath + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            var digest = "\(info.st_mode) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
            if info.st_mode & S_IFMT == S_IFREG, let data = FileManager.default.contents(atPath: path) {
                var hash: UInt64 = 0xCBF2_9CE4_8422_2325
                for byte in data { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
                digest += " \(hash)"
            }
            result[name] = digest
        }
        return result
    }
}

/// A directory that can be made read-only for this process: a tmpfs remounted read-only when
/// running as root (root ignores permission bits), the write bits removed otherwise.
struct ReadOnlyRoot {
    let root: URL
    private let mounted: Bool

    static var mechanism: String {
        geteuid() == 0 ? "a tmpfs remounted read-only" : "directories without write permission"
    }

    init(_ url: URL) throws {
        root = url
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        mounted = geteuid() == 0
        if mounted {
            try Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=16m", "tmpfs", url.path(percentEncoded: false)])
        }
    }

    func makeReadOnly() throws {
        if mounted {
            try Self.run("/bin/mount", ["-o", "remount,ro", root.path(percentEncoded: false)])
        } else {
            for name in [""] + (FileManager.default.subpaths(atPath: root.path(percentEncoded: false)) ?? []) {
                let path = root.path(percentEncoded: false) + (name.isEmpty ? "" : "/" + name)
                var info = stat()
                guard lstat(path, &info) == 0 else { continue }
                chmod(path, info.st_mode & S_IFMT == S_IFDIR ? 0o500 : 0o400)
            }
        }
    }

    func remove() {
        let path = root.path(percentEncoded: false)
        if mounted {
            try? Self.run("/bin/umount", ["-l", path])
        } else {
            for name in [""] + (FileManager.default.subpaths(atPath: path) ?? []) {
                chmod(path + (name.isEmpty ? "" : "/" + name), 0o700)
            }
        }
        try? FileManager.default.removeItem(at: root)
    }

    private static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(filePath: tool)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSLocalizedDescriptionKey: "\(tool) \(arguments) failed"])
        }
    }
}
