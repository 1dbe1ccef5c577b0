/// How many items a collection's payload holds, told from the payload's framing without
/// decoding a single item (the inspector knows no model types).
///
/// The archive header records no item count (its decoded-size estimate is memory, not items),
/// so the count comes from the payload:
///
/// - ``PayloadCodec/binary``: the payload starts with the items' array, an unkeyed container
///   (tag, byte length `u32`, count `u32`; see ``BinaryFormat``), and ends with the key table's
///   offset (`u32`). Thirteen bytes tell the count. It is believed only when the framing holds:
///   the array ends exactly where the key table starts, and claims no more elements than its
///   bytes (each element takes at least its tag's byte).
/// - ``PayloadCodec/json``: a top-level JSON array, whose elements are counted by one pass that
///   follows strings and nesting (constant memory, no tree). It is believed only when the
///   bytes are one array and nothing after it.
///
/// Damaged framing, an unknown codec or a read that fails gives `nil`: unknown, never a guess.
/// Without a checksum check (``CacheRootListing/read(root:verifyChecksums:progress:)`` without
/// verification), a payload damaged where the framing does not look is counted as its framing
/// says.
enum PayloadItemCount {
    /// The bytes of a JSON payload read at once while counting.
    static let chunkLength = 1 << 20

    /// The count from a payload read through `read`, which fills its buffer with the payload's
    /// bytes from the given offset and says whether it could.
    ///
    /// - Parameters:
    ///   - codec: the header's codec field.
    ///   - payloadLength: the payload's length, as the header promised and the file holds.
    ///   - read: fills the whole buffer from the payload at the offset; `false` when it cannot.
    /// - Complexity: two reads of 9 and 4 bytes for a binary payload; O(n) in the payload's
    ///   length for JSON, in reads of at most ``chunkLength`` bytes.
    static func count(
        codec: UInt16, payloadLength: Int, read: (UnsafeMutableRawBufferPointer, Int) -> Bool
    ) -> Int? {
        switch PayloadCodec(headerValue: codec) {
        case .binary:
            guard payloadLength >= 14 else { return nil }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 13, alignment: 8)
            defer { buffer.deallocate() }
            let prefix = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<9])
            let trailer = UnsafeMutableRawBufferPointer(rebasing: buffer[9..<13])
            guard read(prefix, 0), read(trailer, payloadLength - 4) else { return nil }
            return binary(prefix: UnsafeRawBufferPointer(prefix), trailer: UnsafeRawBufferPointer(trailer), payloadLength: payloadLength)
        case .json:
            var counter = JSONArrayCounter()
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(min(payloadLength, chunkLength), 1), alignment: 8)
            defer { buffer.deallocate() }
            var offset = 0
            while offset < payloadLength {
                let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<min(buffer.count, payloadLength - offset)])
                guard read(chunk, offset) else { return nil }
                guard counter.feed(UnsafeRawBufferPointer(chunk)) else { return nil }
                offset += chunk.count
            }
            return counter.count
        case nil:
            return nil
        }
    }

    /// The count from a whole payload held in memory (one whose checksum was checked).
    ///
    /// - Complexity: O(1) for a binary payload; O(n) in its length for JSON.
    static func count(codec: UInt16, payload: UnsafeRawBufferPointer) -> Int? {
        count(codec: codec, payloadLength: payload.count) { buffer, offset in
            guard offset >= 0, buffer.count <= payload.count - offset, let base = payload.baseAddress else { return false }
            buffer.copyMemory(from: UnsafeRawBufferPointer(start: base + offset, count: buffer.count))
            return true
        }
    }

    /// The count a binary payload's framing tells: `prefix` its first 9 bytes, `trailer` its
    /// last 4; `nil` when the framing does not hold.
    static func binary(prefix: UnsafeRawBufferPointer, trailer: UnsafeRawBufferPointer, payloadLength: Int) -> Int? {
        guard prefix.count == 9, trailer.count == 4, prefix[0] == BinaryFormat.unkeyed else { return nil }
        let byteLength = Int(UInt32(littleEndian: prefix.loadUnaligned(fromByteOffset: 1, as: UInt32.self)))
        let count = Int(UInt32(littleEndian: prefix.loadUnaligned(fromByteOffset: 5, as: UInt32.self)))
        let tableOffset = Int(UInt32(littleEndian: trailer.loadUnaligned(as: UInt32.self)))
        // The array ends where the key table starts; the table (at least its count's byte) and
        // its offset fit after it; no element takes less than a byte.
        guard 9 + byteLength == tableOffset, tableOffset + 1 + 4 <= payloadLength, count <= byteLength else { return nil }
        return count
    }
}

/// Counts the elements of a top-level JSON array fed to it in pieces, following strings (and
/// their escapes) and nesting, without building anything: memory is constant whatever the
/// payload.
///
/// It checks the shape it walks (one array, no element missing between commas, nothing after
/// the array), not every rule of JSON: its count is the one a decoder would find in a payload
/// that decodes.
struct JSONArrayCounter {
    private var depth = 0
    private var inString = false
    private var escaped = false
    private var started = false
    private var finished = false
    /// After `[` or a `,` of the top-level array: the next value is a new element.
    private var expectingElement = false
    private var elements = 0

    /// Feeds the next bytes.
    ///
    /// - Returns: `false` once the bytes cannot be a JSON array (feeding more is pointless).
    /// - Complexity: O(n) in `bytes.count`.
    mutating func feed(_ bytes: UnsafeRawBufferPointer) -> Bool {
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): continue
            default: break
            }
            guard !finished else { return false }
            guard started else {
                guard byte == UInt8(ascii: "[") else { return false }
                (started, depth, expectingElement) = (true, 1, true)
                continue
            }
            if depth == 1 && expectingElement {
                switch byte {
                case UInt8(ascii: "]"):
                    // `[]` is empty; `[1,]` is not JSON.
                    guard elements == 0 else { return false }
                case UInt8(ascii: ","):
                    return false
                default:
                    elements += 1
                    expectingElement = false
                }
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
                if depth == 0 {
                    guard byte == UInt8(ascii: "]") else { return false }
                    finished = true
                }
            case UInt8(ascii: ","):
                if depth == 1 { expectingElement = true }
            default:
                break
            }
        }
        return true
    }

    /// The number of elements, once the whole array was fed; `nil` when it was not a whole
    /// array.
    var count: Int? {
        finished ? elements : nil
    }
}
