import Foundation

/// What one process knows of a user directory's pack (``PackFile``): where each live archive's
/// record is, and how far the pack has been read.
///
/// A value, applied record by record in the pack's order, whether the records were read from
/// the file or just appended by this process: both give the same index.
struct PackIndex {
    /// Where one archive's newest record is.
    struct Entry: Equatable, Sendable {
        /// The record's offset in the pack (its prefix).
        var offset: Int
        /// The archive's bytes after the prefix.
        var bodyLength: Int
        /// Which write of the archive this is: its ``FileVersion``.
        var sequence: UInt64
        var cachedDate: Date

        /// The record's bytes, prefix and body: what the archive takes in the pack.
        var length: Int { PackRecord.prefixLength + bodyLength }
        /// Where the archive's bytes start.
        var bodyOffset: Int { offset + PackRecord.prefixLength }
        var identity: FileVersion { FileVersion(value: sequence) }
    }

    /// The live archives, by the hash of their file names.
    private(set) var entries: [UInt64: Entry] = [:]
    /// The end of the last whole record read or appended: where the next one starts.
    private(set) var end = 0
    /// The bytes the live archives' records take.
    private(set) var liveBytes = 0

    /// The bytes of records no longer live (replaced, removed, re-dated).
    var deadBytes: Int { end - liveBytes }

    /// Takes the record at `offset`, which must be ``end``, into account.
    mutating func apply(_ record: PackRecord, at offset: Int) {
        assert(offset == end, "records are applied in the pack's order")
        end = offset + record.length
        switch record.kind {
        case .archive:
            let entry = Entry(offset: offset, bodyLength: record.bodyLength, sequence: record.sequence, cachedDate: record.cachedDate)
            if let old = entries.updateValue(entry, forKey: record.nameHash) { liveBytes -= old.length }
            liveBytes += entry.length
        case .removal:
            if let old = entries.removeValue(forKey: record.nameHash) { liveBytes -= old.length }
        case .redating:
            entries[record.nameHash]?.cachedDate = record.cachedDate
            entries[record.nameHash]?.sequence = record.sequence
        }
    }

    /// The live archive whose file name hashes to `hash`.
    subscript(hash: UInt64) -> Entry? { entries[hash] }
}
