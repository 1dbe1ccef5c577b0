import Foundation

/// The fixed prefix of one record in a user directory's pack (``PackFile``): an archive's bytes,
/// the removal of one, or a new cached date for one.
///
/// Layout, integers little-endian:
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 2 | magic `0xAC 0x50` |
/// | 2 | 1 | kind: 1 an archive, 2 a removal, 3 a new cached date, 4 a key table |
/// | 3 | 1 | reserved, 0 |
/// | 4 | 4 | body length: the archive's bytes (its header and payload as an archive file holds them, or in the compact form of ``PackedArchive``), or the key table's; 0 for the other kinds |
/// | 8 | 8 | the archive's file name, hashed (``StableHash/value64(_:)``); a key table's name (the hash of its bytes) |
/// | 16 | 8 | the write's sequence number: which version of the archive this is (its ``FileVersion``) |
/// | 24 | 8 | the cached date, the bit pattern of its `timeIntervalSinceReferenceDate` |
/// | 32 | 4 | CRC-32 of bytes 0..<32 |
///
/// The prefix checks itself; the body is an archive, whose header and payload carry their own
/// checksums and names, so a read checks it exactly as it checks an archive file. A key
/// table's body is the table's length (4 bytes), the table (the key table of binary payloads,
/// ``BinaryFormat``, that the pack's archives share: see ``PackedArchive``) and a CRC-32 of both;
/// a writer appends two copies of it, the first padded with zeros so that the second starts a
/// new 4 KiB page: a damaged byte, or a lost page, costs one copy and no archive.
struct PackRecord: Equatable, Sendable {
    enum Kind: UInt8, Sendable {
        case archive = 1
        case removal = 2
        case redating = 3
        case keyTable = 4

        /// Whether a record of this kind has a body.
        var hasBody: Bool { self == .archive || self == .keyTable }
    }

    static let prefixLength = 36
    static let magic: (UInt8, UInt8) = (0xAC, 0x50)

    var kind: Kind
    /// The archive bytes that follow the prefix.
    var bodyLength: Int
    var nameHash: UInt64
    var sequence: UInt64
    var cachedDate: Date

    /// The record's bytes in the pack, prefix and body.
    var length: Int { Self.prefixLength + bodyLength }

    /// Whether its date is one the cache could have written (``DiskDate``): a record whose
    /// prefix checks but whose date does not (a hostile or buggy writer's) is damage, its
    /// collection a miss.
    var hasSaneDate: Bool { DiskDate.isSane(cachedDate) }

    /// The prefix's bytes.
    func prefix() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.prefixLength)
        appendPrefix(to: &bytes)
        return bytes
    }

    /// Appends the prefix's bytes to `bytes`, in place.
    func appendPrefix(to bytes: inout [UInt8]) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: Self.prefixLength))
        writePrefix(into: &bytes, at: start)
    }

    /// Writes the prefix's bytes over the ``prefixLength`` bytes of `bytes` from `start`: where
    /// a record whose body length was known only once its body was written keeps its prefix.
    func writePrefix(into bytes: inout [UInt8], at start: Int) {
        precondition(start >= 0 && start + Self.prefixLength <= bytes.count, "a prefix written within the bytes")
        bytes.withUnsafeMutableBytes { buffer in
            var fields = LittleEndianFields(base: buffer.baseAddress! + start, count: Self.prefixLength)
            fields.put(Self.magic.0)
            fields.put(Self.magic.1)
            fields.put(kind.rawValue)
            fields.put(UInt8(0))
            fields.put(UInt32(bodyLength))
            fields.put(nameHash)
            fields.put(sequence)
            fields.put(cachedDate.timeIntervalSinceReferenceDate.bitPattern)
            fields.put(CRC32.checksum(UnsafeRawBufferPointer(start: buffer.baseAddress! + start, count: Self.prefixLength - 4)))
        }
    }

    /// What a record's prefix said.
    enum Parsed: Equatable {
        case record(PackRecord)
        /// Fewer bytes than a prefix: the end of the pack, or an append cut short.
        case incomplete
        /// Bytes that are no record's prefix, and why.
        case damaged(String)
    }

    /// Reads the prefix at the start of `bytes`, checking its checksum, magic, kind and length
    /// (a body over `maximumBodyLength`, or a removal with a body, is damage).
    static func parse(_ bytes: UnsafeRawBufferPointer, maximumBodyLength: Int) -> Parsed {
        guard bytes.count >= prefixLength else { return .incomplete }
        func load<T: FixedWidthInteger>(_ offset: Int) -> T { bytes.readLittleEndian(at: offset) }
        guard CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<32])) == load(32) as UInt32 else {
            return .damaged("a record's prefix fails its checksum")
        }
        guard bytes[0] == magic.0, bytes[1] == magic.1, bytes[3] == 0, let kind = Kind(rawValue: bytes[2]) else {
            return .damaged("a record has an unknown magic or kind")
        }
        let bodyLength = Int(load(4) as UInt32)
        guard kind.hasBody ? bodyLength > 0 && bodyLength <= maximumBodyLength : bodyLength == 0 else {
            return .damaged("a record claims a body of \(bodyLength) bytes")
        }
        let date = Date(timeIntervalSinceReferenceDate: Double(bitPattern: load(24)))
        return .record(PackRecord(kind: kind, bodyLength: bodyLength, nameHash: load(8), sequence: load(16), cachedDate: date))
    }

    /// The prefix `bytes` (at least ``prefixLength`` of them) held before one of its bytes was
    /// damaged: the one change of a single byte that makes it check, when exactly one does.
    ///
    /// What names the collection of a record whose prefix took a flipped bit or byte (a
    /// removal or a re-dating record has no body whose header could name it), so that it
    /// misses rather than falling back to an older record. Only names: a record recovered this
    /// way is never read as one. Costs 36 × 255 checksums of 32 bytes, and runs only on damage.
    static func corrected(_ bytes: UnsafeRawBufferPointer, maximumBodyLength: Int) -> PackRecord? {
        guard bytes.count >= prefixLength else { return nil }
        var candidate = Array(bytes[0..<prefixLength])
        var found: PackRecord?
        for position in 0..<prefixLength {
            let original = candidate[position]
            for value in 0...UInt8.max where value != original {
                candidate[position] = value
                // The magic first: a change elsewhere must leave it whole.
                guard candidate[0] == magic.0, candidate[1] == magic.1 else { continue }
                if case .record(let record) = candidate.withUnsafeBytes({ parse($0, maximumBodyLength: maximumBodyLength) }) {
                    // Two corrections that both check: nothing can be told.
                    guard found == nil else { return nil }
                    found = record
                }
            }
            candidate[position] = original
        }
        return found
    }
}
