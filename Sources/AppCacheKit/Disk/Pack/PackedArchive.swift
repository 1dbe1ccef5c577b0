import Foundation

/// An archive as a pack's record (``PackRecord``) holds it: its header's fields as varints, and
/// a binary payload's key table, when other archives of the pack have the same one, kept once
/// in a record of its own (``PackRecord/Kind/keyTable``), where an archive file holds the full
/// header (``ArchiveHeader``) and the whole payload.
///
/// Layout:
///
/// | size | field |
/// |---|---|
/// | 2 | magic `0xAC 0x43` |
/// | varint | the archive header's format version |
/// | varint | which fields are there: bit 0 expiry, 1 threshold, 2 decoded size, 3 user id, 4 key, 5 ETag, 6 `Last-Modified`, 7 cursor, 8 the key table is the pack's |
/// | varint | payload codec |
/// | varint | flags |
/// | varint | schema version, zig-zag |
/// | varint | expiry, milliseconds since 1970, zig-zag (bit 0) |
/// | varint | staleness threshold, milliseconds, zig-zag (bit 1) |
/// | varint | the memory its items take decoded, estimated (bit 2) |
/// | varint | the whole payload's length |
/// | 4 | the whole payload's CRC-32 |
/// | 8 | the pack's key table it uses (bit 8): the FNV-1a hash of the table's bytes |
/// | varint + UTF-8 | user id (bit 3), cache name, key (bit 4), ETag (bit 5), `Last-Modified` (bit 6), cursor (bit 7) |
/// | 4 | CRC-32 of the bytes before it |
/// | rest | the payload; without its key table and the table's offset when the table is the pack's |
///
/// A read rebuilds exactly the archive file's header and payload: the key table goes back
/// between the values and the offset (which is the values' length), and the payload is then
/// checked against its CRC-32 as an archive file's is. A table that is missing, damaged or
/// another one is a miss, never other items.
///
/// Why: an archive of one small item in a file's form spends more on its header (about 90
/// bytes) and its key table (the model's property names: 80 bytes for a `MenuItem`) than on
/// its values, and 10,000 such collections took 1.3 times SQLite's space.
enum PackedArchive {
    static let magic: (UInt8, UInt8) = (0xAC, 0x43)
    /// Key tables shorter than this stay in their payloads: sharing would save less than the
    /// table's name costs.
    static let minimumSharedTableLength = 16
    /// Key tables longer than this stay in their payloads.
    static let maximumSharedTableLength = 16 << 10

    /// The bits of the fields-present varint.
    private enum Field {
        static let expiry: UInt64 = 1 << 0
        static let threshold: UInt64 = 1 << 1
        static let decodedSize: UInt64 = 1 << 2
        static let user: UInt64 = 1 << 3
        static let key: UInt64 = 1 << 4
        static let etag: UInt64 = 1 << 5
        static let lastModified: UInt64 = 1 << 6
        static let cursor: UInt64 = 1 << 7
        static let sharedKeyTable: UInt64 = 1 << 8
        static let all: UInt64 = (1 << 9) - 1
    }

    /// Whether `body`, a pack record's, starts with this form's magic (an archive file's form
    /// starts with ``ArchiveHeader/magic``).
    static func isPacked(_ body: UnsafeRawBufferPointer) -> Bool {
        body.count >= 2 && body[0] == magic.0 && body[1] == magic.1
    }

    /// The bytes of `payload`'s key table, when it is a binary payload (``BinaryFormat``)
    /// whose table could be the pack's: its last 4 bytes the offset of a table of
    /// ``minimumSharedTableLength`` to ``maximumSharedTableLength`` bytes.
    static func sharableKeyTable(of payload: UnsafeRawBufferPointer) -> Range<Int>? {
        guard payload.count > 4 else { return nil }
        let offset = Int(payload.readLittleEndian(at: payload.count - 4) as UInt32)
        guard offset < payload.count - 4 else { return nil }
        let length = payload.count - 4 - offset
        guard length >= minimumSharedTableLength, length <= maximumSharedTableLength else { return nil }
        return offset..<(payload.count - 4)
    }

    /// The most bytes ``append(_:keyTable:to:)`` appends for `header`.
    private static func maximumLength(of header: ArchiveHeader) -> Int {
        func room(_ name: String?) -> Int { name.map { 10 + $0.utf8.count } ?? 0 }
        return 2 + 9 * 10 + 4 + 8 + 4 + room(header.user) + room(header.cacheName) + room(header.key) + room(header.etag)
            + room(header.lastModified) + room(header.cursor)
    }

