import Foundation

/// The self-describing header in front of every archive's payload.
///
/// Layout, all integers little-endian (format version 2, what this build writes for a collection
/// without HTTP validators):
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 4 | magic `ACA1` |
/// | 4 | 2 | format version |
/// | 6 | 2 | payload codec (``PayloadCodec``) |
/// | 8 | 4 | flags: bit 0 pinned; the others reserved, 0 |
/// | 12 | 8 | the model type's `schemaVersion` |
/// | 20 | 8 | expiry, milliseconds since 1970 (`Int64.min`: none) |
/// | 28 | 8 | the staleness threshold it was written with, milliseconds (`Int64.min`: none) |
/// | 36 | 8 | the memory its items take decoded, estimated, in bytes |
/// | 44 | 8 | payload length |
/// | 52 | 4 | payload CRC-32 |
/// | 56 | 4 | user id length (`0xFFFFFFFF`: signed out) |
/// | 60 | 4 | cache name length |
/// | 64 | 4 | key length (`0xFFFFFFFF`: the type's default collection) |
/// | 68 | n | user id, cache name and key, UTF-8 |
/// | 68 + n | 4 | CRC-32 of all header bytes before it |
///
/// Format version 3, what this build writes for a collection stored with HTTP validators
/// (``CacheValidators``), is format 2 with two more lengths before the names: the ETag's at 68
/// and the `Last-Modified` value's at 72 (`0xFFFFFFFF`: none), the names at 76, and the two
/// values, UTF-8, after the key.
///
/// Format version 4, for a collection stored with the cursor of its next page (see
/// ``AppCache/loadNextPage(_:forKey:maxCount:retry:fetch:)``), is format 3 with the cursor's
/// length at 76, the names at 80, and the cursor, UTF-8, after the validators.
///
/// Format version 1 (still read) lacks the threshold and the decoded size: its payload length
/// is at 28, its CRC at 36, its name lengths at 40, its names at 52.
///
/// The names make every archive readable by a tool without knowing how file names were derived,
/// and let a read refuse a file that belongs to another collection.
struct ArchiveHeader: Equatable, Sendable {
    static let magic: [UInt8] = Array("ACA1".utf8)
    static let currentFormatVersion: UInt16 = 2
    /// The format of an archive that holds validators.
    static let validatorsFormatVersion: UInt16 = 3
    /// The format of an archive that holds a next page's cursor.
    static let cursorFormatVersion: UInt16 = 4

    var formatVersion: UInt16 = currentFormatVersion
    var codec: UInt16
    var flags: UInt32 = 0
    var schemaVersion: Int64
    /// Milliseconds since 1970 after which the items must not be returned; `nil` for none.
    var expiryMilliseconds: Int64?
    /// The staleness threshold of the collection's type when it was written, in milliseconds;
    /// `nil` when not recorded (format 1).
    var thresholdMilliseconds: Int64?
    /// The estimated memory the items take decoded; `nil` when not recorded (format 1).
    var decodedSize: UInt64?
    var payloadLength: UInt64
    var payloadChecksum: UInt32
    var user: String?
    var cacheName: String
    var key: String?
    /// The collection's HTTP validators (format 3); `nil` when it has none.
    var etag: String?
    var lastModified: String?
    /// The cursor of the collection's next page (format 4); `nil` when it has none.
    var cursor: String?

    /// The longest user id, cache name or key a header may hold, in UTF-8 bytes. A header
    /// claiming more is damage: reading it can never cost more than a few hundred kilobytes.
    static let maximumNameLength = 64 * 1024

    /// The flag bit of a pinned collection.
    static let pinnedFlag: UInt32 = 1

    /// Where the fields after the expiry are, by format version.
    private struct Offsets {
        var payloadLength: Int
        var names: Int

        var payloadChecksum: Int { payloadLength + 8 }
        var userLength: Int { payloadLength + 12 }
        /// Where the validators' lengths are (formats 3 and 4), just before the names.
        var validatorLengths: Int? { names >= 76 ? 68 : nil }
        /// Where the cursor's length is (format 4).
        var cursorLength: Int? { names >= 80 ? 76 : nil }

