import Foundation
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The packs (``PackFile``) of one version directory's user directories, as this process knows
/// them: each held open with its ``PackIndex``.
///
/// A reader asks ``locate(_:fileSystem:change:)``. While the disk's shared change count stays
/// the one the pack was last checked at, that costs no system call; once it moved (any process
/// changed the disk), one `fstatat` tells whether the pack is the same file, grown (its new
/// records are read), or replaced (it is read again from the start). Damage met while reading
/// is skipped (``PackFile/scan(into:upTo:maximumBodyLength:identify:)``) and reported once. A
/// writer, under the lock file's lock, checks the pack the same way, cuts off a tail after the
/// last record that checks (a torn append, or garbage) and appends all its records in one
/// `write` (``append(_:toDirectory:fileSystem:)``); damage between records stays until a
/// compaction drops it.
///
/// Thread safety: `Sendable`. One ``BlockingLock`` guards the table; it is held across the
/// short file I/O of checking, reading new records and appending (its job is to order those),
/// never across a caller's code. Lock order: the disk writer's lock, then this one.
final class PackTable: Sendable {
    /// Archives (header and payload) up to this many bytes are packed; larger ones stay files
    /// of their own. 0: nothing is packed (packs written by others are still read).
    let limit: Int
    /// The default ``limit``: an archive read in one system call (``DiskStore/singleReadLimit``).
    static let defaultLimit = 64 << 10
    /// The largest archive any pack record may hold, whatever the writer's limit.
    static let maximumBodyLength = 1 << 20
    /// A pack is compacted once its dead records take more than its live ones and at least
    /// this many bytes.
    static let minimumCompactionWaste = 1 << 20
    /// A compaction writes the new pack in runs of about this many bytes.
    static let compactionWriteSize = 256 << 10
    /// A writer checkpoints a pack (``PackCheckpoint``) once this many of its bytes were
    /// written after its checkpoint, and at least half the checkpoint's own size: what the
    /// first read after launch reads beyond a lookup is at most that (0.25 MiB up to about
    /// 26,000 archives, 1 MiB at 100,000), and what writing checkpoints costs a write stays a
    /// bounded share of it (two bytes of checkpoint, and a sort, per byte appended at most).
    static let checkpointInterval = 256 << 10

    /// The bytes appended after a checkpoint of a pack of `archives` live archives that make
    /// the next one due (see ``checkpointInterval``).
    static func checkpointInterval(archives: Int) -> Int {
        max(checkpointInterval, archives * PackCheckpoint.entryLength / 2)
    }
    /// Packs with fewer live archives than this are not checkpointed: reading all their
    /// records costs less than writing checkpoints as they change.
    static let checkpointMinimumArchives = 500

    private struct Slot {
        var file: PackFile?
        var index = PackIndex()
        /// The change count the pack was last checked at.
        var checkedAt: UInt64?
        /// The pack's size when last checked.
        var size = 0
        /// Why reading stopped before ``size``, if it did.
        var stop: PackFile.Stop = .end
        /// How many of the index's stretches of damage were reported.
        var reportedDamage = 0
        /// The pack's checkpoint, while only lookups were asked of it: ``index`` then holds
        /// only the records after the checkpoint's covered end.
        var checkpoint: PackCheckpoint?
        /// The checkpoint's entries looked up so far, checked against their records (`nil`: not
        /// in the checkpoint).
        var looked: [UInt64: PackIndex.Entry?] = [:]
        /// How much of the pack the checkpoint on disk covers, as this process knows (a writer's
        /// knowledge, to tell when to write the next one); `nil`: not looked at yet.
        var checkpointedEnd: Int?
        /// The key tables of the pack read so far (``PackedArchive``), by name.
        var keyTables: [UInt64: [UInt8]] = [:]
    }

    /// A pack shares a binary payload's key table (``PackedArchive``) only while it holds fewer
    /// than this many: past it, payloads keep theirs (models whose key names are data, such as
    /// dictionaries, would otherwise add a table per archive).
    static let maximumSharedTables = 64

    /// The packs read or written, by user directory: the first (the signed-in user's, almost
    /// always the only one) found by comparing its name, not hashing it.
    private let slots = BlockingLock<FirstInlineDictionary<String, Slot>>(FirstInlineDictionary())
    /// How many times this process found a pack holding other than the records written to it:
    /// damage between records, a tail cut off, a pack shorter than it was. The disk index,
    /// which counts what was written, is rebuilt from what the packs hold when it moves
    /// (``JournalLedger``).
    private let surprises = Locked<UInt64>(0)
    /// The pack bytes this process has scanned for record prefixes (what a checkpoint saves).
    private let scanned = Locked<Int>(0)
    /// The largest pack written to: past it, archives are files of their own.
    let maximumSize: Int
    /// The hash of the file name of the archive whose bytes (header first) are given, or `nil`:
    /// names the collection whose record a stretch of damage begins.
    private let identify: @Sendable (UnsafeRawBufferPointer) -> UInt64?
    /// Told of damage met while reading: the pack's path and what was found.
    private let onDamage: @Sendable (String, String) -> Void

    init(
        limit: Int, maximumSize: Int = PackFile.maximumSize, identify: @escaping @Sendable (UnsafeRawBufferPointer) -> UInt64? = { _ in nil },
        onDamage: @escaping @Sendable (String, String) -> Void = { _, _ in }
    ) {
        self.limit = min(max(limit, 0), Self.maximumBodyLength)
        self.maximumSize = min(maximumSize, PackFile.maximumSize)
        self.identify = identify
        self.onDamage = onDamage
    }