    /// Appends `header` in this form to `bytes`. With `keyTable` (the name of the pack's table
    /// the payload's is), the payload that follows must be its values alone.
    ///
    /// - Complexity: O(n) in the header's names.
    static func append(_ header: ArchiveHeader, keyTable: UInt64?, to bytes: inout [UInt8]) {
        let start = bytes.count
        let reserved = maximumLength(of: header)
        bytes.append(contentsOf: repeatElement(0, count: reserved))
        let written = bytes.withUnsafeMutableBytes { buffer -> Int in
            var out = VarintWriter(base: buffer.baseAddress! + start)
            out.bytes(magic.0, magic.1)
            out.varint(UInt64(header.formatVersion))
            var fields: UInt64 = 0
            if header.expiryMilliseconds != nil { fields |= Field.expiry }
            if header.thresholdMilliseconds != nil { fields |= Field.threshold }
            if header.decodedSize != nil { fields |= Field.decodedSize }
            if header.user != nil { fields |= Field.user }
            if header.key != nil { fields |= Field.key }
            if header.etag != nil { fields |= Field.etag }
            if header.lastModified != nil { fields |= Field.lastModified }
            if header.cursor != nil { fields |= Field.cursor }
            if keyTable != nil { fields |= Field.sharedKeyTable }
            out.varint(fields)
            out.varint(UInt64(header.codec))
            out.varint(UInt64(header.flags))
            out.varint(BinaryFormat.zigzag(header.schemaVersion))
            if let expiry = header.expiryMilliseconds { out.varint(BinaryFormat.zigzag(expiry)) }
            if let threshold = header.thresholdMilliseconds { out.varint(BinaryFormat.zigzag(threshold)) }
            if let decodedSize = header.decodedSize { out.varint(decodedSize) }
            out.varint(header.payloadLength)
            out.fixed(header.payloadChecksum)
            if let keyTable { out.fixed(keyTable) }
            if let user = header.user { out.string(user) }
            out.string(header.cacheName)
            if let key = header.key { out.string(key) }
            if let etag = header.etag { out.string(etag) }
            if let lastModified = header.lastModified { out.string(lastModified) }
            if let cursor = header.cursor { out.string(cursor) }
            out.fixed(CRC32.checksum(UnsafeRawBufferPointer(start: buffer.baseAddress! + start, count: out.count)))
            return out.count
        }
        precondition(written <= reserved, "a packed header longer than its bound")
        bytes.removeLast(reserved - written)
    }

    /// What the start of a record's body said.
    struct Parsed {
        /// The archive's header, as its file would hold it (its payload's full length and
        /// checksum).
        var header: ArchiveHeader
        /// Where the stored payload starts in the body.
        var length: Int
        /// The name of the pack's key table the payload's is, if it is.
        var keyTable: UInt64?

        /// The header, its length and the shared table's name, taken apart without copying the
        /// header (a read hands it on).
        consuming func parts() -> (header: ArchiveHeader, length: Int, keyTable: UInt64?) {
            (header, length, keyTable)
        }

        /// Whether `storedLength` bytes after the header can be the header's payload: all of it,
        /// or (with the pack's key table) its values, which leave room for a table of at least
        /// one byte and its 4-byte offset. The exact length is checked once the table is read.
        func holdsPayload(storedLength: Int) -> Bool {
            guard let payloadLength = Int(exactly: header.payloadLength) else { return false }
            return keyTable == nil ? storedLength == payloadLength : storedLength <= payloadLength - 5
        }
    }

