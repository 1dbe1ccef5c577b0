import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

/// Values that come from outside the code (a build setting, remote configuration, a server's
/// user id) are checked where they enter, with codes of their own, never a trap; defaults are
/// safe for a first script.
struct ValidationTests {
    // Looks at archive files: each collection a file of its own.
    @Test(arguments: [
        ("schemaVersion", AppCacheError.Code.invalidConfiguration), ("memoryByteLimit", .invalidConfiguration),
        ("memoryEntryLimit", .invalidConfiguration), ("diskByteLimit", .invalidConfiguration),
        ("writeBackDelay", .invalidConfiguration), ("defaultStalenessThreshold", .invalidConfiguration),
        ("user", .invalidUser), ("longUser", .invalidUser),
    ])
    func badConfigurationValuesAreThrownFromInit(_ field: String, _ code: AppCacheError.Code) throws {
        let fixture = try Fixture(layout: .filePerCollection)
        var configuration = fixture.configuration()
        switch field {
        case "schemaVersion": configuration.schemaVersion = ""
        case "memoryByteLimit": configuration.memoryByteLimit = -1
        case "memoryEntryLimit": configuration.memoryEntryLimit = -5
        case "diskByteLimit": configuration.diskByteLimit = -1
        case "writeBackDelay": configuration.writeBackDelay = .seconds(-1)
        case "defaultStalenessThreshold": configuration.defaultStalenessThreshold = .seconds(-1)
        case "user": configuration.user = ""
        default: configuration.user = String(repeating: "u", count: ArchiveHeader.maximumNameLength + 1)
        }
        let error = expectAppCacheError { _ = try AppCache(configuration: configuration) }
        #expect(error?.code == code)
        #expect(error?.message.isEmpty == false)
        #expect(fixture.allFiles().isEmpty, "nothing was opened")
        #expect(!FileManager.default.fileExists(atPath: fixture.layout().versionPath))
    }

    @Test func anEmptyUserIdIsRefusedBySwitchUserAndTheUserStays() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try cache.cacheItems([Plain(value: 1)])
        #expect(expectAppCacheError { try cache.switchUser(to: "") }?.code == .invalidUser)
        #expect(cache.user == "alice")
        #expect(try cache.getCachedItems(Plain.self) == [Plain(value: 1)])
    }

    @Test func aKeyTooLongForAnArchiveIsRefused() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        let key = String(repeating: "k", count: ArchiveHeader.maximumNameLength + 1)
        #expect(expectAppCacheError { try cache.cacheItems([Plain(value: 1)], forKey: key) }?.code == .invalidKey)
        #expect(try cache.getCachedItems(Plain.self, forKey: key) == nil)
        #expect(cache.memoryStatistics.entries == 0)
    }

    /// A first script with the default configuration caches and exits: its items are on disk.
    @Test func theDefaultsFlushAtExit() throws {
        let configuration = AppCache.Configuration(schemaVersion: "1")
        #expect(configuration.flushesAtExit)
        #expect(configuration.writeBackDelay == .seconds(5))
    }

    // Fails archive files' creation: each collection a file of its own.
    /// A flush's error says what failed once, with the system's error as its cause (not the
    /// error of the first failed write, nested).
    @Test func aFlushErrorNamesItsCauseOnce() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache(
            memory: .layer(writeBackDelay: nil),
            faults: { step, path in step == .createFile && path.contains("/user-") ? ENOSPC : nil })
        try cache.cacheItems([Plain(value: 1)])
        let error = expectAppCacheError { try cache.flush() }
        #expect(error?.code == .noSpace)
        #expect(error?.underlyingError is SystemError)
        #expect(error.map { $0.description.components(separatedBy: "AppCacheError").count } == 2)
    }
}