    /// An archive found in a pack: the pack it is in (held open) and where.
    struct Located: Sendable {
        let file: PackFile
        let entry: PackIndex.Entry
        /// The hash of the archive's file name (``StableHash/value64(_:)``).
        let hash: UInt64
        /// The user directory whose pack it is.
        let directory: String
        /// The pack's key tables this process had read when it located the archive: what a
        /// read of an archive that shares one finds without asking the table again.
        var keyTables: [UInt64: [UInt8]] = [:]
        /// The archive's body as the scan that located it read it, when that scan held it
        /// whole: what its read takes instead of a `pread` (``PackFile/scan(into:upTo:maximumBodyLength:identify:keeping:_:)``).
        var body: [UInt8]?
    }

    /// How many times this process found a pack holding other than what was written to it (see
    /// ``surprises``): a count to compare with one taken earlier.
    var surpriseCount: UInt64 {
        surprises.withLock { $0 }
    }

    /// The pack bytes this process has scanned for record prefixes, checkpoints aside: what
    /// reading packs has cost.
    var scannedBytes: Int {
        scanned.withLock { $0 }
    }

    private func noteSurprise() {
        surprises.withLock { $0 &+= 1 }
    }

    /// Where the archive at `path` is in its directory's pack; `nil` when the pack does not
    /// hold it (it may be a file of its own).
    ///
    /// - Parameter change: the disk's change count the read started at, if known: the pack is
    ///   then checked only if it moved since the last check.
    func locate(_ path: CachePath, fileSystem: FileSystem, change: UInt64?) -> Located? {
        guard let directory = path.directory else { return nil }
        let hash = StableHash.value64(path.name)
        return slots.withLock { slots in
            // Taken out while it changes, so that its index is changed in place, not copied.
            var slot = slots.removeValue(forKey: directory) ?? Slot()
            defer { slots[directory] = slot }
            var read: PackFile.ReadBody?
            try? refresh(&slot, directory, fileSystem, change: change, writable: false, lookup: true, keeping: hash, &read)
            guard let entry = entry(hash, in: &slot, directory, fileSystem), let file = slot.file else { return nil }
            return Located(
                file: file, entry: entry, hash: hash, directory: directory, keyTables: slot.keyTables,
                body: read?.offset == entry.bodyOffset ? read?.bytes : nil)
        }
    }

    /// The newest record of the archive whose name hashes to `hash`: from the records read, or
    /// from the checkpoint (its record's prefix checked) with what the records after it say.
    /// A checkpoint that fails a check is set aside and the pack read whole.
    private func entry(_ hash: UInt64, in slot: inout Slot, _ directory: String, _ fileSystem: FileSystem) -> PackIndex.Entry? {
        if let entry = slot.index[hash] { return entry }
        guard let checkpoint = slot.checkpoint, let file = slot.file else { return nil }
        var base: PackIndex.Entry
        if let known = slot.looked[hash] {
            guard let known else { return nil }
            base = known
        } else {
            switch checkpoint.lookup(hash) {
            case .absent:
                slot.looked[hash] = .some(nil)
                return nil
            case .found(let found):
                // The record the checkpoint names, and the re-dating that gave it its date, each
                // checked: what a scan of the pack would have made of them.
                guard let record = file.record(at: found.offset)?.record, record.kind == .archive, record.nameHash == hash,
                    record.bodyLength == found.bodyLength
                else { return readWhole(hash, &slot, directory, fileSystem) }
                base = PackIndex.Entry(
                    offset: found.offset, bodyLength: record.bodyLength, sequence: record.sequence, cachedDate: record.cachedDate,
                    damage: record.hasSaneDate ? nil : "a record whose date is no date a write makes", redatedAt: found.redatedAt)
                if let redatedAt = found.redatedAt {
                    guard let redating = file.record(at: redatedAt)?.record, redating.kind == .redating, redating.nameHash == hash, redating.hasSaneDate
                    else { return readWhole(hash, &slot, directory, fileSystem) }
                    base.sequence = redating.sequence
                    base.cachedDate = redating.cachedDate
                }
                if found.isDamaged, base.damage == nil { base.damage = "the archive's newest record is damaged" }
            case .damaged:
                return readWhole(hash, &slot, directory, fileSystem)
            }
            slot.looked[hash] = base
        }
        switch slot.index.overrides[hash] {
        case .removed: return nil
        case .redated(let sequence, let date):
            base.sequence = sequence
            base.cachedDate = date
        case .damaged(let reason): base.damage = reason
        case nil: break
        }
        return base
    }

    /// Sets `slot`'s checkpoint aside (it failed a check) and reads the pack whole.
    private func readWhole(_ hash: UInt64, _ slot: inout Slot, _ directory: String, _ fileSystem: FileSystem) -> PackIndex.Entry? {
        noteSurprise()
        slot.checkpointedEnd = 0
        try? refresh(&slot, directory, fileSystem, change: nil, writable: false)
        return slot.index[hash]
    }

