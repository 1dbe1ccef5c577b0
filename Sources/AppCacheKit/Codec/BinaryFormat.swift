import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The binary payload format: tagged values, keyed by name through one key table per payload.
///
/// ```text
/// payload   := value  keyTable  keyTableOffset(u32 LE)
/// keyTable  := count(varint)  { length(varint) utf8 }*
/// value     := tag(u8) body
/// ```
///
/// | tag | body |
/// |---|---|
/// | `nil` | none |
/// | `false`, `true` | none |
/// | `int` | zig-zag varint (every signed width) |
/// | `uint` | varint (every unsigned width) |
/// | `double` | 8 bytes, IEEE 754, LE |
/// | `float` | 4 bytes, IEEE 754, LE |
/// | `string` | length (varint), UTF-8 |
/// | `data` | length (varint), bytes |
/// | `keyed` | byte length (u32 LE), then fields: key index (varint), value |
/// | `unkeyed` | byte length (u32 LE), count (u32 LE), then values |
/// | `date` | seconds since 2001-01-01 (8 bytes, as `double`) |
/// | `url` | absolute string (as `string`) |
/// | `uuid` | 16 bytes |
/// | `decimal` | its description (as `string`); not-a-number is `NaN` |
/// | `int128` | 16 bytes, two's complement, LE (only a value past 64 bits; others are `int`) |
/// | `uint128` | 16 bytes, LE (only a value past 64 bits; others are `uint`) |
///
/// Why this shape: every value carries its tag, so any value can be skipped without knowing its
/// type (a removed property is skipped, a reordered one found); containers carry their byte
/// length, so skipping one is O(1); key names are written once per payload, not once per item
/// (a field costs its key index, usually one byte). Reading trusts nothing: every length and
/// count is checked against the bytes left before it is used (see ``ByteReader``).
enum BinaryFormat {
    static let `nil`: UInt8 = 0
    static let `false`: UInt8 = 1
    static let `true`: UInt8 = 2
    static let int: UInt8 = 3
    static let uint: UInt8 = 4
    static let double: UInt8 = 5
    static let float: UInt8 = 6
    static let string: UInt8 = 7
    static let data: UInt8 = 8
    static let keyed: UInt8 = 9
    static let unkeyed: UInt8 = 10
    static let date: UInt8 = 11
    static let url: UInt8 = 12
    static let uuid: UInt8 = 13
    static let decimal: UInt8 = 14
    /// How a `decimal` body spells not-a-number.
    static let decimalNaN = "NaN"
    static let int128: UInt8 = 15
    static let uint128: UInt8 = 16

    /// What a value of `tag` is, in Swift's words, for decoding errors.
    static func typeName(ofTag tag: UInt8) -> String {
        switch tag {
        case `nil`: "nil"
        case `false`, `true`: "Bool"
        case int, int128: "a signed integer"
        case uint, uint128: "an unsigned integer"
        case double: "Double"
        case float: "Float"
        case string: "String"
        case data: "Data"
        case keyed: "a keyed container (a struct or dictionary)"
        case unkeyed: "an unkeyed container (an array)"
        case date: "Date"
        case url: "URL"
        case uuid: "UUID"
        case decimal: "Decimal"
        default: "an unknown tag \(tag)"
        }
    }

    /// The types the codec writes with tags of their own.
    enum SpecialType {
        case date, url, uuid, strings, data, decimal
    }

    /// The special types' identities, made once: a generic type's metadata (such as
    /// `[String]`'s) costs a look-up each time it is named, and a global costs a check each
    /// time it is read, so each coder keeps a copy and compares with it per value.
    struct SpecialTypes {
        let date = ObjectIdentifier(Date.self)
        let url = ObjectIdentifier(URL.self)
        let uuid = ObjectIdentifier(UUID.self)
        let strings = ObjectIdentifier([String].self)
        let data = ObjectIdentifier(Data.self)
        let decimal = ObjectIdentifier(Decimal.self)

        static let shared = SpecialTypes()

        /// Which special type `type` is, or `nil` for every other type.
        @inline(__always)
        func kind(of type: ObjectIdentifier) -> SpecialType? {
            if type == url { return .url }
            if type == date { return .date }
            if type == uuid { return .uuid }
            if type == strings { return .strings }
            if type == data { return .data }
            if type == decimal { return .decimal }
            return nil
        }
    }

