import Foundation

/// The self-describing header in front of every archive's payload.
///
/// Layout, all integers little-endian (format version 1):
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 4 | magic `ACA1` |
/// | 4 | 2 | format version |
/// | 6 | 2 | payload codec (``PayloadCodec``) |
/// | 8 | 4 | flags: bit 0 pinned; the others reserved, 0 |
/// | 12 | 8 | the model type's `schemaVersion` |
/// | 20 | 8 | expiry, milliseconds since 1970 (`Int64.min`: none) |
/// | 28 | 8 | payload length |
/// | 36 | 4 | payload CRC-32 |
/// | 40 | 4 | user id length (`0xFFFFFFFF`: signed out) |
/// | 44 | 4 | cache name length |
/// | 48 | 4 | key length (`0xFFFFFFFF`: the type's default collection) |
/// | 52 | n | user id, cache name and key, UTF-8 |
/// | 52 + n | 4 | CRC-32 of all header bytes before it |
///
/// The names make every archive readable by a tool without knowing how file names were derived
/// (long names are hashed), and let a read refuse a file that belongs to another collection.
struct ArchiveHeader: Equatable, Sendable {
    static let magic: [UInt8] = Array("ACA1".utf8)
    static let currentFormatVersion: UInt16 = 1
    static let fixedLength = 52

    var formatVersion: UInt16 = currentFormatVersion
    var codec: UInt16
    var flags: UInt32 = 0
    var schemaVersion: Int64
    /// Milliseconds since 1970 after which the items must not be returned; `nil` for none.
    var expiryMilliseconds: Int64?
    var payloadLength: UInt64
    var payloadChecksum: UInt32
    var user: String?
    var cacheName: String
    var key: String?

    /// The flag bit of a pinned collection.
    static let pinnedFlag: UInt32 = 1

    /// The expiry moment as a date.
    var expiry: Date? {
        get { expiryMilliseconds.map { Date(timeIntervalSince1970: Double($0) / 1000) } }
        set {
            expiryMilliseconds = newValue.map { date in
                let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.up)
                return milliseconds >= Double(Int64.max) ? Int64.max - 1 : Int64(max(milliseconds, Double(Int64.min + 1)))
            }
        }
    }

    /// Whether the collection is pinned.
    var isPinned: Bool {
        get { flags & Self.pinnedFlag != 0 }
        set { flags = newValue ? flags | Self.pinnedFlag : flags & ~Self.pinnedFlag }
    }

    /// The header's bytes, checksum included.
    func encoded() -> [UInt8] {
        let userBytes = user.map { Array($0.utf8) }
        let nameBytes = Array(cacheName.utf8)
        let keyBytes = key.map { Array($0.utf8) }
        var out = [UInt8]()
        out.reserveCapacity(Self.fixedLength + (userBytes?.count ?? 0) + nameBytes.count + (keyBytes?.count ?? 0) + 4)
        out.append(contentsOf: Self.magic)
        out.appendLittleEndian(formatVersion)
        out.appendLittleEndian(codec)
        out.appendLittleEndian(flags)
        out.appendLittleEndian(schemaVersion)
        out.appendLittleEndian(expiryMilliseconds ?? Int64.min)
        out.appendLittleEndian(payloadLength)
        out.appendLittleEndian(payloadChecksum)
        out.appendLittleEndian(userBytes.map { UInt32($0.count) } ?? UInt32.max)
        out.appendLittleEndian(UInt32(nameBytes.count))
        out.appendLittleEndian(keyBytes.map { UInt32($0.count) } ?? UInt32.max)
        out.append(contentsOf: userBytes ?? [])
        out.append(contentsOf: nameBytes)
        out.append(contentsOf: keyBytes ?? [])
        out.appendLittleEndian(CRC32.checksum(out))
        return out
    }

    /// Reads a header from the start of `bytes`.
    ///
    /// - Returns: the header and its length in bytes (where the payload starts).
    /// - Throws: ``ArchiveDefect`` when the bytes are not a complete, intact header of a known
    ///   format version.
    static func parse(_ bytes: UnsafeRawBufferPointer) throws(ArchiveDefect) -> (header: ArchiveHeader, length: Int) {
        if bytes.isEmpty { throw .empty }
        guard bytes.count >= 6 else {
            throw Array(bytes).elementsEqual(magic.prefix(bytes.count)) ? .truncated : .notAnArchive
        }
        guard bytes.prefix(4).elementsEqual(magic) else { throw .notAnArchive }
        let formatVersion: UInt16 = bytes.readLittleEndian(at: 4)
        guard formatVersion == currentFormatVersion else { throw .unsupportedFormat(formatVersion) }
        guard bytes.count >= fixedLength else { throw .truncated }

        let userLength: UInt32 = bytes.readLittleEndian(at: 40)
        let nameLength: UInt32 = bytes.readLittleEndian(at: 44)
        let keyLength: UInt32 = bytes.readLittleEndian(at: 48)
        func length(_ value: UInt32) -> Int { value == UInt32.max ? 0 : Int(value) }
        let namesLength = length(userLength) + length(nameLength) + length(keyLength)
        let checksumOffset = fixedLength + namesLength
        guard bytes.count >= checksumOffset + 4 else { throw .truncated }
        let storedChecksum: UInt32 = bytes.readLittleEndian(at: checksumOffset)
        guard CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<checksumOffset])) == storedChecksum else {
            throw .headerChecksumMismatch
        }

        var offset = fixedLength
        func string(_ count: UInt32) throws(ArchiveDefect) -> String? {
            guard count != UInt32.max else { return nil }
            let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + Int(count))])
            offset += Int(count)
            guard let value = String(validating: slice, as: UTF8.self) else { throw .notAnArchive }
            return value
        }
        let user = try string(userLength)
        guard let cacheName = try string(nameLength) else { throw .notAnArchive }
        let key = try string(keyLength)
        let expiry: Int64 = bytes.readLittleEndian(at: 20)
        let header = ArchiveHeader(
            formatVersion: formatVersion,
            codec: bytes.readLittleEndian(at: 6),
            flags: bytes.readLittleEndian(at: 8),
            schemaVersion: bytes.readLittleEndian(at: 12),
            expiryMilliseconds: expiry == Int64.min ? nil : expiry,
            payloadLength: bytes.readLittleEndian(at: 28),
            payloadChecksum: bytes.readLittleEndian(at: 36),
            user: user,
            cacheName: cacheName,
            key: key
        )
        return (header, checksumOffset + 4)
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
        }
    }
}

extension [UInt8] {
    fileprivate mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}

extension UnsafeRawBufferPointer {
    fileprivate func readLittleEndian<T: FixedWidthInteger>(at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}