    /// Every archive `directory`'s pack holds, checked against the file now.
    ///
    /// - Throws: `SystemError` when a pack is there but cannot be opened (too many open
    ///   files, no permission): nothing can be said of its archives.
    func archives(inDirectory directory: String, fileSystem: FileSystem) throws(SystemError) -> [Located] {
        let result = slots.withLock { slots -> Result<[Located], SystemError> in
            // Taken out while it changes, so that its index is changed in place, not copied.
            var slot = slots.removeValue(forKey: directory) ?? Slot()
            defer { slots[directory] = slot }
            try? refresh(&slot, directory, fileSystem, change: nil, writable: false)
            guard let file = slot.file else {
                let path = PackFile.path(in: directory)
                if PackFile.current(in: directory, fileSystem: fileSystem) != nil {
                    return .failure(SystemError(operation: "open", errorNumber: errno == 0 ? EIO : errno, path: fileSystem.displayPath(path)))
                }
                return .success([])
            }
            let index = slot.index
            return .success(index.entries.sorted { $0.value.offset < $1.value.offset }.map {
                Located(file: file, entry: index.entry(of: $0.value, hash: $0.key), hash: $0.key, directory: directory)
            })
        }
        switch result {
        case .success(let archives): return archives
        case .failure(let error): throw error
        }
    }

    /// Records gathered for one append, built in place: their prefixes' facts, and all their
    /// bytes (each prefix, then its body) one after another, exactly as the pack will hold them.
    struct Appending {
        private(set) var records: [PackRecord] = []
        private(set) var bytes: [UInt8] = []
        /// The key tables the records use, by name, each once: the append writes those the
        /// pack lacks before the records.
        private(set) var keyTables: [(name: UInt64, bytes: [UInt8])] = []
        /// The key tables the pack held as the writer last saw it, and those added here:
        /// whether a payload shares its table (see ``maximumSharedTables``).
        private var sharedTables: Set<UInt64> = []
        /// Whether a table the pack does not hold yet is shared: only in a pack of enough
        /// archives (``minimumArchivesSharingTables``) to pay for its two copies' page.
        private var sharesNewTables = true

        /// Nothing yet, with room for `byteCount` bytes; `sharedTables` are the names of the
        /// key tables the pack holds, as the writer last saw it.
        init(reservingCapacity byteCount: Int = 0, sharedTables: Set<UInt64> = [], sharesNewTables: Bool = true) {
            bytes.reserveCapacity(byteCount)
            self.sharedTables = sharedTables
            self.sharesNewTables = sharesNewTables
        }

        /// One record with no body: a removal or a re-dating.
        init(_ record: PackRecord) {
            self.init(reservingCapacity: PackRecord.prefixLength)
            add(record)
        }

        /// Adds a record with no body (a removal or a re-dating).
        mutating func add(_ record: PackRecord) {
            precondition(record.bodyLength == 0, "only an archive record has a body")
            records.append(record)
            record.appendPrefix(to: &bytes)
        }

        /// Adds an archive in an archive file's form: its prefix, its header encoded in place,
        /// then its payload. What earlier builds wrote, and still read; the tests write it to
        /// show that such packs still read (writers use ``addPacked(header:payload:nameHash:sequence:cachedDate:)``).
        ///
        /// - Returns: the record's prefix.
        @discardableResult
        mutating func addArchive(header: ArchiveHeader, payload: Data, nameHash: UInt64, sequence: UInt64, cachedDate: Date) -> PackRecord {
            let record = PackRecord(
                kind: .archive, bodyLength: header.encodedLength + payload.count, nameHash: nameHash, sequence: sequence, cachedDate: cachedDate)
            let start = bytes.count
            records.append(record)
            record.appendPrefix(to: &bytes)
            header.encode(into: &bytes)
            payload.withUnsafeBytes { bytes.append(contentsOf: $0) }
            // The prefix was written from the header's length: a header that encoded otherwise
            // would put every later record out of step with its prefix.
            precondition(bytes.count - start == record.length, "a header's encoded length is what it encodes")
            return record
        }

        /// Adds an archive in the compact form of ``PackedArchive``: its prefix, its header,
        /// then its payload, without the payload's key table when the pack shares it.
        ///
        /// - Returns: the record's prefix.
        @discardableResult
        mutating func addPacked(header: ArchiveHeader, payload: Data, nameHash: UInt64, sequence: UInt64, cachedDate: Date) -> PackRecord {
            let start = bytes.count
            bytes.append(contentsOf: repeatElement(0, count: PackRecord.prefixLength))
            payload.withUnsafeBytes { payload in
                var table: UInt64?
                var stored = payload
                if header.codec == PayloadCodec.binary.headerValue, let range = PackedArchive.sharableKeyTable(of: payload) {
                    table = share(UnsafeRawBufferPointer(rebasing: payload[range]))
                    if table != nil { stored = UnsafeRawBufferPointer(rebasing: payload[..<range.lowerBound]) }
                }
                PackedArchive.append(header, keyTable: table, to: &bytes)
                bytes.append(contentsOf: stored)
            }
            let record = PackRecord(
                kind: .archive, bodyLength: bytes.count - start - PackRecord.prefixLength, nameHash: nameHash, sequence: sequence,
                cachedDate: cachedDate)
            record.writePrefix(into: &bytes, at: start)
            records.append(record)
            return record
        }

