@_exported import AppCacheTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
// The one `@_spi` import of the suite: `packLimit` sets the fixture's archive layout.
@_spi(Benchmarks) @testable import AppCacheKit

/// Collects what the cache reports to its diagnostics hook.
final class DiagnosticsRecorder: Sendable {
    private let reported = Locked<[AppCacheError]>([])

    var errors: [AppCacheError] { reported.withLock { $0 } }
    var codes: [AppCacheError.Code] { errors.map(\.code) }

    func record(_ error: AppCacheError) {
        reported.withLock { $0.append(error) }
    }
}

/// Everything a test needs to open caches on one temporary root.
struct Fixture {
    let directory: TemporaryDirectory
    /// The dates of the fixture's caches follow it (the testing kit's clock, for dates only:
    /// the suite's own waits keep real time, as its timing tests ask).
    let clock = CacheClock()
    let diagnostics = DiagnosticsRecorder()
    /// How the fixture's caches lay their archives out.
    let archiveLayout: ArchiveLayout

    /// How a test's caches lay archives out on disk.
    enum ArchiveLayout: Sendable {
        /// As in an app: small archives share their user directory's pack. Tests of what the
        /// cache does run on it; they see the disk through ``hasArchive(_:key:user:schemaVersion:)``
        /// and ``measuredUsage()``, which read both layouts.
        case production
        /// Every archive a file of its own, for the tests about the disk layout that find, age,
        /// count or damage archive files (``archivePath(_:key:user:schemaVersion:)``,
        /// ``archiveExists(_:key:user:)``, ``allFiles()``).
        case filePerCollection
        /// Archives up to `limit` bytes packed, for the tests of the pack that also look at
        /// which archives are files of their own.
        case packed(limit: Int)
    }

    /// - Parameters:
    ///   - base: where the root goes (the system's temporary directory by default).
    ///   - layout: how the caches lay archives out; the production layout unless the test is
    ///     about archive files.
    init(
        prefix: String = "AppCacheKitTests", in base: URL = FileManager.default.temporaryDirectory,
        layout: ArchiveLayout = .production
    ) throws {
        directory = try TemporaryDirectory(prefix: prefix, in: base)
        archiveLayout = layout
    }

    var root: URL { directory.url }
    var rootPath: String { directory.path }

    /// How a test's cache uses memory.
    enum Memory {
        /// No memory layer: every write goes straight to disk and every read to the file, so
        /// tests of the disk rules see the disk alone.
        case diskOnly
        /// The memory layer with these limits and write-back delay.
        case layer(bytes: Int = 8 << 20, entries: Int = 1000, writeBackDelay: Duration? = nil)
    }

