import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

struct ArchiveHeaderTests {
    static let sample = ArchiveHeader(
        codec: PayloadCodec.json.rawValue, schemaVersion: 3, expiryMilliseconds: 1_800_000_000_000,
        payloadLength: 42, payloadChecksum: 0xDEAD_BEEF, user: "Zoë", cacheName: "MenuItems", key: "restaurant-42")

    @Test func roundTrips() throws {
        for header in [Self.sample, ArchiveHeader(
            codec: 1, schemaVersion: -1, expiryMilliseconds: nil, payloadLength: 0, payloadChecksum: 0,
            user: nil, cacheName: "x", key: nil)] {
            let bytes = header.encoded()
            let parsed = try bytes.withUnsafeBytes { try ArchiveHeader.parse($0) }
            #expect(parsed.header == header)
            #expect(parsed.length == bytes.count)
        }
    }

    @Test func fixedFieldsSitAtTheirDocumentedOffsets() {
        let bytes = Self.sample.encoded()
        #expect(Array(bytes[0..<4]) == Array("ACA1".utf8))
        #expect(Array(bytes[4..<6]) == [1, 0])  // format version 1, little-endian
        #expect(Array(bytes[6..<8]) == [1, 0])  // codec 1: JSON
        #expect(Array(bytes[12..<20]) == [3, 0, 0, 0, 0, 0, 0, 0])
        #expect(Array(bytes[36..<40]) == [0xEF, 0xBE, 0xAD, 0xDE])
        #expect(Array(bytes[40..<44]) == [4, 0, 0, 0])  // "Zoë" is 4 UTF-8 bytes
        #expect(bytes.count == ArchiveHeader.fixedLength + 4 + 9 + 13 + 4)
    }

    @Test func everyTruncationIsDetected() {
        let bytes = Self.sample.encoded()
        for length in 0..<bytes.count {
            let prefix = Array(bytes[..<length])
            #expect(throws: ArchiveDefect.self) { try prefix.withUnsafeBytes { try ArchiveHeader.parse($0) } }
        }
    }

    @Test func everyBitFlipIsDetected() {
        let bytes = Self.sample.encoded()
        for index in bytes.indices {
            var flipped = bytes
            flipped[index] ^= 0x10
            #expect(throws: ArchiveDefect.self) { try flipped.withUnsafeBytes { try ArchiveHeader.parse($0) } }
        }
    }

    @Test func namesTheDefect() {
        func defect(_ bytes: [UInt8]) -> ArchiveDefect? {
            do {
                _ = try bytes.withUnsafeBytes { try ArchiveHeader.parse($0) }
                return nil
            } catch let defect as ArchiveDefect {
                return defect
            } catch {
                return nil
            }
        }
        #expect(defect([]) == .empty)
        #expect(defect(Array("GIF89a, not ours".utf8)) == .notAnArchive)
        var future = Self.sample.encoded()
        future[4] = 9
        #expect(defect(future) == .unsupportedFormat(9))
        var damaged = Self.sample.encoded()
        damaged[20] ^= 1
        #expect(defect(damaged) == .headerChecksumMismatch)
    }

    // MARK: - Golden archive

    static let fixtureURL = URL(filePath: #filePath).deletingLastPathComponent()
        .appending(path: "Fixtures/menu-items-v1.archive")

    /// The collection the golden archive holds.
    static let fixtureItems = MenuItem.sampleMenu(count: 3)

    /// An archive written by format version 1 must stay readable by every later build, and the
    /// writer must still produce the same header for the same collection.
    @Test func goldenArchiveStaysReadable() throws {
        let bytes = try Data(contentsOf: Self.fixtureURL)
        let key = ArchiveKey(user: "alice", cacheName: "MenuItems", key: "restaurant-42")
        let (header, payload) = try DiskStore.validate(bytes, for: key, schemaVersion: 1).get()
        #expect(header.formatVersion == 1)
        #expect(header.codec == PayloadCodec.json.rawValue)
        #expect(header.expiryMilliseconds == nil)
        #expect(header.flags == 0)
        #expect(try PayloadCodec.json.decode(MenuItem.self, from: payload) == Self.fixtureItems)

        let rewritten = ArchiveHeader(
            codec: 1, schemaVersion: 1, expiryMilliseconds: nil, payloadLength: UInt64(payload.count),
            payloadChecksum: CRC32.checksum(payload), user: "alice", cacheName: "MenuItems", key: "restaurant-42")
        #expect(Array(bytes.prefix(rewritten.encoded().count)) == rewritten.encoded())
    }

    /// The golden archive, placed where the layout puts it, is served by the facade.
    @Test func goldenArchiveIsServedByTheCache() throws {
        let fixture = try Fixture()
        let path = fixture.archivePath(MenuItem.self, key: "restaurant-42")
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.fixtureURL.path(percentEncoded: false), toPath: path)
        let cache = try fixture.openCache()
        #expect(try cache.getCachedItems(MenuItem.self, forKey: "restaurant-42") == Self.fixtureItems)
        #expect(fixture.diagnostics.errors.isEmpty)
    }

    /// Writes the golden archive anew. Runs only when asked, as
    /// `APPCACHE_WRITE_FIXTURES=1 swift test --filter writeGoldenArchive`, after a deliberate
    /// format change (which also needs a new format version).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["APPCACHE_WRITE_FIXTURES"] == "1"))
    func writeGoldenArchive() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        try cache.cacheItems(Self.fixtureItems, forKey: "restaurant-42")
        let written = try Data(contentsOf: URL(filePath: fixture.archivePath(MenuItem.self, key: "restaurant-42")))
        try written.write(to: Self.fixtureURL)
    }
}
