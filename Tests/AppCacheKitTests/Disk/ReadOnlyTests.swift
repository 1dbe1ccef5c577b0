import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A root on a read-only volume, or one the process may read but not write, opens read-only,
/// as SQLite opens a read-only database: the intact archives are served, nothing is changed.
struct ReadOnlyTests {
    /// A fixture whose root holds `menu` under "lunch", then a cache on it whose lock file
    /// cannot be opened for writing (what a read-only volume answers).
    private func readOnlyCache(_ fixture: Fixture, menu: [MenuItem], memory: Fixture.Memory = .diskOnly) throws -> AppCache {
        try fixture.openCache().cacheItems(menu, forKey: "lunch")
        return try fixture.openCache(memory: memory, faults: { step, _ in step == .openLockFile ? EROFS : nil })
    }

    @Test func intactArchivesAreServed() throws {
        let fixture = try Fixture()
        let menu = MenuItem.sampleMenu(count: 4)
        let cache = try readOnlyCache(fixture, menu: menu)

        #expect(try cache.getCachedItems(MenuItem.self, forKey: "lunch") == menu)
        #expect(try cache.entries().map(\.key) == ["lunch"])
        // Said once, when it opened.
        #expect(fixture.diagnostics.codes == [.permissionDenied])
        #expect(fixture.diagnostics.errors.first?.message.contains("read-only") == true)
    }

    /// An archive a read-only cache cannot decode stays (it cannot be removed) and is reported
    /// once, not on every read.
    @Test func anUndecodableArchiveIsReportedOnce() throws {
        struct ChangedMenuItem: CacheableModel {
            var name: Int
            static var cacheName: String { "MenuItems" }
        }
        let fixture = try Fixture()
        let cache = try readOnlyCache(fixture, menu: MenuItem.sampleMenu(count: 2))
        for _ in 0..<3 { #expect(try cache.getCachedItems(ChangedMenuItem.self, forKey: "lunch") == nil) }
        #expect(fixture.diagnostics.codes == [.permissionDenied, .modelMismatch])
        #expect(fixture.diagnostics.errors.last?.message.contains("read-only") == true)
        #expect(try fixture.openCache().getCachedItems(MenuItem.self, forKey: "lunch")?.count == 2, "the file stays")
    }

    // Looks at archive files: each collection a file of its own.
    @Test func writesAndRemovalsThrowPermissionDeniedWithThePath() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let menu = MenuItem.sampleMenu(count: 4)
        let cache = try readOnlyCache(fixture, menu: menu)
        let before = fixture.allFiles()

        let write = expectAppCacheError { try cache.cacheItems(MenuItem.sampleMenu(count: 2, seed: 1), forKey: "lunch") }
        #expect(write?.code == .permissionDenied)
        #expect(write?.path == fixture.layout().versionPath)
        #expect(expectAppCacheError { try cache.removeItems(MenuItem.self, forKey: "lunch") }?.code == .permissionDenied)
        #expect(expectAppCacheError { try cache.removeUser("alice") }?.code == .permissionDenied)
        #expect(fixture.allFiles() == before)
        #expect(try cache.getCachedItems(MenuItem.self, forKey: "lunch") == menu)
    }

    // Looks at archive files: each collection a file of its own.
    @Test func aDirtyCollectionStaysInMemoryAndAFlushThrows() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try readOnlyCache(fixture, menu: MenuItem.sampleMenu(count: 4), memory: .layer())
        let dinner = MenuItem.sampleMenu(count: 3, seed: 9)
        try cache.cacheItems(dinner, forKey: "dinner")

        #expect(expectAppCacheError { try cache.flush() }?.code == .permissionDenied)
        #expect(try cache.getCachedItems(MenuItem.self, forKey: "dinner") == dinner)
        #expect(cache.memoryStatistics.dirtyEntries == 1)
        #expect(!fixture.archiveExists(MenuItem.self, key: "dinner"))
    }

    // Looks at archive files: each collection a file of its own.
    @Test func anotherSchemaVersionThereCannotBeWipedSoTheCacheDoesNotOpen() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        try fixture.openCache(schemaVersion: "1").cacheItems(MenuItem.sampleMenu(count: 2))
        let configuration = fixture.configuration(
            schemaVersion: "2", faults: { step, _ in step == .rename || step == .makeDirectory || step == .openLockFile ? EROFS : nil })
        let error = expectAppCacheError { _ = try AppCache(configuration: configuration) }
        #expect(error?.code == .versionWipeFailed || error?.code == .permissionDenied)
        #expect(fixture.archiveExists(MenuItem.self))
    }

    /// The real thing, where the machine allows it: a tmpfs remounted read-only.
    @Test(.enabled(if: ReadOnlyMount.isPossible))
    func aReadOnlyVolumeServesItsArchives() throws {
        let mount = try ReadOnlyMount()
        defer { mount.remove() }
        var configuration = AppCache.Configuration(rootDirectory: mount.url, schemaVersion: "1", user: "alice")
        configuration.writeBackDelay = .zero
        let menu = MenuItem.sampleMenu(count: 3)
        try AppCache(configuration: configuration).cacheItems(menu)
        try mount.makeReadOnly()

        let reports = Locked<[AppCacheError]>([])
        configuration.diagnostics = { problem in reports.withLock { $0.append(problem) } }
        let cache = try AppCache(configuration: configuration)
        #expect(try cache.getCachedItems(MenuItem.self) == menu)
        #expect(expectAppCacheError { try cache.cacheItems(menu, forKey: "other") }?.code == .permissionDenied)
        #expect(reports.withLock { $0.map(\.code) } == [.permissionDenied])
    }
}

/// A tmpfs mounted for one test (needs root and a kernel that allows it).
struct ReadOnlyMount {
    let url: URL

    static var isPossible: Bool {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/bin/mount") else { return false }
        guard let probe = try? ReadOnlyMount() else { return false }
        probe.remove()
        return true
    }

    init() throws {
        url = FileManager.default.temporaryDirectory.appending(path: "appcache-ro-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Self.run(["-t", "tmpfs", "-o", "size=4m", "tmpfs", url.path])
    }

    func makeReadOnly() throws {
        try Self.run(["-o", "remount,ro", url.path])
    }

    func remove() {
        try? Self.run(["-l", url.path], tool: "/bin/umount")
        try? FileManager.default.removeItem(at: url)
    }

    private static func run(_ arguments: [String], tool: String = "/bin/mount") throws {
        let process = Process()
        process.executableURL = URL(filePath: tool)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.fileWriteNoPermission) }
    }
}
