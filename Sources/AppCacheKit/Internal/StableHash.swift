/// A 128-bit hash of a string that is the same in every process, on every platform.
///
/// Swift's `Hasher` is seeded per process, so it cannot name files. This is two 64-bit FNV-1a
/// passes, one forwards from the standard offset basis and one backwards from another. It only
/// shortens names that are too long for the file system; the archive header still holds the full
/// names, and a read checks them, so even a collision can never return another key's items.
enum StableHash {
    /// The hash of the UTF-8 bytes of `string`, as 32 lowercase hexadecimal digits.
    static func hex128(_ string: String) -> String {
        let bytes = Array(string.utf8)
        let prime: UInt64 = 0x0000_0100_0000_01B3
        var forward: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes {
            forward = (forward ^ UInt64(byte)) &* prime
        }
        var backward: UInt64 = 0x8422_2325_CBF2_9CE4
        for byte in bytes.reversed() {
            backward = (backward ^ UInt64(byte)) &* prime
        }
        return hex(forward) + hex(backward)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

extension StableHash {
    /// The 64-bit FNV-1a hash of the UTF-8 bytes of `string`: names an archive in a pack
    /// (``PackRecord``), where a read still checks the archive header's full names.
    static func value64(_ string: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        // Over the UTF-8 bytes in place (a string's own storage, or a small one's on the
        // stack): stepping its UTF-8 view byte by byte costs several times as much.
        var string = string
        string.withUTF8 { bytes in
            for byte in bytes {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            }
        }
        return hash
    }

    /// The 64-bit FNV-1a hash of `bytes`: names a key table a pack shares between its
    /// archives (``PackedArchive``), where a read still checks the whole payload's CRC-32.
    static func value64(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}
