import Foundation

// Fixed-width integers as the on-disk formats store them, least significant byte first: the
// archive header, the pack's record prefixes and checkpoints, the outbox's entries.

extension RangeReplaceableCollection where Element == UInt8 {
    /// Appends `value`'s bytes, least significant first.
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}

/// Fixed-width fields written little-endian into bytes reserved at the end of an array
/// (``Swift/Array/appendFields(count:_:)``): a run of fields grows the array once, where
/// ``Swift/RangeReplaceableCollection/appendLittleEndian(_:)`` makes a generic append per field.
struct LittleEndianFields {
    private let base: UnsafeMutableRawPointer
    private let count: Int
    /// How many bytes were written.
    private(set) var offset = 0

    /// Fields written over the `count` bytes at `base`, which the caller holds.
    init(base: UnsafeMutableRawPointer, count: Int) {
        self.base = base
        self.count = count
    }

    /// Writes `value`, least significant byte first.
    @inline(__always)
    mutating func put<T: FixedWidthInteger>(_ value: T) {
        precondition(offset + MemoryLayout<T>.size <= count, "a field past the bytes reserved")
        base.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
        offset += MemoryLayout<T>.size
    }

    /// Writes `bytes` as they are.
    mutating func put(bytes: [UInt8]) {
        precondition(offset + bytes.count <= count, "bytes past the bytes reserved")
        bytes.withUnsafeBytes { (base + offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        offset += bytes.count
    }
}

extension [UInt8] {
    /// Appends `count` bytes that `body` writes, field by field; `body` must write them all.
    mutating func appendFields(count: Int, _ body: (inout LittleEndianFields) -> Void) {
        let start = self.count
        append(contentsOf: repeatElement(0, count: count))
        withUnsafeMutableBytes { bytes in
            var fields = LittleEndianFields(base: bytes.baseAddress! + start, count: count)
            body(&fields)
            precondition(fields.offset == count, "fewer fields than the bytes reserved")
        }
    }
}

extension UnsafeRawBufferPointer {
    /// The integer whose bytes, least significant first, start at `offset`, unaligned. The
    /// caller has checked that they are within the buffer.
    func readLittleEndian<T: FixedWidthInteger>(at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

extension [UInt8] {
    /// The integer whose bytes, least significant first, start at `offset`. The caller has
    /// checked that they are within the array.
    func readLittleEndian<T: FixedWidthInteger>(at offset: Int) -> T {
        withUnsafeBytes { $0.readLittleEndian(at: offset) }
    }
}
