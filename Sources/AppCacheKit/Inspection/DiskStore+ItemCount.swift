import Foundation

extension DiskStore {
    /// How many items the archive `summary` describes holds, read from its payload's framing
    /// (``PayloadItemCount``) without reading the rest: 13 bytes of a binary payload, a JSON
    /// payload in chunks of at most ``PayloadItemCount/chunkLength`` bytes. Read-only.
    ///
    /// - Parameters:
    ///   - path: the archive's path (a file, or a record of its directory's pack).
    ///   - summary: what ``summary(at:)`` read there; its header's payload length was checked
    ///     against the bytes the archive holds.
    /// - Returns: `nil` when it cannot be told: an unknown codec, framing that does not hold,
    ///   an archive replaced since `summary` was read, or a read that fails.
    /// - Complexity: O(1) for a binary payload; O(n) in the payload's length for JSON.
    func itemCount(at path: CachePath, of summary: Summary) -> Int? {
        guard let payloadLength = Int(exactly: summary.header.payloadLength) else { return nil }
        let codec = summary.header.codec
        if summary.isPacked {
            guard let packed = packs.locate(path, fileSystem: fileSystem, change: nil), packed.entry.identity == summary.identity,
                packed.entry.damage == nil, payloadLength <= packed.entry.bodyLength
            else { return nil }
            let payloadOffset = packed.entry.bodyOffset + packed.entry.bodyLength - payloadLength
            return PayloadItemCount.count(codec: codec, payloadLength: payloadLength) { buffer, offset in
                packed.file.read(into: buffer, count: buffer.count, at: payloadOffset + offset) == buffer.count
            }
        }
        return try? fileSystem.withFileForReading(path) { opened throws(SystemError) -> Int? in
            // The file read is the one summarised, and still holds the payload its header promised.
            guard case .file(let file) = opened, file.identity == summary.identity, payloadLength <= file.size else { return nil }
            let payloadOffset = file.size - payloadLength
            return PayloadItemCount.count(codec: codec, payloadLength: payloadLength) { buffer, offset in
                guard let read = try? file.read(count: buffer.count, at: payloadOffset + offset), read.count == buffer.count else { return false }
                read.copyBytes(to: buffer)
                return true
            }
        }
    }
}
