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
struct ErrorTests {
    /// Opens a cache whose file system fails `operation` with `errorNumber` while `armed`.
    private func cacheWithFault(
        _ fixture: Fixture, _ operation: FileSystem.Operation, _ errorNumber: Int32, armed: Locked<Bool>
    ) throws -> AppCache {
        try fixture.openCache(faults: { step, _ in step == operation && armed.withLock { $0 } ? errorNumber : nil })
    }

    // Looks at archive files: each collection a file of its own.
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
        let fixture = try Fixture(layout: .filePerCollection)
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

    // Looks at archive files: each collection a file of its own.
    /// A root where no directory can be made fails `init`, with the cause named once, rather
    /// than a flush much later.
    @Test func anUnwritableRootFailsTheOpen() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        var configuration = fixture.configuration(faults: { step, _ in step == .makeDirectory ? EACCES : nil })
        configuration.rootDirectory = fixture.root.appending(path: "new-root")
        let error = expectAppCacheError { _ = try AppCache(configuration: configuration) }
        #expect(error?.code == .permissionDenied)
        #expect(error?.path?.hasSuffix("new-root") == true)
        #expect((error?.underlyingError as? SystemError)?.errorNumber == EACCES)
        #expect(error.map { $0.description.components(separatedBy: "cannot be created").count } == 2, "the cause is named once")
        #expect(fixture.allFiles().isEmpty)
    }

    // Looks at archive files: each collection a file of its own.
    /// A user directory that cannot be made fails the write that needs it, with a clear code.
    @Test func anUnwritableUserDirectoryFailsTheWrite() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache(faults: { step, path in step == .makeDirectory && path.hasSuffix("user-alice") ? EACCES : nil })
        #expect(try cache.getCachedItems(MenuItem.self) == nil)
        let error = expectAppCacheError { try cache.cacheItems(MenuItem.sampleMenu(count: 1)) }
        #expect(error?.code == .permissionDenied)
        #expect(fixture.allFiles().isEmpty)
    }

    /// JSON cannot hold a NaN: such items fail to cache, with either codec (the binary codec
    /// refuses what JSON refuses), and what was cached stays.
    @Test(arguments: PayloadCodec.allCases)
    func unencodableItemsFailWithoutTouchingTheCache(_ codec: PayloadCodec) throws {
        let fixture = try Fixture()
        var configuration = fixture.configuration()
        configuration.payloadCodec = codec
        let cache = try AppCache(configuration: configuration)
        try cache.cacheItems([Measurement(value: 1.5)])
        for value in [Double.nan, .infinity] {
            let error = expectAppCacheError { try cache.cacheItems([Measurement(value: value)]) }
            #expect(error?.code == .encodingFailed)
            #expect(error?.underlyingError is EncodingError)
            #expect(error?.cacheName == "Measurements")
        }
        #expect(try cache.getCachedItems(Measurement.self) == [Measurement(value: 1.5)])
        #expect(try AppCache(configuration: configuration).getCachedItems(Measurement.self) == [Measurement(value: 1.5)])
    }

    /// A type whose `encode(to:)` throws fails to cache with either codec.
    @Test(arguments: PayloadCodec.allCases)
    func anEncodeThatThrowsFailsWithoutTouchingTheCache(_ codec: PayloadCodec) throws {
        struct Refusing: CacheableModel {
            var fail: Bool
            func encode(to encoder: any Encoder) throws {
                if fail { throw EncodingError.invalidValue(self, .init(codingPath: [], debugDescription: "no")) }
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(fail, forKey: .fail)
            }
        }
        let fixture = try Fixture()
        var configuration = fixture.configuration()
        configuration.payloadCodec = codec
        let cache = try AppCache(configuration: configuration)
        try cache.cacheItems([Refusing(fail: false)])
        let error = expectAppCacheError { try cache.cacheItems([Refusing(fail: true)]) }
        #expect(error?.code == .encodingFailed)
        #expect(error?.underlyingError is EncodingError)
        #expect(try cache.getCachedItems(Refusing.self)?.first?.fail == false)
    }

    // Looks at archive files: each collection a file of its own.
    @Test func readFailuresOtherThanAMissThrow() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache(faults: { step, _ in step == .read ? EACCES : nil })
        let error = expectAppCacheError { _ = try cache.getCachedItems(MenuItem.self) }
        #expect(error?.code == .permissionDenied)
        #expect(error?.path == fixture.archivePath(MenuItem.self))
    }

    // Fails an archive file's removal: each collection a file of its own.
    @Test func removeFailuresThrowAndKeepTheCollection() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let armed = Locked(false)
        let cache = try cacheWithFault(fixture, .remove, EIO, armed: armed)
        try cache.cacheItems([Plain(value: 1)])
        armed.withLock { $0 = true }
        #expect(expectAppCacheError { try cache.removeItems(Plain.self) }?.code == .ioFailure)
        armed.withLock { $0 = false }
        #expect(try cache.getCachedItems(Plain.self) == [Plain(value: 1)])
    }

    /// A removal whose directory cannot leave the disk yet is reported once, never read
    /// back, and carried out by a later batch.
    @Test func aRemovalThatCannotLeaveTheDiskIsHiddenReportedAndRetried() throws {
        let fixture = try Fixture()
        let armed = Locked(false)
        let cache = try cacheWithFault(fixture, .rename, EACCES, armed: armed)
        try cache.cacheItems([Plain(value: 1)])
        armed.withLock { $0 = true }
        try cache.removeAll()
        cache.store.waitForBackgroundWork()
        #expect(fixture.diagnostics.codes == [.permissionDenied])
        #expect(try cache.getCachedItems(Plain.self) == nil, "removed data is never read back")
        #expect(try cache.entries().isEmpty)
        #expect(fixture.diagnostics.codes == [.permissionDenied], "told once, though every batch retries")
        #expect(fixture.hasArchive(Plain.self))
        armed.withLock { $0 = false }
        try cache.cacheItems([Plain(value: 2)], forKey: "other")  // the next batch wipes first
        #expect(!fixture.hasArchive(Plain.self))
        #expect(try fixture.openCache().getCachedItems(Plain.self, forKey: "other") == [Plain(value: 2)])
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