        static func of(_ version: UInt16) -> Offsets {
            switch version {
            case 1: Offsets(payloadLength: 28, names: 52)
            case 2: Offsets(payloadLength: 44, names: 68)
            case 3: Offsets(payloadLength: 44, names: 76)
            default: Offsets(payloadLength: 44, names: 80)
            }
        }
    }

    /// The length of the fixed part in `version`.
    static func fixedLength(_ version: UInt16) -> Int {
        Offsets.of(version).names
    }

    /// The expiry moment as a date.
    var expiry: Date? {
        get { expiryMilliseconds.map { Date(timeIntervalSince1970: Double($0) / 1000) } }
        set { expiryMilliseconds = newValue.map { Milliseconds.limit(seconds: $0.timeIntervalSince1970) } }
    }

    /// The staleness threshold the collection was written with.
    var stalenessThreshold: Duration? {
        get { thresholdMilliseconds.map { .milliseconds($0) } }
        set { thresholdMilliseconds = newValue.map { Milliseconds.limit(seconds: $0.timeInterval) } }
    }

    /// ``decodedSize`` when it is a claim the encoder could have made for ``payloadLength``
    /// bytes of payload; `nil` when there is none or it claims more (damage, or a hostile file),
    /// so that a read measures the items rather than believe it.
    ///
    /// The encoder's estimates stay far below the bound: what grows fastest per payload byte
    /// is an array of `nil`s of a wide type, one byte each against the element's stride.
    var plausibleDecodedSize: Int? {
        guard let decodedSize else { return nil }
        let (perByte, overflow) = payloadLength.multipliedReportingOverflow(by: Self.maximumDecodedBytesPerPayloadByte)
        let (bound, overflowAgain) = perByte.addingReportingOverflow(Self.decodedSizeAllowance)
        guard !overflow, !overflowAgain, decodedSize <= bound else { return nil }
        return Int(exactly: decodedSize)
    }

    /// How much memory one payload byte may claim its items take decoded.
    static let maximumDecodedBytesPerPayloadByte: UInt64 = 4096
    /// What any payload may claim besides (a small collection's array and fixed costs).
    static let decodedSizeAllowance: UInt64 = 64 * 1024

    /// Whether the collection is pinned.
    var isPinned: Bool {
        get { flags & Self.pinnedFlag != 0 }
        set { flags = newValue ? flags | Self.pinnedFlag : flags & ~Self.pinnedFlag }
    }

    /// The header's validators; setting them picks the format version that holds them.
    var validators: CacheValidators? {
        get { etag == nil && lastModified == nil ? nil : CacheValidators(etag: etag, lastModified: lastModified) }
        set {
            (etag, lastModified) = (newValue?.etag, newValue?.lastModified)
            pickFormatVersion()
        }
    }

    /// The cursor of the next page; setting it picks the format version that holds it.
    var nextPageCursor: String? {
        get { cursor }
        set {
            cursor = newValue
            pickFormatVersion()
        }
    }

    /// The oldest format version since 2 that holds what the header has.
    private mutating func pickFormatVersion() {
        guard formatVersion >= Self.currentFormatVersion else { return }
        formatVersion = cursor != nil ? Self.cursorFormatVersion
            : etag == nil && lastModified == nil ? Self.currentFormatVersion : Self.validatorsFormatVersion
    }

