import Foundation

/// The reversible mapping from user ids and schema versions to directory names (archive names
/// go through ``ArchiveFileName``).
///
/// A name keeps `a`-`z`, `0`-`9`, `-`, `_` and `.` (but not a leading `.`); every other UTF-8
/// byte becomes `%` and two lowercase hex digits. So `..`, `/`, NUL and spaces cannot leave their
/// directory, names that differ only in case stay apart on case-insensitive file systems
/// (`Alice` is `%41lice`), and the characters `+`, `~` and a leading `.` are free to mark
/// structure, temporary files and hashed names. The mapping is injective on strings as Swift
/// compares them, and `decode` accepts exactly the strings `encode` produces.
enum FileName {
    /// The longest file name this package creates, in bytes: well under the usual 255-byte limit,
    /// leaving room for a temporary suffix.
    static let maximumLength = 200

    /// How many bytes of a name that is too long are kept, readable, before its hash.
    static let hashedPrefixLength = 120

    /// The encoded form of `string`.
    ///
    /// Strings Swift considers equal (canonically equivalent, like a precomposed `é` and an
    /// `e` with a combining accent) get the same name: the string is put in Unicode
    /// normalization form C first, so disk and memory agree on what is one key.
    static func encode(_ string: String) -> String {
        // ASCII is its own form C: only other text needs normalising.
        let normalized = string.utf8.allSatisfy { $0 < 0x80 } ? string : string.precomposedStringWithCanonicalMapping
        var out = [UInt8]()
        out.reserveCapacity(normalized.utf8.count)
        for byte in normalized.utf8 {
            if isKept(byte, first: out.isEmpty) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The string `encoded` stands for, or `nil` when `encode` could not have produced it.
    static func decode(_ encoded: some StringProtocol) -> String? {
        var bytes = [UInt8]()
        var iterator = encoded.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue)
                else { return nil }
                let decoded = high << 4 | low
                // An escape of a byte that is kept as it is would make a second spelling.
                guard !isKept(decoded, first: bytes.isEmpty) else { return nil }
                bytes.append(decoded)
            } else {
                guard isKept(byte, first: bytes.isEmpty) else { return nil }
                bytes.append(byte)
            }
        }
        guard let string = UTF8Text.string(validating: bytes) else { return nil }
        return string
    }

    /// `stem + suffix`, or, when that is longer than `maximumLength`, a readable prefix of the
    /// stem, `~`, the stem's 128-bit hash and the suffix.
    ///
    /// `stem` must be built from encoded names (and the separators `+` and `-`), so that a hashed
    /// name, the only kind holding `~`, never equals a plain one.
    static func bounded(stem: String, suffix: String = "") -> String {
        let plain = stem + suffix
        guard plain.utf8.count > maximumLength else { return plain }
        var prefix = Array(stem.utf8.prefix(hashedPrefixLength))
        // Do not cut an escape in half: drop a trailing "%" or "%x".
        if let percent = prefix.suffix(2).lastIndex(of: UInt8(ascii: "%")) {
            prefix.removeSubrange(percent...)
        }
        return String(decoding: prefix, as: UTF8.self) + "~" + StableHash.hex128(stem) + suffix
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func isKept(_ byte: UInt8, first: Bool) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        case UInt8(ascii: "."):
            return !first
        default:
            return false
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        default: return nil
        }
    }
}
