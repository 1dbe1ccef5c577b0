#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Turns bytes read from disk into text only when they are valid UTF-8.
///
/// Not the standard library's `String(validating:as:)`: that needs the Swift 6 runtime (iOS 18,
/// macOS 15), above this package's deployment floor, and was a third of the binary decoder's
/// time on non-ASCII text. Instead the bytes are decoded the fast way, which replaces every
/// ill-formed sequence with U+FFFD, and accepted only if the text spells exactly the same bytes
/// (one `memcmp`): any replacement changes them.
enum UTF8Text {
    /// The text `bytes` spell, or `nil` when they are not valid UTF-8.
    ///
    /// - Complexity: O(n).
    static func string(validating bytes: UnsafeRawBufferPointer) -> String? {
        var text = String(decoding: bytes, as: UTF8.self)
        let same = text.withUTF8 { decoded in
            decoded.count == bytes.count && (bytes.isEmpty || memcmp(decoded.baseAddress!, bytes.baseAddress!, bytes.count) == 0)
        }
        return same ? text : nil
    }

    /// The text `bytes` spell, or `nil` when they are not valid UTF-8.
    ///
    /// - Complexity: O(n).
    static func string(validating bytes: some Collection<UInt8>) -> String? {
        let direct = bytes.withContiguousStorageIfAvailable { string(validating: UnsafeRawBufferPointer($0)) }
        if let direct { return direct }
        return Array(bytes).withUnsafeBytes { string(validating: $0) }
    }
}