        /// The name of the pack's key table `table` is, noted for the append; `nil` when the
        /// pack shares no more tables (the payload keeps its own).
        private mutating func share(_ table: UnsafeRawBufferPointer) -> UInt64? {
            // A batch's archives are mostly of one model: the last table first.
            if let last = keyTables.last, last.bytes.count == table.count,
                last.bytes.withUnsafeBytes({ memcmp($0.baseAddress!, table.baseAddress!, table.count) == 0 })
            {
                return last.name
            }
            let name = StableHash.value64(table)
            if keyTables.contains(where: { $0.name == name }) { return name }
            guard sharedTables.contains(name) || (sharesNewTables && sharedTables.count < PackTable.maximumSharedTables) else { return nil }
            sharedTables.insert(name)
            keyTables.append((name, Array(table)))
            return name
        }
    }

    /// The names of the key tables `directory`'s pack holds, as this process last saw it: what
    /// a writer's ``Appending`` starts from.
    func sharedTables(in directory: String) -> (names: Set<UInt64>, archives: Int) {
        slots.withLock { slots in slots[directory].map { (Set($0.index.tables.keys), $0.index.entries.count) } ?? ([], 0) }
    }

    /// A pack starts sharing a key table once it holds this many archives (with the ones being
    /// appended): a table's two copies take up to a page, which a few archives would not save.
    static let minimumArchivesSharingTables = 64

    /// The records of `table`'s two copies, and their bytes, for a pack whose next record
    /// starts at `offset`: each body the table's length (4 bytes), the table, and a CRC-32 of
    /// both; the first copy padded with zeros so that the second starts a new 4 KiB page, where
    /// a page the disk loses or zeroes takes at most one of them.
    private static func keyTableRecords(_ name: UInt64, _ table: [UInt8], at offset: Int) -> (records: [PackRecord], bytes: [UInt8]) {
        var body: [UInt8] = []
        body.appendLittleEndian(UInt32(table.count))
        body += table
        body.appendLittleEndian(body.withUnsafeBytes { CRC32.checksum($0) })
        let end = offset + PackRecord.prefixLength + body.count
        let padding = (keyTablePage - end % keyTablePage) % keyTablePage
        var records: [PackRecord] = []
        var bytes: [UInt8] = []
        for copy in 0..<2 {
            let length = body.count + (copy == 0 ? padding : 0)
            let record = PackRecord(kind: .keyTable, bodyLength: length, nameHash: name, sequence: UniqueNumbers.next(), cachedDate: Date())
            record.appendPrefix(to: &bytes)
            bytes += body
            if copy == 0 { bytes.append(contentsOf: repeatElement(0, count: padding)) }
            records.append(record)
        }
        return (records, bytes)
    }

    /// The page a key table's two copies never share (see ``keyTableRecords(_:_:at:)``).
    private static let keyTablePage = 4096

