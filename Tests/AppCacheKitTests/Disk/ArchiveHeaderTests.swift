import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

struct ArchiveHeaderTests {
    static let sample = ArchiveHeader(
        codec: PayloadCodec.binary.headerValue, schemaVersion: 3, expiryMilliseconds: 1_800_000_000_000,
        thresholdMilliseconds: 600_000, decodedSize: 12_345,
        payloadLength: 42, payloadChecksum: 0xDEAD_BEEF, user: "Zoë", cacheName: "MenuItems", key: "restaurant-42")

    @Test func roundTrips() throws {
        var formatOne = Self.sample
        formatOne.formatVersion = 1
        formatOne.thresholdMilliseconds = nil
        formatOne.decodedSize = nil
        for header in [Self.sample, formatOne, ArchiveHeader(
            codec: 1, schemaVersion: -1, expiryMilliseconds: nil, decodedSize: 0, payloadLength: 0, payloadChecksum: 0,
            user: nil, cacheName: "x", key: nil)] {
            let bytes = header.encoded()
            let parsed = try bytes.withUnsafeBytes { try ArchiveHeader.parse($0) }
            #expect(parsed.header == header)
            #expect(parsed.length == bytes.count)
        }
    }

    // A batch sizes a pack's buffer and each record's prefix from `encodedLength` before it
    // encodes the header into the buffer: they must agree in every format.
    @Test func theEncodedLengthIsWhatEncodingAppendsInEveryFormat() throws {
        var formatOne = Self.sample
        formatOne.formatVersion = 1
        var withValidators = Self.sample
        withValidators.validators = CacheValidators(etag: "\"ä1\"", lastModified: "Sat, 28 Nov 2026 02:00:00 GMT")
        var withCursor = withValidators
        withCursor.nextPageCursor = "page-2 ✓"
        let signedOut = ArchiveHeader(
            codec: 1, schemaVersion: 0, expiryMilliseconds: nil, decodedSize: nil, payloadLength: 0, payloadChecksum: 0,
            user: nil, cacheName: "x", key: nil)
        for header in [Self.sample, formatOne, withValidators, withCursor, signedOut] {
            var buffer: [UInt8] = [0xAB, 0xCD]
            header.encode(into: &buffer)
            #expect(buffer.count == 2 + header.encodedLength, "format \(header.formatVersion)")
            #expect(Array(buffer.dropFirst(2)) == header.encoded(), "the same bytes in place as alone, the checksum over the header only")
            let parsed = try buffer.withUnsafeBytes { try ArchiveHeader.parse(UnsafeRawBufferPointer(rebasing: $0[2...])) }
            #expect(parsed.length == header.encodedLength)
        }
    }

    @Test func validatorsMakeAFormatThreeHeaderThatRoundTrips() throws {
        var header = Self.sample
        header.validators = CacheValidators(etag: "\"ä1\"", lastModified: nil)
        #expect(header.formatVersion == 3)
        let bytes = header.encoded()
        #expect(Array(bytes[4..<6]) == [3, 0])
        #expect(Array(bytes[68..<72]) == [5, 0, 0, 0], "the ETag's length: 5 UTF-8 bytes")
        #expect(Array(bytes[72..<76]) == [0xFF, 0xFF, 0xFF, 0xFF], "no Last-Modified")
        #expect(bytes.count == 76 + 4 + 9 + 13 + 5 + 4)
        let parsed = try bytes.withUnsafeBytes { try ArchiveHeader.parse($0) }
        #expect(parsed.header == header)
        #expect(parsed.header.validators == CacheValidators(etag: "\"ä1\""))
        #expect(try bytes.withUnsafeBytes { try ArchiveHeader.requiredLength(UnsafeRawBufferPointer(rebasing: $0[0..<80])) } == bytes.count)

        header.validators = nil
        #expect(header.formatVersion == 2, "no validators: the format every earlier build of format 2 wrote")
        #expect(header.encoded() == Self.sample.encoded())
    }