    /// The deepest nesting of containers (an array or a keyed value inside another) the encoder
    /// writes: `JSONEncoder` writes no deeper (past it, it throws), so a value past it is
    /// refused with the same error.
    static let maximumWrittenDepth = 511

    /// The deepest nesting of values the decoder reads, as `JSONDecoder` reads no deeper: a
    /// deeper payload is damage (a hostile payload must not exhaust the stack). A single-value
    /// wrapper around a value is not a level of its own, as it is not in JSON.
    static let maximumReadDepth = 512

    /// Up to this many key names in a payload, the coders find a name by comparing it with
    /// each in turn (no hashing, no table to allocate per call); past it, by a dictionary.
    static let linearKeyLimit = 16

    /// Zig-zag: small negative numbers stay short as varints.
    @inline(__always)
    static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    @inline(__always)
    static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }

    /// Stores `value` as a varint at `address`, which has room for 10 bytes.
    ///
    /// - Returns: the bytes stored (1 to 10).
    @inline(__always)
    static func storeVarint(_ value: UInt64, at address: UnsafeMutableRawPointer) -> Int {
        var value = value
        var count = 0
        while value >= 0x80 {
            address.storeBytes(of: UInt8(truncatingIfNeeded: value) | 0x80, toByteOffset: count, as: UInt8.self)
            count += 1
            value >>= 7
        }
        address.storeBytes(of: UInt8(value), toByteOffset: count, as: UInt8.self)
        return count + 1
    }
}

/// A growable byte buffer written through a pointer: appending is a bounds check and a store.
///
/// The buffer is `malloc`'s, so it grows and shrinks in place with `realloc`, and the finished
/// payload becomes a `Data` without a copy (``takeData()``).
struct ByteWriter {
    private(set) var base: UnsafeMutableRawPointer
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int = 1024) {
        self.capacity = max(capacity, 64)
        guard let memory = malloc(self.capacity) else { fatalError("AppCache: out of memory") }
        base = memory
    }

    /// Frees the buffer, unless ``takeData()`` took it. Call once, last.
    func deallocate() {
        if capacity > 0 { free(base) }
    }

    /// The bytes written, as a `Data` that owns the buffer (shrunk to fit); the writer must not
    /// be used after, but for ``deallocate()``, which then frees nothing.
    mutating func takeData() -> Data {
        let fitted = realloc(base, max(count, 1)) ?? base
        capacity = 0
        return Data(bytesNoCopy: fitted, count: count, deallocator: .free)
    }

    @inline(__always)
    mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(to: count + extra) }
    }

    private mutating func grow(to needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        guard let memory = realloc(base, newCapacity) else { fatalError("AppCache: out of memory") }
        base = memory
        capacity = newCapacity
    }

    @inline(__always)
    mutating func byte(_ value: UInt8) {
        reserve(1)
        base.storeBytes(of: value, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    @inline(__always)
    mutating func varint(_ value: UInt64) {
        reserve(10)
        count += BinaryFormat.storeVarint(value, at: base + count)
    }

    @inline(__always)
    mutating func fixed<T: FixedWidthInteger>(_ value: T) {
        reserve(MemoryLayout<T>.size)
        base.storeBytes(of: value.littleEndian, toByteOffset: count, as: T.self)
        count += MemoryLayout<T>.size
    }

    /// Forgets the bytes from `count` on (bytes moved down over ones dropped).
    mutating func truncate(to count: Int) {
        precondition(count >= 0 && count <= self.count, "AppCache: truncating past the bytes written")
        self.count = count
    }

    /// Overwrites 4 bytes at `offset` (a length or count patched when its container closes).
    @inline(__always)
    func patch(_ value: UInt32, at offset: Int) {
        base.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self)
    }

    mutating func bytes(_ source: UnsafeRawBufferPointer) {
        guard let address = source.baseAddress, source.count > 0 else { return }
        reserve(source.count)
        (base + count).copyMemory(from: address, byteCount: source.count)
        count += source.count
    }

    mutating func string(_ value: String) {
        // A native string's bytes in place; a copy only for a string stored otherwise (bridged
        // or lazily built), which `withUTF8` makes contiguous first.
        let written: Void? = value.utf8.withContiguousStorageIfAvailable { utf8 in
            varint(UInt64(utf8.count))
            bytes(UnsafeRawBufferPointer(utf8))
        }
        if written == nil {
            var value = value
            value.withUTF8 { utf8 in
                varint(UInt64(utf8.count))
                bytes(UnsafeRawBufferPointer(utf8))
            }
        }
    }
}

