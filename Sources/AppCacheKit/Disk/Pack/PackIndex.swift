import Foundation

/// What one process knows of a user directory's pack (``PackFile``): where each live archive's
/// record is, how far the pack has been read, and the damage met on the way.
///
/// A value, applied record by record in the pack's order, whether the records were read from
/// the file or just appended by this process: both give the same index. Bytes that are no
/// record (damage, skipped to the next record that checks) are noted as such: they count as
/// dead, and an archive whose newest record they held (when its archive header still names
/// it) is known to be damaged rather than served from an older record.
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
        /// Why the archive must not be read, if it must not: its newest record is damage (a
        /// date that is none, or bytes that are no record), so this one is not its newest.
        var damage: String?
        /// Where the re-dating record that gave the archive its ``sequence`` and ``cachedDate``
        /// is, if one did (a checkpoint names it, so that a lookup takes the same date).
        var redatedAt: Int?

        /// The record's bytes, prefix and body: what the archive takes in the pack.
        var length: Int { PackRecord.prefixLength + bodyLength }
        /// Where the archive's bytes start.
        var bodyOffset: Int { offset + PackRecord.prefixLength }
        var identity: FileVersion { FileVersion(value: sequence) }
    }

    /// An ``Entry`` as the index keeps it: plain data (the reason of a damaged one is kept
    /// beside, in ``damageReasons``), so that the index's table is copied, sorted, grown and
    /// freed without a reference count per entry.
    struct Stored: Equatable, Sendable {
        var offset: Int
        var bodyLength: Int
        var sequence: UInt64
        var cachedDate: Date
        var isDamaged = false
        var redatedAt: Int?

        var length: Int { PackRecord.prefixLength + bodyLength }
        var bodyOffset: Int { offset + PackRecord.prefixLength }
        var identity: FileVersion { FileVersion(value: sequence) }
    }

    /// A stretch of the pack that is no record, skipped while reading.
    struct Damage: Equatable, Sendable {
        var offset: Int
        var length: Int
        var reason: String
    }

    /// What records read after a checkpoint (``PackCheckpoint``) say of an archive whose
    /// newest record they do not hold: the checkpoint's entry is then not the whole truth.
    enum Override: Equatable, Sendable {
        case removed
        case redated(sequence: UInt64, date: Date)
        case damaged(String)
    }

    /// Where a key table's record is (``PackRecord/Kind/keyTable``): the first of its newest
    /// two copies whose prefix checked when read (the other is the record after it).
    struct TableSpot: Equatable, Sendable {
        var offset: Int
        var bodyLength: Int
    }

    /// The live archives, by the hash of their file names.
    private(set) var entries: [UInt64: Stored] = [:]
    /// The key tables the pack's archives share, by name (the hash of their bytes).
    private(set) var tables: [UInt64: TableSpot] = [:]
    /// Why each damaged entry is damaged.
    private var damageReasons: [UInt64: String] = [:]
    /// Whether this index holds only the records after ``end`` it started at, a checkpoint
    /// holding the ones before: removals, re-datings and damage of archives it does not hold
    /// are then kept in ``overrides``.
    private(set) var continuesCheckpoint = false
    /// What the records read say of archives the checkpoint holds (see ``continuesCheckpoint``).
    private(set) var overrides: [UInt64: Override] = [:]
    /// Where the last record read or appended starts; `nil` before the first.
    private(set) var lastRecordOffset: Int?
    /// The end of the last whole record read or appended: where the next one starts.
    private(set) var end = 0
    /// The bytes the live archives' records take.
    private(set) var liveBytes = 0
    /// The bytes the key tables' records take: not an archive's, and not given back by a
    /// compaction while an archive uses them.
    private(set) var tableBytes = 0
    /// The stretches of damage met, in the pack's order.
    private(set) var damage: [Damage] = []

    /// The bytes of records no longer live (replaced, removed, re-dated) and of damage.
    var deadBytes: Int { end - liveBytes - tableBytes }

    /// An index of a whole pack, read from its start.
    init() {}

    /// An index of the records from `end` on, a checkpoint covering those before it.
    init(continuingAt end: Int) {
        self.end = end
        continuesCheckpoint = true
    }

    /// Takes the record at `offset`, which must be ``end``, into account.
    @discardableResult
    mutating func apply(_ record: PackRecord, at offset: Int) -> Applied {
        assert(offset == end, "records are applied in the pack's order")
        end = offset + record.length
        lastRecordOffset = offset
        let damage = record.hasSaneDate ? nil : "a record whose date is no date a write makes"
        if damage != nil { self.damage.append(Damage(offset: offset, length: record.length, reason: damage!)) }
        switch record.kind {
        case .archive:
            let entry = Stored(
                offset: offset, bodyLength: record.bodyLength, sequence: record.sequence, cachedDate: record.cachedDate,
                isDamaged: damage != nil)
            let old = entries.updateValue(entry, forKey: record.nameHash)
            if let old {
                liveBytes -= old.length
                if old.isDamaged { damageReasons[record.nameHash] = nil }
            }
            if let damage { damageReasons[record.nameHash] = damage }
            liveBytes += entry.length
            if continuesCheckpoint { overrides[record.nameHash] = nil }
            return Applied(entry: entry, wasLive: old != nil)
        case .removal:
            let old = entries.removeValue(forKey: record.nameHash)
            if let old {
                liveBytes -= old.length
                if old.isDamaged { damageReasons[record.nameHash] = nil }
            }
            if continuesCheckpoint { overrides[record.nameHash] = .removed }
            return Applied(entry: nil, wasLive: old != nil)
        case .keyTable:
            // Kept until a compaction finds no archive that uses it; a copy whose date is damage
            // names nothing.
            tableBytes += record.length
            // The newest pair of copies names the table (a writer that found the older ones
            // damaged wrote it again); the pair's second copy is the record after the first.
            if damage == nil {
                let spot = tables[record.nameHash]
                let isSecondCopy = spot.map { $0.offset + PackRecord.prefixLength + $0.bodyLength == offset } ?? false
                if !isSecondCopy { tables[record.nameHash] = TableSpot(offset: offset, bodyLength: record.bodyLength) }
            }
            return Applied(entry: nil, wasLive: false)
        case .redating:
            guard entries[record.nameHash] != nil else {
                // Of an archive the checkpoint may hold: kept for when it is looked up.
                guard continuesCheckpoint else { return Applied(entry: nil, wasLive: false) }
                switch overrides[record.nameHash] {
                case .removed, .damaged: break
                case .redated, nil:
                    overrides[record.nameHash] = damage.map { .damaged($0) } ?? .redated(sequence: record.sequence, date: record.cachedDate)
                }
                return Applied(entry: nil, wasLive: false)
            }
            if let damage {
                entries[record.nameHash]?.isDamaged = true
                damageReasons[record.nameHash] = damage
            } else {
                entries[record.nameHash]?.cachedDate = record.cachedDate
                entries[record.nameHash]?.sequence = record.sequence
                entries[record.nameHash]?.redatedAt = offset
            }
            return Applied(entry: nil, wasLive: true)
        }
    }

    /// What ``apply(_:at:)`` did: the archive's entry now, for an archive record, and whether
    /// the index held the archive before.
    struct Applied {
        var entry: Stored?
        var wasLive: Bool
    }

    /// Notes that the bytes from `offset` (``end``) to `next` are no record, and why; the
    /// archives `hashes` name (whose records the bytes held, as far as they still tell) are
    /// damaged: their older records are not their newest.
    mutating func skipDamage(from offset: Int, to next: Int, reason: String, naming hashes: [UInt64]) {
        assert(offset == end && next > offset, "damage is skipped in the pack's order")
        end = next
        damage.append(Damage(offset: offset, length: next - offset, reason: reason))
        for hash in hashes {
            if entries[hash] != nil {
                entries[hash]?.isDamaged = true
                damageReasons[hash] = reason
            } else if continuesCheckpoint, overrides[hash] != .removed {
                overrides[hash] = .damaged(reason)
            }
        }
    }

    /// The live archive whose file name hashes to `hash`.
    subscript(hash: UInt64) -> Entry? {
        entries[hash].map { entry(of: $0, hash: hash) }
    }

    /// `stored`, the entry of `hash`, with the reason of its damage.
    func entry(of stored: Stored, hash: UInt64) -> Entry {
        Entry(
            offset: stored.offset, bodyLength: stored.bodyLength, sequence: stored.sequence, cachedDate: stored.cachedDate,
            damage: stored.isDamaged ? damageReasons[hash] ?? "the archive's newest record is damaged" : nil,
            redatedAt: stored.redatedAt)
    }

    /// Makes room for `count` live archives.
    mutating func reserveCapacity(_ count: Int) {
        entries.reserveCapacity(count)
    }
}
