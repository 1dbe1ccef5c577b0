import AppCacheKit
import Foundation

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

    /// The bytes of every archive under the version directory: each archive file, and each
    /// record the user directories' packs hold live, as the inspector reads them.
    func measuredUsage(version: String = "1") -> Int {
        let base = root.path(percentEncoded: false) + "/version-" + version + "/"
        let files = files().filter { $0.hasPrefix("version-\(version)/") && $0.hasSuffix(".archive") }.reduce(0) { total, file in
            total + ((try? FileManager.default.attributesOfItem(atPath: base + file.dropFirst("version-\(version)/".count))[.size] as? Int) ?? 0)
        }
        let packed = ((try? CacheRootListing.read(root: root).archives) ?? [])
            .filter { $0.isPacked && $0.schemaVersion == version }
            .reduce(0) { $0 + $1.bytes }
        return files + packed
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
        let usage = cache.diskUsage
        let measured = measuredUsage()
        if usage != measured { violations.append("diskUsage \(usage) but the archives hold \(measured) bytes") }
        if let budget, usage > budget { violations.append("diskUsage \(usage) over the budget \(budget)") }
        let left = leftovers()
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
