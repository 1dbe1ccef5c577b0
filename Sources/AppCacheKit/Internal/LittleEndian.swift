import Foundation

// Fixed-width integers as the on-disk formats store them, least significant byte first: the
// archive header, the pack's record prefixes and checkpoints, the outbox's entries.

extension RangeReplaceableCollection where Element == UInt8 {
    /// Appends `value`'s bytes, least significant first.
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
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
