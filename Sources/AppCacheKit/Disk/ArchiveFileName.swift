import Foundation

/// How a collection's archive file is named: readably, as a person browsing the cache would
/// want (`MenuItems+restaurant-42.archive`), and still collision-free.
///
/// The name is the cache name, `+` and the key (none for a type's default collection), as
/// they are, in Unicode normalization form C (strings Swift considers equal get one name), then
/// `.archive`. A short hash of the exact names is added (`MenuItems~3f09c2a1b44e.archive`) only
/// where the plain name could be another collection's:
/// - a character that may not stand in a file name was replaced by `_` (`/`, `\`, `:`, NUL,
///   control and format characters, `%`, `+`, `~`, `*`, `?`, `"`, `<`, `>`, `|`, a leading
///   `.`, a leading or trailing space);
/// - the volume ignores case (macOS by default) and the name holds anything but lowercase
///   ASCII letters, digits and `-_. `: `MenuItems` and `menuitems` would be one file there,
///   and full case folding (`ß`, `ﬁ`) is not something to second-guess;
/// - the name is too long: then a readable prefix is kept before the hash.
///
/// The archive header holds the exact user, cache name and key, so the name need not be
/// reversible: listings and the inspector read headers, and a read refuses a file whose header
/// names another collection (so even a hash collision never serves another's items).
enum ArchiveFileName {
    /// The longest file name made, in bytes: under the usual 255, with room for a temporary
    /// file's prefix.
    static let maximumLength = 200
    /// How much of a name that is too long is kept before the hash.
    static let readablePrefixLength = 120

    /// The file name of the archive of `cacheName` under `key`.
    static func make(cacheName: String, key: String?, caseInsensitiveVolume: Bool) -> String {
        let name = readable(cacheName)
        let keyPart = key.map(readable)
        var stem = name.text
        if let keyPart { stem += "+" + keyPart.text }
        let lossy = name.lossy || keyPart?.lossy == true
        let caseAmbiguous = caseInsensitiveVolume && !stem.utf8.allSatisfy(isCaseSafe)
        let suffix = CacheLayout.archiveSuffix
        guard lossy || caseAmbiguous || stem.utf8.count + suffix.utf8.count > maximumLength else {
            return stem + suffix
        }
        let exact = cacheName.precomposedStringWithCanonicalMapping + (key.map { "\u{1}" + $0.precomposedStringWithCanonicalMapping } ?? "")
        return prefix(of: stem, bytes: readablePrefixLength) + "~" + StableHash.hex128(exact).prefix(12) + suffix
    }

    /// What every archive file name of `cacheName` begins with: a listing keeps the names
    /// that do, then checks their headers.
    static func commonPrefix(cacheName: String) -> String {
        prefix(of: readable(cacheName).text, bytes: readablePrefixLength)
    }

    /// `text` in form C with every character that may not stand in a file name replaced by
    /// `_`, and whether any was.
    static func readable(_ text: String) -> (text: String, lossy: Bool) {
        if let ascii = readableASCII(text) { return ascii }
        var scalars = String.UnicodeScalarView()
        var lossy = false
        let normalized = text.precomposedStringWithCanonicalMapping.unicodeScalars
        let count = normalized.count
        for (position, scalar) in normalized.enumerated() {
            let atEdge = position == 0 || position == count - 1
            if isAllowed(scalar, first: position == 0, atEdge: atEdge) {
                scalars.append(scalar)
            } else {
                scalars.append("_")
                lossy = true
            }
        }
        return (String(scalars), lossy)
    }

    /// ``readable(_:)`` of printable ASCII text, which is its own form C and needs no look-up
    /// of character properties; `nil` for any other text.
    private static func readableASCII(_ text: String) -> (text: String, lossy: Bool)? {
        var text = text
        return text.withUTF8 { utf8 -> (String, Bool)? in
            guard utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
            var lossy = false
            let last = utf8.count - 1
            let bytes = utf8.enumerated().map { position, byte -> UInt8 in
                guard isAllowedASCII(byte, first: position == 0, atEdge: position == 0 || position == last) else {
                    lossy = true
                    return UInt8(ascii: "_")
                }
                return byte
            }
            return (String(decoding: bytes, as: UTF8.self), lossy)
        }
    }

    /// ``isAllowed(_:first:atEdge:)`` of a printable ASCII character.
    private static func isAllowedASCII(_ byte: UInt8, first: Bool, atEdge: Bool) -> Bool {
        switch byte {
        case UInt8(ascii: "/"), UInt8(ascii: "\\"), UInt8(ascii: ":"), UInt8(ascii: "%"), UInt8(ascii: "+"), UInt8(ascii: "~"),
            UInt8(ascii: "*"), UInt8(ascii: "?"), UInt8(ascii: "\""), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "|"):
            return false
        case UInt8(ascii: "."): return !first
        case UInt8(ascii: " "): return !atEdge
        default: return true
        }
    }

    private static func isAllowed(_ scalar: Unicode.Scalar, first: Bool, atEdge: Bool) -> Bool {
        switch scalar {
        case "/", "\\", ":", "%", "+", "~", "*", "?", "\"", "<", ">", "|", "\u{0}": return false
        case ".": return !first
        case " ": return !atEdge
        default: break
        }
        switch scalar.properties.generalCategory {
        case .control, .format, .surrogate, .privateUse, .unassigned, .lineSeparator, .paragraphSeparator: return false
        default: return true
        }
    }

    /// Lowercase ASCII letters, digits and `-`, `_`, `.`, ` `, `+`: the same on every volume.
    private static func isCaseSafe(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: " "), UInt8(ascii: "+"):
            return true
        default:
            return false
        }
    }

    /// The longest prefix of `text` of at most `bytes` UTF-8 bytes that ends on a character.
    private static func prefix(of text: String, bytes: Int) -> String {
        var result = ""
        var used = 0
        for character in text {
            let size = character.utf8.count
            guard used + size <= bytes else { break }
            result.append(character)
            used += size
        }
        return result
    }
}