/// Reads a payload that may be anything: every read is bounds-checked, and a length or count
/// is compared with the bytes left before it is trusted.
struct ByteReader {
    let base: UnsafeRawPointer
    let count: Int

    @inline(__always)
    func byte(at offset: Int) throws(BinaryDecodingFailure) -> UInt8 {
        guard offset >= 0 && offset < count else { throw .truncated }
        return base.load(fromByteOffset: offset, as: UInt8.self)
    }

    /// A varint at `offset`, and where it ends.
    @inline(__always)
    func varint(at offset: Int) throws(BinaryDecodingFailure) -> (value: UInt64, end: Int) {
        var offset = offset
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < count, offset >= 0 else { throw .truncated }
            let byte = base.load(fromByteOffset: offset, as: UInt8.self)
            offset += 1
            guard shift < 64 else { throw .malformed("a varint longer than 10 bytes") }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return (value, offset) }
            shift += 7
        }
    }

    /// A varint at `offset` used as a length or count: at most `limit`.
    @inline(__always)
    func length(at offset: Int, limit: Int) throws(BinaryDecodingFailure) -> (value: Int, end: Int) {
        let (value, end) = try varint(at: offset)
        guard value <= UInt64(limit) else { throw .malformed("a length of \(value) with \(limit) bytes left") }
        return (Int(value), end)
    }

    @inline(__always)
    func fixed<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) throws(BinaryDecodingFailure) -> T {
        guard offset >= 0 && offset <= count - MemoryLayout<T>.size else { throw .truncated }
        return T(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    /// The bytes `offset..<offset + length`, checked.
    @inline(__always)
    func slice(at offset: Int, length: Int) throws(BinaryDecodingFailure) -> UnsafeRawBufferPointer {
        guard offset >= 0, length >= 0, length <= count - offset else { throw .truncated }
        return UnsafeRawBufferPointer(start: base + offset, count: length)
    }
}

extension ByteReader {
    /// Where the value at `offset` ends, whatever it is, with values ending by `valuesEnd`
    /// (where the key table starts): the skip that lets a reader pass over fields it does not
    /// want, and the encoder over fields it rewrites.
    @inline(__always)
    func end(ofValueAt offset: Int, valuesEnd: Int) throws(BinaryDecodingFailure) -> Int {
        guard offset >= 0 && offset < valuesEnd else { throw .truncated }
        let tag = base.load(fromByteOffset: offset, as: UInt8.self)
        switch tag {
        case BinaryFormat.nil, BinaryFormat.false, BinaryFormat.true: return offset + 1
        case BinaryFormat.int, BinaryFormat.uint: return try varint(at: offset + 1).end
        case BinaryFormat.double, BinaryFormat.date: return offset + 9
        case BinaryFormat.float: return offset + 5
        case BinaryFormat.uuid, BinaryFormat.int128, BinaryFormat.uint128: return offset + 17
        case BinaryFormat.string, BinaryFormat.data, BinaryFormat.url, BinaryFormat.decimal:
            let (length, start) = try self.length(at: offset + 1, limit: valuesEnd - offset)
            guard length <= valuesEnd - start else { throw .truncated }
            return start + length
        case BinaryFormat.keyed:
            let length = Int(try fixed(UInt32.self, at: offset + 1))
            guard length <= valuesEnd - offset - 5 else { throw .truncated }
            return offset + 5 + length
        case BinaryFormat.unkeyed:
            let length = Int(try fixed(UInt32.self, at: offset + 1))
            guard length <= valuesEnd - offset - 9 else { throw .truncated }
            return offset + 9 + length
        default:
            throw .malformed("an unknown tag \(tag)")
        }
    }
}

/// Why a payload cannot be decoded (it is damaged); becomes a `DecodingError.dataCorrupted`
/// where decoding began.
enum BinaryDecodingFailure: Error, CustomStringConvertible {
    case truncated
    case malformed(String)

    var description: String {
        switch self {
        case .truncated: "the payload ends early"
        case .malformed(let what): "the payload is malformed: \(what)"
        }
    }
}