    /// Reads the header at the start of `body`, checking its checksum.
    ///
    /// - Parameter expected: the collection the reader looks for, if it knows: names equal to
    ///   its own are taken from it rather than made again.
    /// - Throws: ``ArchiveDefect``: `.truncated` when `body` ends inside the header (a reader
    ///   that read only the body's start reads it whole and asks again), `.notAnArchive` or
    ///   `.headerChecksumMismatch` for damage.
    static func parse(_ body: UnsafeRawBufferPointer, expecting expected: ArchiveKey? = nil) throws(ArchiveDefect) -> Parsed {
        guard isPacked(body) else { throw body.isEmpty ? .empty : .notAnArchive }
        let reader = ByteReader(base: body.baseAddress!, count: body.count)
        var offset = 2
        func varint() throws(ArchiveDefect) -> UInt64 {
            do throws(BinaryDecodingFailure) {
                let (value, end) = try reader.varint(at: offset)
                offset = end
                return value
            } catch {
                if case .truncated = error { throw .truncated }
                throw .notAnArchive
            }
        }
        func fixed<T: FixedWidthInteger>(_: T.Type) throws(ArchiveDefect) -> T {
            guard offset + MemoryLayout<T>.size <= body.count else { throw .truncated }
            defer { offset += MemoryLayout<T>.size }
            return body.readLittleEndian(at: offset)
        }
        func string(_ expected: String?) throws(ArchiveDefect) -> String {
            let length = try varint()
            guard length <= UInt64(ArchiveHeader.maximumNameLength) else { throw .nameTooLong(UInt32(clamping: length)) }
            guard Int(length) <= body.count - offset else { throw .truncated }
            let slice = UnsafeRawBufferPointer(rebasing: body[offset..<(offset + Int(length))])
            offset += Int(length)
            if let expected, ArchiveHeader.spells(expected, slice) { return expected }
            guard let value = UTF8Text.string(validating: slice) else { throw .notAnArchive }
            return value
        }
        let formatVersion = try varint()
        guard (2...4).contains(formatVersion) else { throw .unsupportedFormat(UInt16(clamping: formatVersion)) }
        let fields = try varint()
        guard fields & ~Field.all == 0 else { throw .notAnArchive }
        let codec = try varint()
        let flags = try varint()
        guard codec <= UInt64(UInt16.max), flags <= UInt64(UInt32.max) else { throw .notAnArchive }
        let schemaVersion = BinaryFormat.unzigzag(try varint())
        let expiry = fields & Field.expiry != 0 ? BinaryFormat.unzigzag(try varint()) : nil
        let threshold = fields & Field.threshold != 0 ? BinaryFormat.unzigzag(try varint()) : nil
        let decodedSize = fields & Field.decodedSize != 0 ? try varint() : nil
        let payloadLength = try varint()
        let payloadChecksum = try fixed(UInt32.self)
        let keyTable = fields & Field.sharedKeyTable != 0 ? try fixed(UInt64.self) : nil
        let user = fields & Field.user != 0 ? try string(expected?.user) : nil
        let cacheName = try string(expected?.cacheName)
        let key = fields & Field.key != 0 ? try string(expected?.key) : nil
        let etag = fields & Field.etag != 0 ? try string(nil) : nil
        let lastModified = fields & Field.lastModified != 0 ? try string(nil) : nil
        let cursor = fields & Field.cursor != 0 ? try string(nil) : nil
        let checksumOffset = offset
        let storedChecksum = try fixed(UInt32.self)
        guard CRC32.checksum(UnsafeRawBufferPointer(rebasing: body[0..<checksumOffset])) == storedChecksum else {
            throw .headerChecksumMismatch
        }
        let header = ArchiveHeader(
            formatVersion: UInt16(formatVersion), codec: UInt16(codec), flags: UInt32(flags), schemaVersion: schemaVersion,
            expiryMilliseconds: expiry, thresholdMilliseconds: threshold, decodedSize: decodedSize, payloadLength: payloadLength,
            payloadChecksum: payloadChecksum, user: user, cacheName: cacheName, key: key, etag: etag, lastModified: lastModified,
            cursor: cursor)
        return Parsed(header: header, length: offset, keyTable: keyTable)
    }

    /// Reads the header at the start of a pack record's body in either form: this one, or an
    /// archive file's (``ArchiveHeader``), whose payload is stored whole.
    ///
    /// - Throws: ``ArchiveDefect``, as ``parse(_:expecting:)`` and ``ArchiveHeader/parse(_:expecting:)`` do.
    static func parseBody(_ body: UnsafeRawBufferPointer, expecting expected: ArchiveKey? = nil) throws(ArchiveDefect) -> Parsed {
        if isPacked(body) { return try parse(body, expecting: expected) }
        let (header, length) = try ArchiveHeader.parse(body, expecting: expected)
        return Parsed(header: header, length: length, keyTable: nil)
    }

    /// Completes the payload in `buffer`, whose first `valueCount` bytes are its values: the
    /// key table `table` after them, then their length, which is where the table starts.
    /// `buffer` holds exactly the values, the table and 4 bytes more.
    static func rebuild(afterValues valueCount: Int, table: UnsafeRawBufferPointer, in buffer: UnsafeMutableRawBufferPointer) {
        precondition(buffer.count == valueCount + table.count + 4, "a payload rebuilt into a buffer of its size")
        guard let base = buffer.baseAddress else { return }
        if let source = table.baseAddress { (base + valueCount).copyMemory(from: source, byteCount: table.count) }
        (base + valueCount + table.count).storeBytes(of: UInt32(valueCount).littleEndian, as: UInt32.self)
    }
}

/// Writes varints and little-endian fields through a pointer whose room the caller reserved.
private struct VarintWriter {
    let base: UnsafeMutableRawPointer
    private(set) var count = 0

    init(base: UnsafeMutableRawPointer) {
        self.base = base
    }

    mutating func bytes(_ first: UInt8, _ second: UInt8) {
        base.storeBytes(of: first, toByteOffset: count, as: UInt8.self)
        base.storeBytes(of: second, toByteOffset: count + 1, as: UInt8.self)
        count += 2
    }

    mutating func varint(_ value: UInt64) {
        count += BinaryFormat.storeVarint(value, at: base + count)
    }

    mutating func fixed<T: FixedWidthInteger>(_ value: T) {
        (base + count).storeBytes(of: value.littleEndian, as: T.self)
        count += MemoryLayout<T>.size
    }

    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            if let source = utf8.baseAddress { (base + count).copyMemory(from: source, byteCount: utf8.count) }
            count += utf8.count
        }
    }
}
