import AppCacheKit
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the parent knows must hold on a root after its writers were killed or exited.
struct RootChecks {
    let root: URL

    /// The files under the root, relative to it (links not followed).
    func files() -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: root.path(percentEncoded: false)) else { return [] }
        var found: [String] = []
        while let name = enumerator.nextObject() as? String { found.append(name) }
        return found
    }

    /// The bytes the archives take on disk, as the budget counts them: the sizes of the
    /// archive files (`*.archive`) and of the packs (`.pack`, dead records and damage included)
    /// under the version directory; not the journal, the lock file or anything else. Links and
    /// other non-regular files count nothing.
    func measuredUsage(version: String = "1") -> Int {
        Self.diskBytes(versionPath: root.path(percentEncoded: false) + "/version-" + version)
    }

    /// The bytes of the archive files and packs under `versionPath` (see ``measuredUsage(version:)``).
    static func diskBytes(versionPath: String) -> Int {
        guard let enumerator = FileManager.default.enumerator(atPath: versionPath) else { return 0 }
        var total = 0
        while let name = enumerator.nextObject() as? String {
            let file = (name as NSString).lastPathComponent
            guard file == ".pack" || file.hasSuffix(".archive") else { continue }
            var info = stat()
            guard lstat(versionPath + "/" + name, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            total += Int(info.st_size)
        }
        return total
    }

    /// Temporary files and trash directories left anywhere under the root.
    func leftovers() -> [String] {
        files().filter { $0.split(separator: "/").contains { $0.hasPrefix(".tmp-") || $0.hasPrefix(".wipe-") } }
    }

    /// The checks after an open plus one write: the index equals the disk, no temporary file
    /// outlives them, the budget holds. Returns the violations.
    func afterOpenAndOneWrite(_ cache: AppCache, budget: Int?) -> [String] {
        var violations: [String] = []
        do {
            try cache.cacheItems(TortureItem.collection(user: cache.user ?? "-", key: "probe", sequence: 1), forKey: "probe")
        } catch {
            violations.append("the probe write failed: \(error)")
        }
        let measured = measuredUsage()
        do {
            let usage = try cache.bytesOnDisk()
            if usage != measured { violations.append("bytesOnDisk \(usage) but the archive files and packs take \(measured) bytes") }
        } catch {
            violations.append("bytesOnDisk failed: \(error)")
        }
        if let budget, measured > budget { violations.append("the archive files and packs take \(measured) bytes, over the budget \(budget)") }
        // A removal that another process recorded and died before carrying out is carried out
        // by the first batch of the next open, which may be the opening's own background one:
        // that batch deletes its trash after it lets go of the lock, on the cache's thread, so
        // a trash directory may outlive the write by a moment. It must go, though.
        var left = leftovers()
        let deadline = Date().addingTimeInterval(5)
        while left.contains(where: { !$0.contains(".tmp-") }), left.allSatisfy({ !$0.contains(".tmp-") }), Date() < deadline {
            usleep(10_000)
            left = leftovers()
        }
        if !left.isEmpty { violations.append("temporary files outlived an open and a write: \(left.prefix(5))") }
        return violations
    }
}

/// A file and a directory outside the cache root, which nothing may ever touch.
struct Outside {
    let directory: URL
    let sentinel: URL
    static let contents = Data("outside the root: never read, written or deleted".utf8)
    static let date = Date(timeIntervalSince1970: 1_600_000_000)

    init(in base: URL) throws {
        directory = base.appending(path: "outside", directoryHint: .isDirectory)
        sentinel = directory.appending(path: "sentinel")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Self.contents.write(to: sentinel)
        try FileManager.default.setAttributes([.modificationDate: Self.date], ofItemAtPath: sentinel.path(percentEncoded: false))
    }

    /// What changed outside the root, if anything.
    func changes() -> [String] {
        var found: [String] = []
        if (try? Data(contentsOf: sentinel)) != Self.contents { found.append("the sentinel's bytes changed") }
        let date = try? FileManager.default.attributesOfItem(atPath: sentinel.path(percentEncoded: false))[.modificationDate] as? Date
        if date != Self.date { found.append("the sentinel's date changed") }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path(percentEncoded: false))) ?? []
        if names != ["sentinel"] { found.append("the outside directory holds \(names)") }
        return found
    }
}
