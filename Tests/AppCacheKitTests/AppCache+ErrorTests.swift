import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Failures give clear errors, leave no temporary files and never destroy what was cached.
struct AppCacheErrorTests {
    /// Opens a cache whose file system fails `operation` with `errorNumber` while `armed`.
    private func cacheWithFault(
        _ fixture: Fixture, _ operation: FileSystem.Operation, _ errorNumber: Int32, armed: Locked<Bool>
    ) throws -> AppCache {
        try fixture.openCache(faults: { step, _ in step == operation && armed.withLock { $0 } ? errorNumber : nil })
    }

    @Test(arguments: [
        (FileSystem.Operation.write, ENOSPC, AppCacheError.Code.noSpace),
        (FileSystem.Operation.write, EDQUOT, AppCacheError.Code.noSpace),
        (FileSystem.Operation.createFile, EACCES, AppCacheError.Code.permissionDenied),
        (FileSystem.Operation.createFile, EROFS, AppCacheError.Code.permissionDenied),
        (FileSystem.Operation.rename, EIO, AppCacheError.Code.ioFailure),
    ])
    func writeFailuresKeepThePreviousCollection(
        operation: FileSystem.Operation, errorNumber: Int32, code: AppCacheError.Code
    ) throws {
        let fixture = try Fixture()
        let armed = Locked(false)
        let cache = try cacheWithFault(fixture, operation, errorNumber, armed: armed)
        try cache.cacheItems(MenuItem.sampleMenu(count: 3))
        let before = fixture.allFiles()

        armed.withLock { $0 = true }
        let error = expectAppCacheError { try cache.cacheItems(MenuItem.sampleMenu(count: 9, seed: 1)) }
        #expect(error?.code == code)
        #expect(error?.cacheName == "MenuItems")
        #expect(error?.path?.contains("version-1/user-alice/") == true)
        #expect((error?.underlyingError as? SystemError)?.errorNumber == errorNumber)
        #expect(error?.message.contains("unchanged") == true)

        armed.withLock { $0 = false }
        #expect(fixture.allFiles() == before, "no temporary file is left behind")
        #expect(try cache.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 3))
    }

    @Test func aFileWhereTheUserDirectoryShouldBeIsAClearError() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try FileManager.default.createDirectory(atPath: fixture.rootPath + "/version-1", withIntermediateDirectories: true)
        try Data("in the way".utf8).write(to: fixture.root.appending(path: "version-1/user-alice"))
        let error = expectAppCacheError { try cache.cacheItems(MenuItem.sampleMenu(count: 1)) }
        #expect(error?.code == .notADirectory)
        #expect(error?.path?.hasSuffix("version-1/user-alice") == true)
        #expect(try String(contentsOfFile: fixture.rootPath + "/version-1/user-alice", encoding: .utf8) == "in the way")
        #expect(try cache.getCachedItems(MenuItem.self) == nil)
    }

    @Test func aFileAsTheRootIsAClearErrorFromInit() throws {
        let fixture = try Fixture()
        let file = fixture.root.appending(path: "root-file")
        try Data("x".utf8).write(to: file)
        var configuration = fixture.configuration()
        configuration.rootDirectory = file
        let error = expectAppCacheError { _ = try AppCache(configuration: configuration) }
        #expect(error?.code == .notADirectory)
        #expect(error?.path == file.path(percentEncoded: false))
    }

    @Test func anUnwritableRootFailsTheWriteNotTheOpen() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(faults: { step, _ in step == .makeDirectory ? EACCES : nil })
        #expect(try cache.getCachedItems(MenuItem.self) == nil)
        let error = expectAppCacheError { try cache.cacheItems(MenuItem.sampleMenu(count: 1)) }
        #expect(error?.code == .permissionDenied)
        #expect(fixture.allFiles().isEmpty)
    }

    @Test func unencodableItemsFailWithoutTouchingTheCache() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try cache.cacheItems([Measurement(value: 1.5)])
        let error = expectAppCacheError { try cache.cacheItems([Measurement(value: .nan)]) }
        #expect(error?.code == .encodingFailed)
        #expect(error?.underlyingError is EncodingError)
        #expect(error?.cacheName == "Measurements")
        #expect(try cache.getCachedItems(Measurement.self) == [Measurement(value: 1.5)])
    }

    @Test func readFailuresOtherThanAMissThrow() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(faults: { step, _ in step == .read ? EACCES : nil })
        let error = expectAppCacheError { _ = try cache.getCachedItems(MenuItem.self) }
        #expect(error?.code == .permissionDenied)
        #expect(error?.path == fixture.archivePath(MenuItem.self))
    }

    @Test func removeFailuresThrowAndKeepTheCollection() throws {
        let fixture = try Fixture()
        let armed = Locked(false)
        let cache = try cacheWithFault(fixture, .remove, EIO, armed: armed)
        try cache.cacheItems([Plain(value: 1)])
        armed.withLock { $0 = true }
        #expect(expectAppCacheError { try cache.removeItems(Plain.self) }?.code == .ioFailure)
        armed.withLock { $0 = false }
        #expect(try cache.getCachedItems(Plain.self) == [Plain(value: 1)])
    }

    @Test func removeAllThatCannotStartKeepsEverything() throws {
        let fixture = try Fixture()
        let armed = Locked(false)
        let cache = try cacheWithFault(fixture, .rename, EACCES, armed: armed)
        try cache.cacheItems([Plain(value: 1)])
        armed.withLock { $0 = true }
        #expect(expectAppCacheError { try cache.removeAll() }?.code == .permissionDenied)
        armed.withLock { $0 = false }
        #expect(try cache.getCachedItems(Plain.self) == [Plain(value: 1)])
    }

    @Test func errorsDescribeThemselves() {
        let error = AppCacheError(
            code: .noSpace, message: "Disk full.", cacheName: "MenuItems", key: "k", path: "/p",
            underlyingError: SystemError(operation: "write", errorNumber: ENOSPC, path: "/p"))
        #expect(error.description.hasPrefix("AppCacheError.noSpace: Disk full."))
        #expect(error.description.contains("[key: k]"))
        #expect(error.description.contains("[path: /p]"))
        #expect(error.description.contains("No space left on device"))
    }
}
