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
                packed.entry.damage == nil, case .success(let parsed) = Self.packedHeader(packed)
            else { return nil }
            // The payload as stored: whole, or (in the compact form, ``PackedArchive``) its
            // values without the key table the pack shares, whose offset is their length.
            let storedOffset = packed.entry.bodyOffset + parsed.length
            let storedLength = packed.entry.bodyLength - parsed.length
            guard parsed.holdsPayload(storedLength: storedLength) else { return nil }
            return PayloadItemCount.count(codec: codec, payloadLength: payloadLength) { buffer, offset in
                if offset >= 0, buffer.count <= storedLength - offset {
                    return packed.file.read(into: buffer, count: buffer.count, at: storedOffset + offset) == buffer.count
                }
                guard parsed.keyTable != nil, offset == payloadLength - 4, buffer.count == 4 else { return false }
                buffer.storeBytes(of: UInt32(truncatingIfNeeded: storedLength).littleEndian, as: UInt32.self)
                return true
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