    @Test func aFormatThreeHeaderClaimingHugeValidatorsIsRefusedBeforeReading() {
        var header = Self.sample
        header.validators = CacheValidators(etag: "e", lastModified: "Tue, 24 Nov 2026 10:00:00 GMT")
        var bytes = header.encoded()
        bytes.replaceSubrange(72..<76, with: [0xFF, 0xFF, 0xFF, 0x7F])
        #expect(throws: ArchiveDefect.nameTooLong(0x7FFF_FFFF)) {
            try bytes.withUnsafeBytes { try ArchiveHeader.requiredLength($0) }
        }
    }

    /// The memory a header says its items take is believed only up to what the encoder could
    /// have claimed for its payload; past that (or at numbers whose bound overflows) it is no
    /// claim at all, and the read measures the items.
    static let decodedSizeClaims: [(payloadLength: UInt64, claim: UInt64, believed: Int?)] = [
        (100, 100 * 4096 + 65536, 100 * 4096 + 65536),
        (100, 100 * 4096 + 65537, nil),
        (0, 65536, 65536),
        (42, 12_345, 12_345),
        (UInt64.max / 4096, UInt64.max - 1, nil),
        (UInt64.max, UInt64.max, nil),
        ((1 << 51) + 1, 1 << 63, nil),  // within the bound, past Int.max
    ]

    @Test(arguments: decodedSizeClaims)
    func decodedSizeClaimsAreBelievedOnlyWithinWhatThePayloadAllows(payloadLength: UInt64, claim: UInt64, believed: Int?) {
        var header = Self.sample
        header.payloadLength = payloadLength
        header.decodedSize = claim
        #expect(header.plausibleDecodedSize == believed)
        header.decodedSize = nil
        #expect(header.plausibleDecodedSize == nil)
    }

    @Test func fixedFieldsSitAtTheirDocumentedOffsets() {
        let bytes = Self.sample.encoded()
        #expect(Array(bytes[0..<4]) == Array("ACA1".utf8))
        #expect(Array(bytes[4..<6]) == [2, 0])  // format version 2, little-endian
        #expect(Array(bytes[6..<8]) == [2, 0])  // codec 2: binary
        #expect(Array(bytes[12..<20]) == [3, 0, 0, 0, 0, 0, 0, 0])
        #expect(Array(bytes[28..<36]) == [0xC0, 0x27, 0x09, 0, 0, 0, 0, 0])  // 600,000 ms
        #expect(Array(bytes[36..<44]) == [0x39, 0x30, 0, 0, 0, 0, 0, 0])  // 12,345 bytes decoded
        #expect(Array(bytes[44..<52]) == [42, 0, 0, 0, 0, 0, 0, 0])
        #expect(Array(bytes[52..<56]) == [0xEF, 0xBE, 0xAD, 0xDE])
        #expect(Array(bytes[56..<60]) == [4, 0, 0, 0])  // "Zoë" is 4 UTF-8 bytes
        let expectedCount = ArchiveHeader.fixedLength(2) + 4 + 9 + 13 + 4
        #expect(bytes.count == expectedCount)
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

    // MARK: - Golden archives

    static let fixtures = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "Fixtures")
    /// Format version 1: JSON payload, written by the first release (read, never rewritten).
    static let version1URL = fixtures.appending(path: "menu-items-v1.archive")
    /// Format version 2: binary payload, the staleness threshold and decoded size recorded.
    static let version2URL = fixtures.appending(path: "menu-items-v2.archive")

    /// The collection the golden archives hold.
    static let fixtureItems = MenuItem.sampleMenu(count: 3)
    static let fixtureKey = ArchiveKey(user: "alice", cacheName: "MenuItems", key: "restaurant-42")

    /// An archive written by format version 1 must stay readable by every later build.
    @Test func version1ArchiveStaysReadable() throws {
        let bytes = try Data(contentsOf: Self.version1URL)
        let (header, payload) = try DiskStore.validate(bytes, for: Self.fixtureKey, versions: .only(1)).get()
        #expect(header.formatVersion == 1)
        #expect(header.codec == PayloadCodec.json.headerValue)
        #expect(header.expiryMilliseconds == nil && header.thresholdMilliseconds == nil && header.decodedSize == nil)
        #expect(header.flags == 0)
        #expect(try PayloadCodec.json.decode([MenuItem].self, from: payload) == Self.fixtureItems)

        let rewritten = ArchiveHeader(
            formatVersion: 1, codec: 1, schemaVersion: 1, expiryMilliseconds: nil, payloadLength: UInt64(payload.count),
            payloadChecksum: CRC32.checksum(payload), user: "alice", cacheName: "MenuItems", key: "restaurant-42")
        #expect(Array(bytes.prefix(rewritten.encoded().count)) == rewritten.encoded())
    }

    // Looks at archive files: each collection a file of its own.
    /// The current format, pinned: the golden archive reads back, and this build writes the very
    /// same bytes for the same collection (header and binary payload alike), so a change to
    /// either is deliberate (with a new format version) or a failing test.
    @Test func version2ArchiveIsWhatThisBuildWrites() throws {
        let bytes = try Data(contentsOf: Self.version2URL)
        let (header, payload) = try DiskStore.validate(bytes, for: Self.fixtureKey, versions: .only(1)).get()
        #expect(header.formatVersion == 2)
        #expect(header.codec == PayloadCodec.binary.headerValue)
        #expect(header.thresholdMilliseconds == 600_000)
        #expect((header.decodedSize ?? 0) > 0)
        #expect(try PayloadCodec.binary.decodeItems(MenuItem.self, from: payload) == Self.fixtureItems)

        let fixture = try Fixture(layout: .filePerCollection)
        try fixture.openCache().cacheItems(Self.fixtureItems, forKey: "restaurant-42")
        let written = try Data(contentsOf: URL(filePath: fixture.archivePath(MenuItem.self, key: "restaurant-42")))
        #expect(written == bytes)
    }

    // Looks at archive files: each collection a file of its own.
    /// The golden archives, placed where the layout puts them, are served by the facade.
    @Test(arguments: [version1URL, version2URL])
    func goldenArchiveIsServedByTheCache(_ url: URL) throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let path = fixture.archivePath(MenuItem.self, key: "restaurant-42")
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: url.path(percentEncoded: false), toPath: path)
        let cache = try fixture.openCache()
        #expect(try cache.getCachedItems(MenuItem.self, forKey: "restaurant-42") == Self.fixtureItems)
        #expect(fixture.diagnostics.errors.isEmpty)
    }

    // Looks at archive files: each collection a file of its own.
    /// Writes the current golden archive anew. Runs only when asked, as
    /// `APPCACHE_WRITE_FIXTURES=1 swift test --filter writeGoldenArchive`, after a deliberate
    /// format change (which also needs a new format version and a fixture of its own).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["APPCACHE_WRITE_FIXTURES"] == "1"))
    func writeGoldenArchive() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache()
        try cache.cacheItems(Self.fixtureItems, forKey: "restaurant-42")
        let written = try Data(contentsOf: URL(filePath: fixture.archivePath(MenuItem.self, key: "restaurant-42")))
        try written.write(to: Self.version2URL)
    }
}