    /// The header's bytes, checksum included, in its format version.
    func encoded() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(encodedLength)
        encode(into: &out)
        return out
    }

    /// Calls `body` with each string the header holds after its fixed part, in their order,
    /// by format version: the user id, cache name and key, the validators (3 and 4), the cursor
    /// (4). `nil` for one that is absent.
    private func forEachName(_ body: (String?) -> Void) {
        body(user)
        body(cacheName)
        body(key)
        if formatVersion >= 3 {
            body(etag)
            body(lastModified)
        }
        if formatVersion >= 4 { body(cursor) }
    }

    /// How many bytes ``encode(into:)`` appends.
    var encodedLength: Int {
        var length = Self.fixedLength(formatVersion) + 4
        forEachName { length += $0?.utf8.count ?? 0 }
        return length
    }

    /// Appends the header's bytes, checksum included, to `out`: in place, where a pack's
    /// records are gathered for one `write`, with no array of its own.
    ///
    /// - Complexity: O(n) in the header's length.
    func encode(into out: inout [UInt8]) {
        let start = out.count
        // The fixed fields in one growth of `out`, ending with the lengths of the names its
        // format version holds; then the names themselves.
        out.appendFields(count: Self.fixedLength(formatVersion)) { fields in
            fields.put(bytes: Self.magic)
            fields.put(formatVersion)
            fields.put(codec)
            fields.put(flags)
            fields.put(schemaVersion)
            fields.put(expiryMilliseconds ?? Int64.min)
            if formatVersion >= 2 {
                fields.put(thresholdMilliseconds ?? Int64.min)
                fields.put(decodedSize ?? 0)
            }
            fields.put(payloadLength)
            fields.put(payloadChecksum)
            forEachName { value in fields.put(value.map { UInt32($0.utf8.count) } ?? UInt32.max) }
        }
        forEachName { value in
            if let value { out.append(contentsOf: value.utf8) }
        }
        let checksum = out.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[start...])) }
        out.appendLittleEndian(checksum)
    }

    /// Reads a header from the start of `bytes`.
    ///
    /// - Returns: the header and its length in bytes (where the payload starts).
    /// - Throws: ``ArchiveDefect`` when the bytes are not a complete, intact header of a known
    ///   format version.
    ///
    /// - Parameter expected: the collection the reader looks for, if it knows: names equal to
    ///   its own are taken from it rather than made again (a disk hit then allocates no string).
    static func parse(_ bytes: UnsafeRawBufferPointer, expecting expected: ArchiveKey? = nil) throws(ArchiveDefect) -> (header: ArchiveHeader, length: Int) {
        let length = try requiredLength(bytes)
        guard bytes.count >= length else { throw .truncated }
        let formatVersion: UInt16 = bytes.readLittleEndian(at: 4)
        let offsets = Offsets.of(formatVersion)
        let userLength: UInt32 = bytes.readLittleEndian(at: offsets.userLength)
        let nameLength: UInt32 = bytes.readLittleEndian(at: offsets.userLength + 4)
        let keyLength: UInt32 = bytes.readLittleEndian(at: offsets.userLength + 8)
        let checksumOffset = length - 4
        let storedChecksum: UInt32 = bytes.readLittleEndian(at: checksumOffset)
        guard CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<checksumOffset])) == storedChecksum else {
            throw .headerChecksumMismatch
        }

        var offset = offsets.names
        func string(_ count: UInt32, _ expected: String?) throws(ArchiveDefect) -> String? {
            guard count != UInt32.max else { return nil }
            let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + Int(truncatingIfNeeded: count))])
            offset += Int(truncatingIfNeeded: count)
            if let expected, Self.spells(expected, slice) { return expected }
            guard let value = UTF8Text.string(validating: slice) else { throw .notAnArchive }
            return value
        }
        let user = try string(userLength, expected?.user)
        guard let cacheName = try string(nameLength, expected?.cacheName) else { throw .notAnArchive }
        let key = try string(keyLength, expected?.key)
        var etag: String?
        var lastModified: String?
        if let validatorLengths = offsets.validatorLengths {
            etag = try string(bytes.readLittleEndian(at: validatorLengths), nil)
            lastModified = try string(bytes.readLittleEndian(at: validatorLengths + 4), nil)
        }
        var cursor: String?
        if let cursorLength = offsets.cursorLength {
            cursor = try string(bytes.readLittleEndian(at: cursorLength), nil)
        }
        let expiry: Int64 = bytes.readLittleEndian(at: 20)
        var threshold: Int64?
        var decodedSize: UInt64?
        if formatVersion >= 2 {
            let storedThreshold: Int64 = bytes.readLittleEndian(at: 28)
            threshold = storedThreshold == Int64.min ? nil : storedThreshold
            decodedSize = bytes.readLittleEndian(at: 36)
        }
        let header = ArchiveHeader(
            formatVersion: formatVersion,
            codec: bytes.readLittleEndian(at: 6),
            flags: bytes.readLittleEndian(at: 8),
            schemaVersion: bytes.readLittleEndian(at: 12),
            expiryMilliseconds: expiry == Int64.min ? nil : expiry,
            thresholdMilliseconds: threshold,
            decodedSize: decodedSize,
            payloadLength: bytes.readLittleEndian(at: offsets.payloadLength),
            payloadChecksum: bytes.readLittleEndian(at: offsets.payloadChecksum),
            user: user,
            cacheName: cacheName,
            key: key,
            etag: etag,
            lastModified: lastModified,
            cursor: cursor
        )
        return (header, length)
    }

    /// The length of the whole header that starts `prefix`, read from its fixed part alone, so
    /// that a reader knows how much more to read before trusting any of it.
    ///
    /// - Throws: ``ArchiveDefect`` when the prefix is not the start of a header of a known
    ///   format version, or claims names longer than ``maximumNameLength``; `.truncated` when
    ///   the prefix is shorter than the fixed part.
    static func requiredLength(_ prefix: UnsafeRawBufferPointer) throws(ArchiveDefect) -> Int {
        if prefix.isEmpty { throw .empty }
        guard prefix.count >= 6 else {
            throw prefix.elementsEqual(magic.prefix(prefix.count)) ? .truncated : .notAnArchive
        }
        guard prefix[0] == magic[0], prefix[1] == magic[1], prefix[2] == magic[2], prefix[3] == magic[3] else { throw .notAnArchive }
        let formatVersion: UInt16 = prefix.readLittleEndian(at: 4)
        guard (1...4).contains(formatVersion) else { throw .unsupportedFormat(formatVersion) }
        let offsets = Offsets.of(formatVersion)
        guard prefix.count >= offsets.names else { throw .truncated }
        func nameLength(at offset: Int, optional: Bool) throws(ArchiveDefect) -> Int {
            let value: UInt32 = prefix.readLittleEndian(at: offset)
            if optional && value == UInt32.max { return 0 }
            guard value <= UInt32(maximumNameLength) else { throw .nameTooLong(value) }
            return Int(value)
        }
        var namesLength = try nameLength(at: offsets.userLength, optional: true) + nameLength(at: offsets.userLength + 4, optional: false)
            + nameLength(at: offsets.userLength + 8, optional: true)
        if let validatorLengths = offsets.validatorLengths {
            namesLength += try nameLength(at: validatorLengths, optional: true) + nameLength(at: validatorLengths + 4, optional: true)
        }
        if let cursorLength = offsets.cursorLength {
            namesLength += try nameLength(at: cursorLength, optional: true)
        }
        return offsets.names + namesLength + 4
    }

    /// Whether `bytes` are exactly `text`'s UTF-8.
    static func spells(_ text: String, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let utf8 = text.utf8
        guard utf8.count == bytes.count else { return false }
        return utf8.withContiguousStorageIfAvailable { stored in
            bytes.isEmpty || memcmp(stored.baseAddress!, bytes.baseAddress!, bytes.count) == 0
        } ?? utf8.elementsEqual(bytes)
    }
}

/// Why a file is not a readable archive.
enum ArchiveDefect: Error, Equatable, CustomStringConvertible {
    case empty
    case truncated
    case notAnArchive
    case unsupportedFormat(UInt16)
    case headerChecksumMismatch
    case payloadLengthMismatch(expected: UInt64, found: Int)
    case payloadChecksumMismatch
    case nameTooLong(UInt32)

    var description: String {
        switch self {
        case .empty: "the file is empty"
        case .truncated: "the file ends inside its header"
        case .notAnArchive: "the file is not an AppCache archive"
        case .unsupportedFormat(let version): "the archive has format version \(version), which this build cannot read"
        case .headerChecksumMismatch: "the archive header fails its checksum"
        case .payloadLengthMismatch(let expected, let found):
            "the header promises \(expected) payload bytes but the file holds \(found)"
        case .payloadChecksumMismatch: "the payload fails its checksum"
        case .nameTooLong(let length): "the header claims a name of \(length) bytes, more than an archive may hold"
        }
    }
}