    /// A configuration on the fixture's root, with its clock and diagnostics.
    ///
    /// - Parameter sharing: whether caches opened with it share the services of a live cache
    ///   with the same settings, as an app's instances do (``CacheServices``). Off by default:
    ///   most tests open a second cache to stand for another process, or to see the disk with
    ///   fresh memory.
    func configuration(
        schemaVersion: String = "1", user: String? = "alice", memory: Memory = .diskOnly,
        faults: FileSystem.FaultInjector? = nil, sharing: Bool = false
    ) -> AppCache.Configuration {
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: schemaVersion, user: user)
        let clock = clock
        let diagnostics = diagnostics
        configuration.now = { clock.now }
        configuration.diagnostics = { diagnostics.record($0) }
        configuration.faults = faults
        configuration.sharesServices = sharing
        // ExitFlush.flushAll() flushes every registered cache of the process: a test of it
        // must not write the caches of tests running beside it. Tests of exit flushing turn
        // it on.
        configuration.flushesAtExit = false
        switch archiveLayout {
        case .production: break
        case .filePerCollection: configuration.packLimit = 0
        case .packed(let limit): configuration.packLimit = limit
        }
        switch memory {
        case .diskOnly:
            configuration.writeBackDelay = .zero
            configuration.memoryEntryLimit = 0
        case .layer(let bytes, let entries, let writeBackDelay):
            configuration.memoryByteLimit = bytes
            configuration.memoryEntryLimit = entries
            configuration.writeBackDelay = writeBackDelay
        }
        return configuration
    }

    func openCache(
        schemaVersion: String = "1", user: String? = "alice", memory: Memory = .diskOnly,
        faults: FileSystem.FaultInjector? = nil, sharing: Bool = false
    ) throws -> AppCache {
        try AppCache(configuration: configuration(schemaVersion: schemaVersion, user: user, memory: memory, faults: faults, sharing: sharing))
    }

    /// Whether the archive of a collection is a file of its own on disk.
    func archiveExists<Model: CacheableModel>(
        _ type: Model.Type, key: String? = nil, user: String? = "alice", sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        FileManager.default.fileExists(atPath: archivePath(type, key: key, user: user, sourceLocation: sourceLocation))
    }

    /// Whether a collection has an archive on disk, in either layout: a file of its own or a
    /// record in its user directory's pack.
    func hasArchive<Model: CacheableModel>(
        _ type: Model.Type, key: String? = nil, user: String? = "alice", schemaVersion: String = "1"
    ) -> Bool {
        let layout = layout(schemaVersion: schemaVersion)
        guard let fileSystem = try? FileSystem.open(rootPath: layout.rootPath, versionName: layout.versionDirectoryName, create: false)
        else { return false }
        let store = DiskStore(layout: layout, fileSystem: fileSystem)
        return store.facts(of: layout.archivePath(for: ArchiveKey(user: user, cacheName: Model.cacheName, key: key))) != nil
    }

    func layout(schemaVersion: String = "1") -> CacheLayout {
        CacheLayout(rootDirectory: root, schemaVersion: schemaVersion)
    }

    /// The archive path of a collection, where its file of its own is (or would be).
    ///
    /// In the production layout a collection is a record in a pack, and what is at the path says
    /// nothing of it: a test that looks there opens its fixture with another layout, or this
    /// records an issue.
    func archivePath<Model: CacheableModel>(
        _ type: Model.Type, key: String? = nil, user: String? = "alice", schemaVersion: String = "1",
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> String {
        if case .production = archiveLayout {
            Issue.record(
                "An archive file in the production layout says nothing of the collection: open the fixture with `layout: .filePerCollection`, or ask `hasArchive`.",
                sourceLocation: sourceLocation)
        }
        let layout = layout(schemaVersion: schemaVersion)
        return layout.absolutePath(layout.archivePath(for: ArchiveKey(user: user, cacheName: Model.cacheName, key: key)))
    }

    /// The disk layer of an open version directory, for planting archives a test needs.
    func store(schemaVersion: String = "1") throws -> DiskStore {
        try DiskStore.open(layout: layout(schemaVersion: schemaVersion), onDamage: { _, _ in })
    }

    /// Writes an archive the way the cache would, without a cache (and without the journal).
    func plant(_ record: ArchiveRecord, forKey key: ArchiveKey, schemaVersion: String = "1") throws {
        let store = try store(schemaVersion: schemaVersion)
        _ = try store.write(record, forKey: key, at: store.layout.archivePath(for: key), temporaryName: FileSystem.temporaryName())
    }

    /// The bytes of every archive file and pack under the root, as `diskUsage` should say.
    func measuredUsage() throws -> Int {
        try allFiles().filter { $0.hasSuffix(".archive") || $0.hasSuffix("/" + PackFile.name) }.reduce(0) { total, file in
            total + ((try FileManager.default.attributesOfItem(atPath: rootPath + "/" + file)[.size] as? Int) ?? 0)
        }
    }

    /// The path of the disk index's journal.
    var journalPath: String { layout().absolutePath(IndexJournal.path) }

    /// Every file below the root, relative to it, sorted: archives and anything left beside
    /// them, but not the disk index's journal (`version-*/.index`) nor the lock file
    /// (`version-*/.lock`).
    func allFiles() -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: rootPath)
        var files = [String]()
        while let name = enumerator?.nextObject() as? String {
            if name.hasSuffix("/" + IndexJournal.path.name) || name.hasSuffix("/" + ProcessCoordinator.fileName)
                || name.hasSuffix("/" + SignedInUserRecord.path.name) { continue }
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: rootPath + "/" + name, isDirectory: &isDirectory), !isDirectory.boolValue {
                files.append(name)
            }
        }
        return files.sorted()
    }
}

/// Sets a file's modification date, the way tests age archives.
func setModificationDate(_ date: Date, ofFileAt path: String) throws {
    try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: path)
}

/// POSIX permission bits of a file or directory.
func permissions(ofItemAt path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
}

/// Runs `body`, expecting an `AppCacheError`, and returns it.
func expectAppCacheError(_ body: () throws -> Void) -> AppCacheError? {
    do {
        try body()
        return nil
    } catch let error as AppCacheError {
        return error
    } catch {
        return nil
    }
}

/// This process's resident memory, in bytes (0 where it cannot be read).
func residentBytes() -> Int {
    #if os(Linux)
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
        let pages = statm.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
    else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    #else
    return 0
    #endif
}

/// The most memory the process has held resident since it started (0 where the platform does
/// not say cheaply): catches an allocation that came and went between two readings of
/// ``residentBytes()``.
func peakResidentBytes() -> Int {
    #if os(Linux)
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
    else { return 0 }
    return kilobytes * 1024
    #else
    return 0
    #endif
}
