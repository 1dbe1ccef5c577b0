import Foundation

/// CRC-32 as zlib, PNG and Ethernet compute it (reflected polynomial `0xEDB88320`).
///
/// The archive format checksums its header and payload with it. Slicing-by-8 keeps it at several
/// bytes per cycle, so verifying a 44 KB payload costs a few microseconds next to decoding it.
enum CRC32 {
    /// The checksum of `bytes`, continuing from `seed` (the checksum of the bytes before them).
    ///
    /// - Complexity: O(n).
    static func checksum(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        var crc = ~seed
        var offset = 0
        let count = bytes.count
        table.withUnsafeBufferPointer { t in
            while count - offset >= 8 {
                let one = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) ^ crc
                let two = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
                crc = t[7 * 256 + Int(one & 0xFF)]
                    ^ t[6 * 256 + Int((one >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((one >> 16) & 0xFF)]
                    ^ t[4 * 256 + Int(one >> 24)]
                    ^ t[3 * 256 + Int(two & 0xFF)]
                    ^ t[2 * 256 + Int((two >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((two >> 16) & 0xFF)]
                    ^ t[Int(two >> 24)]
                offset += 8
            }
            while offset < count {
                crc = t[Int((crc ^ UInt32(bytes[offset])) & 0xFF)] ^ (crc >> 8)
                offset += 1
            }
        }
        return ~crc
    }

    /// The checksum of a byte sequence held in contiguous storage.
    static func checksum(_ bytes: some ContiguousBytes, seed: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, seed: seed) }
    }

    /// Eight 256-entry tables, one after the other: table `k` advances a byte through `k` more
    /// zero bytes.
    private static let table: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 {
                crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
            }
            table[byte] = crc
        }
        for slice in 1..<8 {
            for byte in 0..<256 {
                let previous = table[(slice - 1) * 256 + byte]
                table[slice * 256 + byte] = (previous >> 8) ^ table[Int(previous & 0xFF)]
            }
        }
        return table
    }()
}
