import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

/// A damaged, foreign or undecodable archive is a miss: removed alone, reported, never a crash.
struct IntegrityTests {
    enum Damage: String, CaseIterable, Sendable {
        case empty, truncatedHeader, truncatedPayload, flippedPayloadBit, flippedHeaderBit, foreign, appendedBytes
    }

    // Looks at archive files: each collection a file of its own.
    @Test(arguments: Damage.allCases)
    func damagedArchiveIsAMissAndOnlyItIsRemoved(_ damage: Damage) throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache()
        try cache.cacheItems(MenuItem.sampleMenu(count: 20))
        try cache.cacheItems(MenuItem.sampleMenu(count: 5), forKey: "neighbour")
        let path = fixture.archivePath(MenuItem.self)
        var bytes = try Data(contentsOf: URL(filePath: path))
        switch damage {
        case .empty: bytes = Data()
        case .truncatedHeader: bytes = bytes.prefix(30)
        case .truncatedPayload: bytes = bytes.prefix(bytes.count - 100)
        case .flippedPayloadBit: bytes[bytes.count - 500] ^= 0x04
        case .flippedHeaderBit: bytes[14] ^= 0x01
        case .foreign: bytes = Data("\u{89}PNG\r\n\u{1a}\n not an archive at all".utf8)
        case .appendedBytes: bytes.append(contentsOf: [0, 1, 2])
        }
        try bytes.write(to: URL(filePath: path))

        #expect(try cache.getCachedItems(MenuItem.self) == nil)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(fixture.diagnostics.codes == [.corruptArchive])
        let report = try #require(fixture.diagnostics.errors.first)
        #expect(report.path == path)
        #expect(report.cacheName == "MenuItems")
        #expect(report.message.contains("removed"))
        // The neighbour is untouched, and the slot can be cached again.
        #expect(try cache.getCachedItems(MenuItem.self, forKey: "neighbour") == MenuItem.sampleMenu(count: 5))
        try cache.cacheItems(MenuItem.sampleMenu(count: 1))
        #expect(try cache.getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 1))
    }

    // Looks at archive files: each collection a file of its own.
    /// An archive of the type's current version that does not decode: the model was changed
    /// without a bump (see `UpgradeTests` for the whole story).
    @Test func undecodablePayloadIsAMissReportedAsModelMismatch() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache()
        // An intact archive under the right name whose payload is not a [Plain].
        let key = ArchiveKey(user: "alice", cacheName: "Plains", key: nil)
        try fixture.plant(
            ArchiveRecord(payload: Data(#"[{"unexpected":true}]"#.utf8), codec: 1, schemaVersion: 1, cachedDate: Date()),
            forKey: key)
        #expect(try cache.getCachedItems(Plain.self) == nil)
        #expect(fixture.diagnostics.codes == [.modelMismatch])
        #expect(fixture.diagnostics.errors.first?.underlyingError is DecodingError)
        #expect(!FileManager.default.fileExists(atPath: fixture.archivePath(Plain.self)))
    }

    // Plants an archive file: each collection a file of its own.
    @Test func unknownPayloadCodecIsAMiss() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache()
        try fixture.plant(
            ArchiveRecord(payload: Data("[]".utf8), codec: 77, schemaVersion: 1, cachedDate: Date()),
            forKey: ArchiveKey(user: "alice", cacheName: "Plains", key: nil))
        #expect(try cache.getCachedItems(Plain.self) == nil)
        #expect(fixture.diagnostics.codes == [.corruptArchive])
        #expect(fixture.diagnostics.errors.first?.message.contains("codec 77") == true)
    }

    // Looks at archive files: each collection a file of its own.
    /// A file copied or renamed onto another collection's name is not served as that collection.
    @Test func anArchiveUnderAnotherCollectionsNameIsAMiss() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache()
        try cache.cacheItems([Plain(value: 1)], forKey: "a")
        try FileManager.default.copyItem(
            atPath: fixture.archivePath(Plain.self, key: "a"), toPath: fixture.archivePath(Plain.self, key: "b"))
        #expect(try cache.getCachedItems(Plain.self, forKey: "b") == nil)
        #expect(fixture.diagnostics.codes == [.corruptArchive])
        #expect(try cache.getCachedItems(Plain.self, forKey: "a") == [Plain(value: 1)])
    }

    // Looks at archive files: each collection a file of its own.
    /// Only regular files are read: a directory planted at an archive path is a miss, reported
    /// and cleared, and the collection can be cached there again.
    @Test func aDirectoryWhereAnArchiveShouldBeIsAMissNotACrash() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache()
        try FileManager.default.createDirectory(atPath: fixture.archivePath(Plain.self) + "/inside", withIntermediateDirectories: true)
        #expect(try cache.getCachedItems(Plain.self) == nil)
        #expect(fixture.diagnostics.codes == [.corruptArchive])
        #expect(fixture.diagnostics.errors.first?.message.contains("directory") == true)
        try cache.cacheItems([Plain(value: 2)])
        #expect(try fixture.openCache().getCachedItems(Plain.self) == [Plain(value: 2)])
    }

    // Plants temporary files beside archive files: each collection a file of its own.
    @Test func temporaryFilesAreNeverReadAsArchives() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache()
        try cache.cacheItems([Plain(value: 1)])
        // A temporary file left by a crash sits beside the archive and changes nothing.
        let directory = fixture.layout().userPath("alice")
        try Data("partial".utf8).write(to: URL(filePath: directory + "/.tmp-deadbeef"))
        #expect(try cache.getCachedItems(Plain.self) == [Plain(value: 1)])
        #expect(fixture.diagnostics.errors.isEmpty)
    }
}