    /// The key table `name` of the pack `file` at the record at `offset`, or at the record after
    /// it (its second copy), checked: its prefix, its CRC-32 and its name.
    private static func readKeyTable(_ name: UInt64, in file: PackFile, at offset: Int) -> [UInt8]? {
        var offset = offset
        for _ in 0..<2 {
            guard let (record, _) = file.record(at: offset), record.kind == .keyTable, record.nameHash == name else { return nil }
            let next = offset + record.length
            if record.bodyLength > 8, record.bodyLength <= PackedArchive.maximumSharedTableLength + 8 + keyTablePage {
                var body = [UInt8](repeating: 0, count: record.bodyLength)
                let filled = body.withUnsafeMutableBytes { file.read(into: $0, count: record.bodyLength, at: offset + PackRecord.prefixLength) }
                let length = filled == record.bodyLength ? Int(body.readLittleEndian(at: 0) as UInt32) : Int.max
                if length <= body.count - 8 {
                    let table = Array(body[4..<(4 + length)])
                    let checks = body.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[..<(4 + length)])) }
                        == body.readLittleEndian(at: 4 + length)
                    if checks, table.withUnsafeBytes({ StableHash.value64($0) }) == name { return table }
                }
            }
            offset = next
        }
        return nil
    }

    /// The key table `name` of the pack that holds `located` (``PackedArchive``): from what this
    /// process read of it, else from its record, found through the index, the checkpoint, or
    /// the pack read again (a table written with the archive after the last read).
    ///
    /// - Returns: `nil` when the pack holds no such table that checks: the archive is damaged.
    func keyTable(_ name: UInt64, for located: Located, fileSystem: FileSystem) -> [UInt8]? {
        let found = slots.withLock { slots -> [UInt8]? in
            // Most reads: a table read before, of the pack held now (looked at in place, the
            // slot not copied).
            if slots[located.directory]?.file?.number == located.file.number, let table = slots[located.directory]?.keyTables[name] {
                return table
            }
            // Taken out while it changes, so that its index is changed in place, not copied.
            guard var slot = slots.removeValue(forKey: located.directory) else { return nil }
            defer { slots[located.directory] = slot }
            guard slot.file?.number == located.file.number else { return nil }
            func read(_ slot: Slot) -> [UInt8]? {
                var spot = slot.index.tables[name]?.offset
                if spot == nil, let checkpoint = slot.checkpoint, case .found(let entry) = checkpoint.lookup(name) { spot = entry.offset }
                return spot.flatMap { Self.readKeyTable(name, in: located.file, at: $0) }
            }
            // Not found, or damaged: the records appended since the last read may hold it (or
            // a writer's new copies of it).
            var table = read(slot)
            if table == nil {
                try? refresh(&slot, located.directory, fileSystem, change: nil, writable: false, lookup: slot.checkpoint != nil)
                guard slot.file?.number == located.file.number else { return nil }
                table = read(slot)
            }
            if let table { slot.keyTables[name] = table }
            return table
        }
        if let found { return found }
        // The pack this process holds is another one now (compacted, or made again): the
        // tables of the one the archive was read from are found by reading it.
        var index = PackIndex()
        var size = stat()
        guard SystemCalls.fstat(located.file.descriptor, &size) == 0 else { return nil }
        _ = located.file.scan(into: &index, upTo: Int(size.st_size), maximumBodyLength: Self.maximumBodyLength)
        guard let spot = index.tables[name] else { return nil }
        return Self.readKeyTable(name, in: located.file, at: spot.offset)
    }

    /// Appends `records` to `directory`'s pack in one `write`, creating it (and the directory)
    /// if missing. Call holding the lock file's lock (inside a ``DiskWriter`` batch).
    ///
    /// A tail that is not whole records is cut off first: with the lock held, it is a crash's
    /// (or damage).
    ///
    /// - Returns: for each record, in order, where its archive now is (`nil` for the other
    ///   kinds) and whether the pack held that archive before; and the damage cut off, if
    ///   any, to report.
    /// - Throws: `SystemError` when the pack cannot be opened or written, `EFBIG` when the
    ///   records would take it past ``maximumSize``; it then holds what it held before.
    func append(
        _ records: Appending, toDirectory directory: String, fileSystem: FileSystem
    ) throws(SystemError) -> (entries: [PackIndex.Applied], damage: String?) {
        let result = slots.withLock { slots in
            Result { () throws(SystemError) in try append(records, to: &slots, directory, fileSystem) }
        }
        switch result {
        case .success(let appended): return appended
        case .failure(let error): throw error
        }
    }

    private func append(
        _ appending: Appending, to slots: inout FirstInlineDictionary<String, Slot>, _ directory: String, _ fileSystem: FileSystem
    ) throws(SystemError) -> (entries: [PackIndex.Applied], damage: String?) {
        // Taken out while it changes, so that its index is changed in place, not copied.
        var slot = slots.removeValue(forKey: directory) ?? Slot()
        defer { slots[directory] = slot }
        try refresh(&slot, directory, fileSystem, change: nil, writable: true)
        guard let file = slot.file else { throw SystemError(operation: "open", errorNumber: ENOENT, path: fileSystem.displayPath(PackFile.path(in: directory))) }
        let display = fileSystem.displayPath(PackFile.path(in: directory))
        var damage: String?
        if slot.size > slot.index.end {
            if case .damaged(let reason) = slot.stop { damage = reason }
            // A crash's torn append, or damage: the disk index may count what is cut here.
            noteSurprise()
            guard SystemCalls.ftruncate(file.descriptor, off_t(slot.index.end)) == 0 else { throw .last("ftruncate", display) }
            slot.size = slot.index.end
            slot.stop = .end
            // A checkpoint may cover the bytes cut: it goes, so that no reader opening the pack
            // from now on skips the records appended where they were.
            removeCheckpoint(of: directory, fileSystem)
            slot.checkpointedEnd = 0
        }
        // The key tables the records use that the pack lacks go first, two copies each, in
        // the same write (a pack made again, or compacted by another process, since the
        // records were built may lack ones the writer saw).
        var tableRecords: [PackRecord] = []
        var written = appending.bytes
        // A table whose copies are both damaged is written again: the archives of this
        // append would be misses otherwise, and every later one of their model.
        let missing = appending.keyTables.filter { table in
            guard let spot = slot.index.tables[table.name] else { return true }
            if slot.keyTables[table.name] == nil, let stored = Self.readKeyTable(table.name, in: file, at: spot.offset) {
                slot.keyTables[table.name] = stored
            }
            return slot.keyTables[table.name] != table.bytes
        }
        if !missing.isEmpty {
            var tables: [UInt8] = []
            for table in missing {
                let made = Self.keyTableRecords(table.name, table.bytes, at: slot.index.end + tables.count)
                tables += made.bytes
                tableRecords += made.records
                slot.keyTables[table.name] = table.bytes
            }
            written = tables + appending.bytes
        }
        guard slot.size + written.count <= maximumSize else {
            // Past the bound a reader takes a pack for damage: the caller writes files.
            throw SystemError(operation: "append (the pack would pass \(maximumSize) bytes)", errorNumber: EFBIG, path: display)
        }
        do throws(SystemError) {
            try fileSystem.writeAll(file.descriptor, written, display)
        } catch {
            // A partial append is not whole records: cut it off now rather than leave it
            // for the next writer.
            _ = SystemCalls.ftruncate(file.descriptor, off_t(slot.index.end))
            throw error
        }
        for record in tableRecords {
            slot.index.apply(record, at: slot.index.end)
        }
        var entries: [PackIndex.Applied] = []
        entries.reserveCapacity(appending.records.count)
        for record in appending.records {
            entries.append(slot.index.apply(record, at: slot.index.end))
        }
        slot.size = slot.index.end
        if slot.index.entries.isEmpty {
            // Nothing live is left: the pack is only dead records, which nothing counts or
            // reads. It goes (a reader holding it open still reads it whole).
            if let held = try fileSystem.openDirectory(of: PackFile.path(in: directory), create: false) {
                SystemCalls.unlinkat(held, PackFile.name, 0)
                SystemCalls.unlinkat(held, PackCheckpoint.name, 0)
                SystemCalls.close(held)
            }
            slot = Slot()
        }
        return (entries, damage)
    }

    /// The bytes `directory`'s pack takes beyond its live archives' records (replaced and
    /// removed records, damage, a torn tail, and its key tables), checked against the file now:
    /// what a compaction would give back, but for the key tables its archives use
    /// (``keyTableBytes(inDirectory:)``). Call holding the lock file's lock.
    func waste(inDirectory directory: String, fileSystem: FileSystem) -> Int {
        slots.withLock { slots in
            // Taken out while it changes, so that its index is changed in place, not copied.
            var slot = slots.removeValue(forKey: directory) ?? Slot()
            defer { slots[directory] = slot }
            try? refresh(&slot, directory, fileSystem, change: nil, writable: false)
            guard slot.file != nil else { return 0 }
            return max(slot.size - slot.index.liveBytes, 0)
        }
    }

    /// The bytes the key tables of `directory`'s pack take, as this process last saw it: part
    /// of its ``waste(inDirectory:fileSystem:)``, but not given back by a compaction while its
    /// archives use them.
    func keyTableBytes(inDirectory directory: String) -> Int {
        slots.withLock { slots in slots[directory]?.index.tableBytes ?? 0 }
    }

    /// How many more bytes `directory`'s pack, as this process last saw it, can take and stay
    /// within ``maximumSize``: past it, archives are written as files of their own (a reader
    /// takes a pack over ``PackFile/maximumSize`` for damage).
    func room(in directory: String) -> Int {
        slots.withLock { slots in maximumSize - (slots[directory]?.size ?? 0) }
    }

    /// Whether `directory`'s pack holds more dead records (and damage) than live ones, and
    /// enough of them to be worth rewriting (as this process last saw it).
    func isWasteful(_ directory: String) -> Bool {
        slots.withLock { slots in
            guard let index = slots[directory]?.index, !index.continuesCheckpoint else { return false }
            return index.deadBytes > max(index.liveBytes, Self.minimumCompactionWaste)
        }
    }

    /// Rewrites `directory`'s pack with its live records only: written to `temporaryName` in
    /// the version directory and renamed over the pack in one step, so a reader sees the old
    /// pack or the new one. Call holding the lock file's lock, with `temporaryName` announced in
    /// the journal (a crash leaves it for the next batch to remove).
    ///
    /// Each record keeps its sequence number and date: the archives' identities do not change.
    func compact(_ directory: String, temporaryName: String, fileSystem: FileSystem) throws(SystemError) {
        let result = slots.withLock { slots in
            Result { () throws(SystemError) in try compact(directory, in: &slots, temporaryName: temporaryName, fileSystem) }
        }
        if case .failure(let error) = result { throw error }
    }

    private func compact(_ directory: String, in slots: inout FirstInlineDictionary<String, Slot>, temporaryName: String, _ fileSystem: FileSystem) throws(SystemError) {
        // (An index that continues a checkpoint holds only the records after it: never
        // compacted from.)
        guard var slot = slots[directory], let file = slot.file, !slot.index.continuesCheckpoint else { return }
        let version = fileSystem.version.descriptor
        let temporaryDisplay = fileSystem.versionPath + "/" + temporaryName
        try fileSystem.inject(.createFile, temporaryDisplay)
        let descriptor = SystemCalls.openat(version, temporaryName, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .last("open", temporaryDisplay) }
        var renamed = false
        defer {
            if !renamed { SystemCalls.unlinkat(version, temporaryName, 0) }
        }
        fileSystem.protection?.apply(toDescriptor: descriptor)
        var compacted = PackIndex()
        compacted.reserveCapacity(slot.index.entries.count)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.maximumBodyLength, alignment: 16)
        defer { buffer.deallocate() }
        do throws(SystemError) {
            // Every record that checks, and nothing else: damage (and an archive whose newest
            // record was damage) does not outlive the compaction. The pack is read in windows
            // of up to the buffer's size, the new one written in runs of records: a few system
            // calls per megabyte, not three per record.
            var window = 0..<0
            // The key tables the archives kept use: they follow the archives, and no other.
            var usedTables: Set<UInt64> = []
            var output: [UInt8] = []
            output.reserveCapacity(Self.compactionWriteSize + Self.maximumBodyLength)
            for (hash, entry) in slot.index.entries.sorted(by: { $0.value.offset < $1.value.offset }) where !entry.isDamaged {
                let body = entry.bodyOffset..<(entry.bodyOffset + entry.bodyLength)
                if !window.contains(body.lowerBound) || body.upperBound > window.upperBound {
                    // As much as the buffer takes, and at least the body: a pack that turns out
                    // shorter than this process saw it still gives every body it holds.
                    let count = max(min(buffer.count, slot.size - entry.bodyOffset), entry.bodyLength)
                    let filled = file.read(into: buffer, count: count, at: entry.bodyOffset)
                    guard filled >= entry.bodyLength else {
                        throw SystemError(operation: "read", errorNumber: EIO, path: fileSystem.displayPath(PackFile.path(in: directory)))
                    }
                    window = entry.bodyOffset..<(entry.bodyOffset + filled)
                }
                let record = PackRecord(kind: .archive, bodyLength: entry.bodyLength, nameHash: hash, sequence: entry.sequence, cachedDate: entry.cachedDate)
                let bytes = UnsafeRawBufferPointer(rebasing: buffer[(body.lowerBound - window.lowerBound)..<(body.upperBound - window.lowerBound)])
                if let table = try? PackedArchive.parse(bytes).keyTable { usedTables.insert(table) }
                record.appendPrefix(to: &output)
                output.append(contentsOf: bytes)
                compacted.apply(record, at: compacted.end)
                if output.count >= Self.compactionWriteSize {
                    try fileSystem.writeAll(descriptor, output, temporaryDisplay)
                    output.removeAll(keepingCapacity: true)
                }
            }
            for name in usedTables.sorted() {
                guard let spot = slot.index.tables[name],
                    let table = slot.keyTables[name] ?? Self.readKeyTable(name, in: file, at: spot.offset)
                else { continue }
                let made = Self.keyTableRecords(name, table, at: compacted.end)
                output += made.bytes
                for record in made.records { compacted.apply(record, at: compacted.end) }
            }
            if !output.isEmpty { try fileSystem.writeAll(descriptor, output, temporaryDisplay) }
            var info = stat()
            guard SystemCalls.fstat(descriptor, &info) == 0 else { throw .last("fstat", temporaryDisplay) }
            guard let held = try fileSystem.openDirectory(of: PackFile.path(in: directory), create: false) else {
                throw SystemError(operation: "open", errorNumber: ENOENT, path: fileSystem.displayPath(PackFile.path(in: directory)))
            }
            defer { SystemCalls.close(held) }
            try fileSystem.inject(.rename, fileSystem.displayPath(PackFile.path(in: directory)))
            guard SystemCalls.renameat(version, temporaryName, held, PackFile.name) == 0 else {
                throw .last("rename", fileSystem.displayPath(PackFile.path(in: directory)))
            }
            renamed = true
            // The old pack's checkpoint describes nothing now.
            SystemCalls.unlinkat(held, PackCheckpoint.name, 0)
            // The new pack is the one open for reading and appending from now on.
            _ = SystemCalls.fcntl(descriptor, F_SETFL, O_APPEND)
            slot.file = PackFile(descriptor: descriptor, number: FileID(info), isWritable: true)
            slot.index = compacted
            slot.size = compacted.end
            slot.stop = .end
            // The old checkpoint describes the old pack: none describes this one yet.
            slot.checkpoint = nil
            slot.looked = [:]
            slot.checkpointedEnd = 0
            slot.keyTables = slot.keyTables.filter { usedTables.contains($0.key) }
            slots[directory] = slot
        } catch {
            SystemCalls.close(descriptor)
            throw error
        }
    }

    /// Whether `directory`'s pack, as this writer last saw it, holds at least
    /// ``checkpointMinimumArchives`` live archives and has had ``checkpointInterval`` bytes or
    /// more written after its checkpoint. Call holding the lock file's lock, after appending.
    func needsCheckpoint(_ directory: String, fileSystem: FileSystem) -> Bool {
        slots.withLock { slots in
            guard var slot = slots[directory], let file = slot.file, file.isWritable, slot.checkpoint == nil,
                slot.index.lastRecordOffset != nil, slot.index.entries.count >= Self.checkpointMinimumArchives
            else { return false }
            defer { slots[directory] = slot }
            if slot.checkpointedEnd == nil {
                slot.checkpointedEnd = PackCheckpoint.open(in: directory, for: file, size: slot.size, fileSystem: fileSystem)?.binding.coveredEnd ?? 0
            }
            return slot.index.end - (slot.checkpointedEnd ?? 0) >= Self.checkpointInterval(archives: slot.index.entries.count)
        }
    }

    /// Writes `directory`'s checkpoint (``PackCheckpoint``) of its pack as this writer knows it,
    /// over the old one (``PackCheckpoint/write(_:in:fileSystem:)``). Call holding the lock
    /// file's lock.
    ///
    /// Costs a sort of the pack's live archives and a write of 20 bytes each.
    func checkpoint(_ directory: String, fileSystem: FileSystem) throws(SystemError) {
        // What to write is taken under the table's lock; the sort and the write happen outside
        // it, so that readers of other packs are not held up (the lock file's lock keeps other
        // writers out).
        let taken = slots.withLock { slots -> Result<(PackCheckpoint.Binding, [PackCheckpoint.Entry])?, SystemError> in
            guard let slot = slots[directory], let file = slot.file, slot.checkpoint == nil, let last = slot.index.lastRecordOffset else {
                return .success(nil)
            }
            guard let checksum = file.record(at: last)?.checksum else {
                return .failure(SystemError(operation: "read", errorNumber: EIO, path: fileSystem.displayPath(PackFile.path(in: directory))))
            }
            let binding = PackCheckpoint.Binding(pack: file.number, coveredEnd: slot.index.end, lastRecord: (last, checksum))
            // The key tables too, under their names: a reader that starts from the checkpoint
            // finds them as it finds archives.
            let entries = slot.index.entries.map { hash, entry in
                PackCheckpoint.Entry(
                    hash: hash, offset: entry.offset, bodyLength: entry.bodyLength, isDamaged: entry.isDamaged, redatedAt: entry.redatedAt)
            } + slot.index.tables.map { name, spot in
                PackCheckpoint.Entry(hash: name, offset: spot.offset, bodyLength: spot.bodyLength, isDamaged: false, redatedAt: nil)
            }
            return .success((binding, entries))
        }
        let binding: PackCheckpoint.Binding
        let entries: [PackCheckpoint.Entry]
        switch taken {
        case .success(nil): return
        case .success(let found?): (binding, entries) = found
        case .failure(let error): throw error
        }
        try PackCheckpoint.write(PackCheckpoint.bytes(of: entries, binding: binding), in: directory, fileSystem: fileSystem)
        slots.withLock { slots in
            if slots[directory]?.file?.number == binding.pack { slots[directory]?.checkpointedEnd = binding.coveredEnd }
        }
    }

    /// Removes `directory`'s pack checkpoint, if there is one.
    private func removeCheckpoint(of directory: String, _ fileSystem: FileSystem) {
        guard let held = try? fileSystem.openDirectory(of: PackFile.path(in: directory), create: false) else { return }
        SystemCalls.unlinkat(held, PackCheckpoint.name, 0)
        if held != fileSystem.version.descriptor { SystemCalls.close(held) }
    }

    /// Lets `directory`'s pack go (its directory was moved out of view).
    func forget(_ directory: String) {
        _ = slots.withLock { $0.removeValue(forKey: directory) }
    }

    /// Lets every pack go (the directories around them were made again after a purge).
    func forgetAll() {
        slots.withLock { $0.removeAll() }
    }

    /// Brings `slot` up to date with the pack at `directory` now: unchanged when already checked
    /// at `change`; else one `fstatat`, then the new records, or the whole pack when it was
    /// replaced or shrank. A writer also opens it for appending, creating it.
    ///
    /// - Parameter lookup: only single archives will be looked up: a pack opened afresh is then
    ///   read from its checkpoint's covered end, if it has a checkpoint that describes it.
    private func refresh(
        _ slot: inout Slot, _ directory: String, _ fileSystem: FileSystem, change: UInt64?, writable: Bool, lookup: Bool = false
    ) throws(SystemError) {
        var unwanted: PackFile.ReadBody?
        try refresh(&slot, directory, fileSystem, change: change, writable: writable, lookup: lookup, keeping: nil, &unwanted)
    }

    /// ``refresh(_:_:_:change:writable:lookup:)``, keeping in `read` the body of the archive
    /// whose name hashes to `wanted` if the records it reads hold it whole.
    private func refresh(
        _ slot: inout Slot, _ directory: String, _ fileSystem: FileSystem, change: UInt64?, writable: Bool, lookup: Bool,
        keeping wanted: UInt64?, _ read: inout PackFile.ReadBody?
    ) throws(SystemError) {
        if !lookup, slot.checkpoint != nil {
            // Every archive is wanted: the records the checkpoint covers are read after all.
            slot.checkpoint = nil
            slot.looked = [:]
            slot.index = PackIndex()
            slot.reportedDamage = 0
            slot.checkedAt = nil
        }
        if !writable, let change, slot.checkedAt == change { return }
        // A reader that holds no pack yet opens it straight away (opening tells whether it is
        // there); otherwise one `fstatat` tells whether the pack held is still the one there.
        let opensAfresh = slot.file == nil && !writable
        let current = opensAfresh ? nil : PackFile.current(in: directory, fileSystem: fileSystem)
        var size = current?.size ?? 0
        let isSameFile = current != nil && slot.file?.number == current?.number && size >= slot.index.end
        // The file this process read, shorter than what it read of it: cut by someone else.
        if current != nil, slot.file?.number == current?.number, size < slot.index.end { noteSurprise() }
        if !isSameFile || (writable && slot.file?.isWritable != true) {
            if current == nil && !writable && !opensAfresh {
                slot = Slot()
                slot.checkedAt = change
                return
            }
            guard let (file, openedSize) = try PackFile.open(in: directory, writable: writable, fileSystem: fileSystem) else {
                slot = Slot()
                slot.checkedAt = change
                return
            }
            if !(isSameFile && file.number == slot.file?.number) {
                slot.index = PackIndex()
                slot.reportedDamage = 0
                slot.checkpoint = nil
                slot.looked = [:]
                slot.keyTables = [:]
                slot.checkpointedEnd = nil
                // (A pack smaller than a checkpoint's interval never has one worth reading.)
                if lookup, !writable, openedSize >= Self.checkpointInterval,
                    let checkpoint = PackCheckpoint.open(in: directory, for: file, size: openedSize, fileSystem: fileSystem)
                {
                    slot.checkpoint = checkpoint
                    slot.checkpointedEnd = checkpoint.binding.coveredEnd
                    slot.index = PackIndex(continuingAt: checkpoint.binding.coveredEnd)
                }
            }
            slot.file = file
            size = openedSize
        }
        if size > slot.index.end, let file = slot.file {
            let from = slot.index.end
            slot.stop = file.scan(
                into: &slot.index, upTo: size, maximumBodyLength: Self.maximumBodyLength, identify: identify, keeping: wanted, &read)
            scanned.withLock { $0 += slot.index.end - from }
            reportDamage(in: &slot, directory, fileSystem)
        } else {
            slot.stop = .end
        }
        slot.size = size
        slot.checkedAt = change
    }

    /// Tells ``onDamage`` of the stretches of damage `slot`'s index met since the last report:
    /// each once per pack this process reads.
    private func reportDamage(in slot: inout Slot, _ directory: String, _ fileSystem: FileSystem) {
        let damage = slot.index.damage
        guard slot.reportedDamage < damage.count else { return }
        let display = fileSystem.displayPath(PackFile.path(in: directory))
        noteSurprise()
        for stretch in damage[slot.reportedDamage...] {
            onDamage(display, "damage in a pack of small archives (\(stretch.reason), \(stretch.length) bytes at \(stretch.offset)); only the records there are lost")
        }
        slot.reportedDamage = damage.count
    }
}
