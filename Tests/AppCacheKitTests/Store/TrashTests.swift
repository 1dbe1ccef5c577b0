import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a wipe moved out of view and cannot delete right now never keeps the cache from
/// opening: it stays for a later open or `removeExpired()`.
struct TrashTests {
    /// Plants a wipe's leftover: a trash directory holding a user directory with a file.
    private func plantTrash(_ fixture: Fixture, name: String = ".wipe-leftover") throws -> String {
        let trash = fixture.rootPath + "/" + name
        try FileManager.default.createDirectory(atPath: trash + "/user-alice", withIntermediateDirectories: true)
        try Data("late write".utf8).write(to: URL(filePath: trash + "/user-alice/written-after-the-move"))
        return trash
    }

    @Test(arguments: [ENOTEMPTY, EACCES, EBUSY])
    func trashThatCannotBeDeletedIsReportedAndStays(errorNumber: Int32) throws {
        let fixture = try Fixture()
        try FileManager.default.createDirectory(atPath: fixture.rootPath, withIntermediateDirectories: true)
        let trash = try plantTrash(fixture)
        let cache = try fixture.openCache(faults: { step, path in step == .remove && path.contains(".wipe-") ? errorNumber : nil })

        try cache.cacheItems(MenuItem.sampleMenu(count: 2))
        #expect(try cache.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 2))
        #expect(FileManager.default.fileExists(atPath: trash))
        #expect(fixture.diagnostics.errors.contains { $0.message.contains("moved out of view but not all deleted") })
    }

    @Test func aLaterOpenDeletesIt() throws {
        let fixture = try Fixture()
        try FileManager.default.createDirectory(atPath: fixture.rootPath, withIntermediateDirectories: true)
        let trash = try plantTrash(fixture)
        _ = try fixture.openCache(faults: { step, path in step == .remove && path.contains(".wipe-") ? EBUSY : nil })
        _ = try fixture.openCache()
        #expect(!FileManager.default.fileExists(atPath: trash))
    }

    @Test func removeExpiredDeletesIt() throws {
        let fixture = try Fixture()
        let blocked = Locked(true)
        let cache = try fixture.openCache(faults: { step, path in
            step == .remove && path.contains(".wipe-") && blocked.withLock { $0 } ? EBUSY : nil
        })
        let trash = try plantTrash(fixture, name: ".wipe-later")
        try cache.removeExpired()
        #expect(FileManager.default.fileExists(atPath: trash))
        blocked.withLock { $0 = false }
        try cache.removeExpired()
        #expect(!FileManager.default.fileExists(atPath: trash))
    }

    @Test func anotherVersionsDirectoryIsWipedEvenIfItsTrashCannotBeDeleted() throws {
        let fixture = try Fixture()
        try fixture.openCache(schemaVersion: "1").cacheItems(MenuItem.sampleMenu(count: 2))
        let cache = try fixture.openCache(schemaVersion: "2", faults: { step, path in
            step == .remove && path.contains(".wipe-") ? ENOTEMPTY : nil
        })
        #expect(try cache.getCachedItems(MenuItem.self) == nil)
        #expect(!FileManager.default.fileExists(atPath: fixture.layout(schemaVersion: "1").versionPath))
    }
}
