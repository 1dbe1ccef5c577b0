import Foundation

/// The disk writer's journal bookkeeping: the disk index, where this process has read the
/// journal to, and the intents and outcomes of the batch under way.
///
/// ``DiskWriter`` runs every batch, and calls these steps in order; nothing else does. A batch
/// runs inside the writer's lock and the lock file's `flock` (``ProcessCoordinator``), so one
/// batch at a time changes a version directory, whichever process or instance runs it. Each
/// batch:
///
/// 1. **begins** (``begin(afterCrash:)``): if the previous holder of the lock died mid-batch (the
///    crash flag is set), the journal is replayed and every intent without its outcome is
///    settled from what the disk now holds; with an index in memory, the lines other processes
///    appended since this process last read are applied;
/// 2. **announces** each change before making it (``announce(_:)``): an intent line naming the
///    archive and the temporary file that will replace it, appended to the journal before the
///    rename or unlink;
/// 3. makes the changes, recording each outcome (``record(_:)``);
/// 4. **finishes** (``finish()``): settles its own intents that have no outcome (a failed write),
///    enforces the disk budget (announcing each removal), appends the outcomes in one write and
///    compacts the journal when it has grown.
///
/// Why intents rather than a scan: after a `SIGKILL` between a rename and its journal line,
/// the journal alone cannot know the archive's new size, and listing every directory on each open
/// would make opening grow with the cache. An intent names exactly the files a crash may have
/// left changed, so settling costs one header read per interrupted change, and the temporary
/// files a crash left are found without listing anything. A missing or damaged journal is
/// rebuilt from the archives, which sweeps every temporary file as it goes.
struct JournalLedger {
    let store: DiskStore
    let coordinator: ProcessCoordinator
    /// This cache's own `diskByteLimit`, and whether it runs in an app extension.
    let ownByteLimit: Int?
    let isAppExtension: Bool

    /// Whether the index is kept in memory: with a disk budget, or once ``AppCache/diskUsage``
    /// was asked.
    var keepsIndex: Bool
    /// The index, while kept; exact after ``begin(afterCrash:)``.
    private(set) var index: DiskIndex?
    /// The packs' surprise count (``PackTable/surpriseCount``) the index was last made to
    /// agree with: a pack found holding other than what was written to it (damage, a cut)
    /// makes the journal's sizes untrue, and the index is rebuilt from what the disk holds.
    private var packSurprisesSeen: UInt64 = 0
    /// Where this process has read the journal up to (while it keeps the index).
    private var cursor: IndexJournal.Cursor?
    /// This batch's intents without their outcome yet.
    private var pending = PendingIntents()
    /// This batch's outcomes, applied to the index and (those `journaled`) appended to the
    /// journal when it finishes.
    private var records: [(record: DiskIndex.Record, journaled: Bool)] = []
    /// Whether this batch lists each small archive it packs in the journal: only while the root
    /// has a disk budget, which needs every archive's size and use. Otherwise a directory's
    /// packed writes cost one `unindexed` line per batch, and whoever needs an index reads what
    /// the directory holds.
    private var listsPackedArchives = true
    /// The directories this batch noted `unindexed`.
    private var unindexedNoted: Set<String> = []
    /// The directories whose packed writes this batch noted without recording each
    /// (``notePacked(inDirectory:)``): an index made before the batch ends (a budget recorded
    /// meanwhile by another process) reads them from the disk.
    private var notedWithoutRecords: Set<String> = []
    /// The directories whose archives the journal lines read into the index do not list (their
    /// `unindexed` lines): read from the disk before the index is next used.
    private var unreadDirectories: Set<String> = []
    /// Problems to report once the locks are released.
    var problems: [AppCacheError] = []
    /// The collections the budget removed in this batch (for ``CacheEvent/EvictionReason/diskBudget``).
    var evictedForBudget: [ArchiveKey] = []
    /// The journal's size after this batch's last append (0: not appended to yet).
    private var journalSize = 0
    /// Whether this batch changed (or found changed) an archive: other processes must then
    /// check their memory against the disk.
    var changedDisk = false
    /// The journal, held open for appending while no process replaced it.
    private var appender: JournalAppender?
    /// Whether this batch checked that the journal at its path is the one held open (one
    /// `fstatat` per batch: a file planted there by something other than a cache is found).
    private var checkedAppender = false

    /// The journal grows to at least this before it is compacted.
    static let minimumCompactionSize = 256 << 10

    init(store: DiskStore, coordinator: ProcessCoordinator, diskByteLimit: Int?, isAppExtension: Bool) {
        self.store = store
        self.coordinator = coordinator
        ownByteLimit = diskByteLimit
        self.isAppExtension = isAppExtension
        keepsIndex = coordinator.budget(own: diskByteLimit) != nil
    }

    /// The budget the batch enforces: the root's (see
    /// ``ProcessCoordinator/recordBudget(_:asExtension:again:)``), recorded again if a purge
    /// took the lock file that held it.
    var diskByteLimit: Int? { coordinator.recordBudget(ownByteLimit, asExtension: isAppExtension, again: true) }

    private var journal: IndexJournal { IndexJournal(fileSystem: store.fileSystem) }

    // MARK: - The batch

    /// Starts a batch (see the type's documentation). Call holding both locks.
    mutating func begin(afterCrash crashed: Bool) {
        checkedAppender = false
        listsPackedArchives = diskByteLimit != nil
        unindexedNoted = []
        notedWithoutRecords = []
        if crashed {
            settleCrashedBatch()
        } else if keepsIndex {
            catchUp()
        }
    }

    /// Appends intents to the journal before the changes they announce.
    mutating func announce(_ intents: [DiskIndex.Record]) {
        for intent in intents { pending.note(intent) }
        append(intents)
    }

    /// Records the outcome of a change made in this batch.
    mutating func record(_ outcome: DiskIndex.Record) {
        pending.note(outcome)
        records.append((outcome, true))
        if outcome.changesDisk { changedDisk = true }
    }

    /// Records a small archive written into `directory`'s pack: listed in the journal while
    /// the root has a disk budget, else noted by one `unindexed` line for the directory.
    mutating func recordPacked(_ outcome: DiskIndex.Record, inDirectory directory: String) {
        guard !listsPackedArchives else { return record(outcome) }
        records.append((outcome, false))
        notePacked(inDirectory: directory)
    }

    /// Whether each small archive written into a pack must be recorded
    /// (``recordPacked(_:inDirectory:)``): while the journal lists them (a disk budget), or an
    /// index is kept that they change. Otherwise ``notePacked(inDirectory:)`` once per pack says
    /// all there is to say.
    var recordsEachPackedArchive: Bool {
        listsPackedArchives || index != nil
    }

    /// Notes that small archives were written into `directory`'s pack, without listing them:
    /// one `unindexed` line for the directory per batch (nothing while the journal lists them).
    mutating func notePacked(inDirectory directory: String) {
        guard !listsPackedArchives else { return }
        changedDisk = true
        if unindexedNoted.insert(directory).inserted { records.append((.unindexed(directory: directory), true)) }
        if index == nil { notedWithoutRecords.insert(directory) }
    }

    /// Records reads, as uses for the disk budget.
    mutating func recordUses(_ paths: [CachePath]) {
        records += paths.map { (.touch(path: $0), true) }
    }

    /// Ends the batch (see the type's documentation). Call holding both locks.
    mutating func finish() {
        if !pending.isEmpty { settle(pending) }
        if let limit = diskByteLimit {
            ensureIndex()
            // A budget recorded since the batch began: the packed writes it noted without
            // listing them are read from their directories, as another process's would be.
            unreadDirectories.formUnion(notedWithoutRecords)
            for (record, _) in records { index?.apply(record) }
            // The budget judges by what the packs hold, not by what was written to them.
            if packsSurprised { rebuild() }
            enforce(limit)
        } else {
            for (record, _) in records { index?.apply(record) }
        }
        if index?.isDamaged == true || (index != nil && packsSurprised) { rebuild() }
        let outcomes = records.filter(\.journaled).map(\.record)
        records = []
        if !outcomes.isEmpty { append(outcomes) }
        // Only now, with no intent of this batch unsettled: a compacted journal holds the
        // index and nothing else, so an intent compacted away could not be settled.
        if pending.isEmpty, journalSize > 2 * min(coordinator.compactedJournalSize, journalSize) + Self.minimumCompactionSize {
            compact()
        }
    }

    /// Loads the index (replaying the journal, or rebuilding it) and keeps it from now on.
    mutating func ensureIndex() {
        keepsIndex = true
        if index == nil { catchUp() }
    }

    // MARK: - Reading the journal

    /// Applies what others appended since this process last read the journal; reads it whole
    /// the first time. A missing or damaged journal is rebuilt.
    private mutating func catchUp() {
        switch journal.read(after: index == nil ? nil : cursor) {
        case .missing:
            rebuild()
        case .damaged(let reason):
            report(reason)
            rebuild()
        case .records(let lines, let newCursor, let fromStart, let tornBytes):
            if fromStart {
                index = DiskIndex()
                unreadDirectories = []
            }
            for line in lines { index?.apply(line) }
            if index != nil { unreadDirectories.formUnion(Self.unindexedDirectories(in: lines)) }
            cursor = newCursor
            if tornBytes > 0 {
                // A writer died mid-append; nobody else appends while this lock is held.
                try? journal.truncate(to: newCursor.offset)
                coordinator.journalLength = newCursor.offset
            }
            if index?.isDamaged == true {
                report("the journal's sizes do not add up")
                rebuild()
            } else if packsSurprised {
                rebuild()
            }
        }
    }

    /// The directories whose packed archives `lines` say the journal does not list.
    private static func unindexedDirectories(in lines: [DiskIndex.Record]) -> Set<String> {
        var directories: Set<String> = []
        for case .unindexed(let directory) in lines { directories.insert(directory) }
        return directories
    }

    /// Makes the index's entries of the directories the journal said it does not list
    /// (``unreadDirectories``) what the directories hold: each archive's size and pin read from
    /// its header (the order of their uses is lost: they count as used now). Called where the
    /// index is used (the budget, `diskUsage`, a compaction's snapshot), not as lines are read:
    /// a process keeping an index without a budget pays for another's writes only when it asks.
    private mutating func readUnreadDirectories() {
        guard index != nil, !unreadDirectories.isEmpty else { return }
        var failed: Set<String> = []
        for directory in unreadDirectories.sorted() {
            // A directory that cannot be listed now keeps what the index knew of it, and is read
            // again next time.
            guard let paths = try? store.archivePaths(inDirectory: directory) else {
                failed.insert(directory)
                continue
            }
            index?.apply(.removeAll(directory: directory))
            for path in paths {
                let settled = settledRecord(path)
                index?.apply(settled)
            }
        }
        unreadDirectories = failed
    }

    /// Whether a pack was found holding other than what was written to it since the index
    /// last agreed with the disk (the damage itself was reported where it was found).
    private var packsSurprised: Bool {
        store.packs.surpriseCount != packSurprisesSeen
    }

    /// Replays the whole journal to find the intents a crashed batch left unsettled, and
    /// settles them.
    private mutating func settleCrashedBatch() {
        switch journal.read(after: nil) {
        case .missing:
            rebuild()
        case .damaged(let reason):
            report(reason)
            rebuild()
        case .records(let lines, let newCursor, _, let tornBytes):
            var unsettled = PendingIntents()
            var replayed = DiskIndex()
            for line in lines {
                unsettled.note(line)
                replayed.apply(line)
            }
            if tornBytes > 0 { try? journal.truncate(to: newCursor.offset) }
            // The journal's length, from what was read, whether or not a torn line was cut: the
            // crashed writer may have appended and died before it stored the length, and an
            // append through a journal held open trusts the stored length (a cursor moved by a
            // short one would point into a line, and the next read find the journal damaged).
            coordinator.journalLength = newCursor.offset
            if keepsIndex {
                index = replayed
                cursor = newCursor
                unreadDirectories = Self.unindexedDirectories(in: lines)
            }
            if replayed.isDamaged {
                report("the journal's sizes do not add up")
                rebuild()
            } else if !unsettled.isEmpty {
                settle(unsettled)
            }
        }
    }

    // MARK: - Settling

    /// Records what the disk now holds for every intent in `intents`, and removes the
    /// temporary files they name. The records go to the journal (and the index) at once, so the
    /// rest of the batch sees the disk as it is.
    private mutating func settle(_ intents: PendingIntents) {
        let fileSystem = store.fileSystem
        var settled: [DiskIndex.Record] = []
        for (path, temporaryName) in intents.changes {
            try? fileSystem.removeFile(CachePath(directory: path.directory, name: temporaryName))
            store.resolveDuplicate(at: path)
            settled.append(settledRecord(path))
        }
        for directory in intents.wipes {
            settled.append(.removeAll(directory: directory))
            let remaining = (try? store.archivePaths(inDirectory: directory)) ?? []
            settled += remaining.map(settledRecord)
        }
        for temporary in intents.compactions {
            try? fileSystem.removeFile(temporary)
            settled.append(.temporaryGone(name: temporary.name, directory: temporary.directory))
        }
        for directory in intents.appends.sorted() {
            // Which of the directory's archives the appends reached is not known: each is
            // recorded as the disk holds it (a file and a record of one name, left by a crash
            // between the append and the file's removal, resolved first).
            if let paths = try? store.archivePaths(inDirectory: directory) {
                for path in paths {
                    store.resolveDuplicate(at: path)
                    settled.append(settledRecord(path))
                }
            } else {
                // Not listed now: an index made later reads the directory.
                settled.append(.unindexed(directory: directory))
            }
            settled.append(.appended(directory: directory))
        }
        for record in settled {
            pending.note(record)
            index?.apply(record)
        }
        changedDisk = true
        append(settled)
    }

    /// The record of what the disk holds at `path`: its size (and pin, from its header), or
    /// that it is gone. A damaged file still takes space: it is counted, unpinned.
    private func settledRecord(_ path: CachePath) -> DiskIndex.Record {
        switch store.summary(at: path) {
        case .summary(let summary): .set(path: path, size: summary.size, isPinned: summary.header.isPinned)
        case .unreadable(_, let size?): .set(path: path, size: size, isPinned: false)
        case .unreadable(_, nil), .missing: .remove(path: path)
        }
    }

    // MARK: - Writing the journal

    /// Appends `lines` in one write; starts a new journal first when there is none.
    private mutating func append(_ lines: [DiskIndex.Record]) {
        guard !lines.isEmpty else { return }
        let bytes = IndexJournal.bytes(lines)
        do throws(SystemError) {
            guard let (number, size) = try appendToJournal(bytes) else {
                // No journal yet (or a planted file was removed): start one from the archives,
                // which already reflect these lines' changes, then add the lines.
                rebuild()
                if let (number, size) = try appendToJournal(bytes) {
                    advanceCursor(number, size, lines.count)
                    journalSize = size
                }
                return
            }
            advanceCursor(number, size, lines.count)
            journalSize = size
        } catch {
            problems.append(AppCacheError(
                code: error.code, message: "The disk index journal could not be written; it will be rebuilt from the archives.",
                path: error.path, underlyingError: error))
            try? store.fileSystem.removeFile(IndexJournal.path)
            journalWasReplaced(length: 0)
            cursor = nil
            index = nil
            unreadDirectories = []
        }
    }

    /// Appends `bytes` to the journal in one `write`: through the journal held open while it is
    /// still the same file (see ``JournalAppender``), else opened afresh and held from now on.
    ///
    /// - Returns: which file the journal is and its size after the append; `nil` when there is
    ///   no journal.
    private mutating func appendToJournal(_ bytes: Data) throws(SystemError) -> (FileID, Int)? {
        let fileSystem = store.fileSystem
        let known = coordinator.journalLength
        if let appender, !checkedAppender, fileSystem.fileNumber(inVersionDirectory: IndexJournal.path.name) != appender.number {
            self.appender = nil
        }
        checkedAppender = true
        if let appender, appender.generation == coordinator.journalGeneration, known > 0 {
            // The shared length is exact here: a writer killed between its append and its
            // store of the length left the crash flag set, and the batch that found it set the
            // length from the journal it read (``settleCrashedBatch()``).
            try fileSystem.writeAll(appender.descriptor, bytes, fileSystem.displayPath(IndexJournal.path))
            coordinator.journalLength = known + bytes.count
            return (appender.number, known + bytes.count)
        }
        appender = nil
        try fileSystem.inject(.write, fileSystem.displayPath(IndexJournal.path))
        guard let (descriptor, number, size) = try fileSystem.openForAppending(IndexJournal.path) else { return nil }
        let opened = JournalAppender(descriptor: descriptor, number: number, generation: coordinator.journalGeneration)
        try fileSystem.writeAll(descriptor, bytes, fileSystem.displayPath(IndexJournal.path))
        coordinator.journalLength = size + bytes.count
        appender = opened
        return (number, size + bytes.count)
    }

    /// Notes that the journal was replaced, cut or removed (`length` 0): every process's open
    /// journal is let go (``JournalAppender``).
    private mutating func journalWasReplaced(length: Int) {
        coordinator.journalGeneration &+= 1
        coordinator.journalLength = length
        appender = nil
    }

    /// Lets go of the journal held open (the lock file was made again after a purge, so its
    /// shared words say nothing of it).
    mutating func forgetOpenJournal() {
        appender = nil
    }

    private mutating func advanceCursor(_ number: FileID, _ size: Int, _ count: Int) {
        guard let current = cursor, current.file == number else { return }
        cursor = IndexJournal.Cursor(file: number, offset: size, lines: current.lines + count)
    }

    /// The lines a compacted or rebuilt journal starts with while the root has no disk
    /// budget: one `unindexed` line per user directory, which an index (made only when one is
    /// asked for) reads instead of a line per archive.
    ///
    /// - Returns: `nil` when the user directories cannot be listed.
    private func unindexedSnapshot() -> [DiskIndex.Record]? {
        guard let directories = try? store.userDirectories() else { return nil }
        return [.begin] + directories.map { .unindexed(directory: $0) }
    }

    /// Replaces the journal with a snapshot of the index (while the root has no disk budget,
    /// with a line per user directory, the index not needed).
    private mutating func compact() {
        let snapshot: [DiskIndex.Record]
        if listsPackedArchives {
            let wasKept = keepsIndex
            ensureIndex()
            readUnreadDirectories()
            keepsIndex = wasKept
            guard let indexed = index?.snapshot else { return }
            snapshot = indexed
        } else {
            // Listing failed: the journal stays as it is, whole, rather than forget archives.
            guard let unindexed = unindexedSnapshot() else { return }
            snapshot = unindexed
        }
        let temporaryName = FileSystem.temporaryName()
        pending.note(.willCompact(temporaryName: temporaryName))
        do throws(SystemError) {
            // Through the journal held open, so that the shared journal length stays exact.
            guard try appendToJournal(IndexJournal.bytes([.willCompact(temporaryName: temporaryName)])) != nil else { return }
            let newCursor = try journal.rewrite(snapshot, temporaryName: temporaryName)
            pending.note(.temporaryGone(name: temporaryName))
            adoptRewrittenJournal(newCursor)
        } catch {
            problems.append(AppCacheError(
                code: error.code, message: "The disk index journal could not be compacted; it stays as it was.",
                path: error.path, underlyingError: error))
        }
        if !keepsIndex {
            index = nil
            cursor = nil
            unreadDirectories = []
        }
    }

    /// Takes a journal just written anew (compacted or rebuilt) as the one this book reads
    /// from, and records its size as the size right after the last compaction, for every
    /// process sharing the root.
    private mutating func adoptRewrittenJournal(_ newCursor: IndexJournal.Cursor) {
        journalWasReplaced(length: newCursor.offset)
        coordinator.compactedJournalSize = newCursor.offset
        journalSize = newCursor.offset
        cursor = newCursor
    }

    /// Rebuilds the index from the archives' headers, oldest first, and starts a new journal.
    /// Sweeps every temporary file on the way (the lock is held: none belongs to a live writer).
    private mutating func rebuild() {
        defer { packSurprisesSeen = store.packs.surpriseCount }
        store.sweepTemporaryFiles()
        var rebuilt = DiskIndex()
        // Without a budget and with no index kept, nothing needs the archives' sizes now: the
        // journal says which directories to read when an index is asked for.
        let paths = keepsIndex || listsPackedArchives ? (try? store.archivePathsOfAllUsers()) ?? [] : []
        var found: [(path: CachePath, size: Int, isPinned: Bool, date: Date)] = []
        for path in paths {
            switch store.summary(at: path) {
            case .summary(let summary): found.append((path, summary.size, summary.header.isPinned, summary.cachedDate))
            case .unreadable(_, let size?): found.append((path, size, false, .distantPast))
            case .unreadable(_, nil), .missing: break
            }
        }
        for file in found.sorted(by: { $0.date < $1.date }) {
            rebuilt.apply(.set(path: file.path, size: file.size, isPinned: file.isPinned))
        }
        // (This batch's own intents, if any, stay pending: they are appended after the new
        // journal, and settled if their change fails.)
        changedDisk = true
        do throws(SystemError) {
            let snapshot = listsPackedArchives ? rebuilt.snapshot : unindexedSnapshot() ?? rebuilt.snapshot
            adoptRewrittenJournal(try journal.rewrite(snapshot, temporaryName: FileSystem.temporaryName()))
        } catch {
            problems.append(AppCacheError(
                code: error.code, message: "The disk index journal could not be rewritten; it will be rebuilt from the archives.",
                path: error.path, underlyingError: error))
            cursor = nil
        }
        index = keepsIndex ? rebuilt : nil
        unreadDirectories = []
        if !keepsIndex { cursor = nil }
    }

    // MARK: - The budget

    /// The bytes the cache's archives take on disk: their files, and their directories' packs
    /// whole, records no longer live and damage included (not the journal or the lock file).
    /// What the disk budget bounds. Call holding the lock file's lock.
    mutating func diskUsage() -> Int {
        ensureIndex()
        readUnreadDirectories()
        return (index?.totalBytes ?? 0) + packWaste().values.reduce(0, +)
    }

    /// The bytes each pack takes beyond its live records, by directory, for the directories
    /// that hold archives (a pack whose last live record goes is removed with it).
    private func packWaste() -> [String: Int] {
        var waste: [String: Int] = [:]
        for directory in (index?.archivesByDirectory.keys).map(Array.init) ?? [] {
            let name = directory ?? CacheLayout.sharedDirectoryName
            let bytes = store.packs.waste(inDirectory: name, fileSystem: store.fileSystem)
            if bytes > 0 { waste[name] = bytes }
        }
        return waste
    }

    /// Keeps what the archives take on disk within `limit`: removes least recently used
    /// archives (unpinned first) until the live ones fit, and compacts the packs whose dead
    /// records (a removed packed archive leaves one, and its record) take the rest past it,
    /// most wasteful first. What this batch wrote is counted: the disk holds at most `limit`
    /// once the batch ends, and at most one batch's writes more while it runs.
    private mutating func enforce(_ limit: Int) {
        readUnreadDirectories()
        var waste = packWaste()
        func usage() -> Int { (index?.totalBytes ?? 0) + waste.values.reduce(0, +) }
        // The packs' key tables stay through a compaction while archives use them: they count
        // with the live archives.
        func tables(_ directory: String) -> Int { store.packs.keyTableBytes(inDirectory: directory) }
        while usage() > limit {
            if let total = index?.totalBytes, total + waste.keys.reduce(0, { $0 + tables($1) }) > limit, let victim = index?.nextVictim {
                announce([.willChange(path: victim.path, temporaryName: FileSystem.temporaryName())])
                // Named from its header before it goes: the index knows paths only.
                let named = store.summary(at: victim.path)
                do {
                    try store.removeFile(at: victim.path)
                    if case .summary(let summary) = named { evictedForBudget.append(summary.archiveKey) }
                } catch {
                    var failure = error
                    failure.message = "An archive could not be removed to keep within the disk budget."
                    problems.append(failure)
                    return
                }
                index?.apply(.remove(path: victim.path))
                record(.remove(path: victim.path))
                // A packed archive leaves dead records behind; a file leaves nothing.
                let directory = victim.path.directory ?? CacheLayout.sharedDirectoryName
                waste[directory] = store.packs.waste(inDirectory: directory, fileSystem: store.fileSystem)
                continue
            }
            // The live archives fit: the rest is packs' dead records, given back by compaction.
            guard let (directory, _) = waste.map({ ($0.key, $0.value - tables($0.key)) }).filter({ $0.1 > 0 }).max(by: { $0.1 < $1.1 }),
                compactPack(inDirectory: directory)
            else { return }
            waste[directory] = store.packs.waste(inDirectory: directory, fileSystem: store.fileSystem)
        }
    }

    /// Rewrites `directory`'s pack with its live records only, through a temporary file
    /// announced in the journal. A failure is reported and leaves the pack as it was.
    ///
    /// - Returns: whether it did.
    @discardableResult
    mutating func compactPack(inDirectory directory: String) -> Bool {
        let temporaryName = FileSystem.temporaryName()
        announce([.willCompact(temporaryName: temporaryName)])
        defer {
            record(.temporaryGone(name: temporaryName))
            // Other processes must read the new pack.
            changedDisk = true
        }
        do throws(SystemError) {
            try store.packs.compact(directory, temporaryName: temporaryName, fileSystem: store.fileSystem)
            return true
        } catch {
            problems.append(AppCacheError(
                code: error.code, message: "A pack of small archives could not be compacted; it stays as it was.",
                path: error.path, underlyingError: error))
            return false
        }
    }

    /// Writes `directory`'s pack checkpoint (``PackCheckpoint``), over the old one: a hint
    /// every reader checks, so it needs no intent (a crash midway leaves one that fails its
    /// checks). A failure is reported; the pack is then read whole, which costs speed only.
    mutating func checkpointPack(inDirectory directory: String) {
        do throws(SystemError) {
            try store.packs.checkpoint(directory, fileSystem: store.fileSystem)
        } catch {
            problems.append(AppCacheError(
                code: error.code, message: "A pack's checkpoint could not be written; reading the pack after a launch stays slower.",
                path: error.path, underlyingError: error))
        }
    }

    private mutating func report(_ reason: String) {
        problems.append(AppCacheError(
            code: .corruptArchive, message: "The disk index journal is damaged (\(reason)); it was rebuilt from the archives.",
            path: store.fileSystem.displayPath(IndexJournal.path)))
    }
}

/// Intents without their outcome: archives about to change, user directories about to go,
/// journal rewrites under way.
struct PendingIntents {
    /// Archive paths, with the temporary file each change goes through.
    private(set) var changes: [CachePath: String] = [:]
    /// User directories being removed.
    private(set) var wipes: Set<String> = []
    /// Temporary files of rewrites of what is not an archive (the journal, packs, root record
    /// files).
    private(set) var compactions: Set<CachePath> = []
    /// User directories whose packs are being appended to.
    private(set) var appends: Set<String> = []

    var isEmpty: Bool { changes.isEmpty && wipes.isEmpty && compactions.isEmpty && appends.isEmpty }

    /// Takes one journal line into account.
    mutating func note(_ record: DiskIndex.Record) {
        switch record {
        case .willChange(let path, let temporaryName): changes[path] = temporaryName
        case .set(let path, _, _), .remove(let path): changes[path] = nil
        case .willRemoveAll(let directory?): wipes.insert(directory)
        case .willRemoveAll(nil): break
        case .removeAll(let directory):
            if let directory {
                wipes.remove(directory)
                appends.remove(directory)
                changes = changes.filter { $0.key.directory != directory }
            } else {
                wipes = []
                appends = []
                changes = changes.filter { $0.key.directory == nil }
            }
        case .willCompact(let temporaryName, let directory): compactions.insert(CachePath(directory: directory, name: temporaryName))
        case .temporaryGone(let name, let directory): compactions.remove(CachePath(directory: directory, name: name))
        case .willAppend(let directory): appends.insert(directory)
        case .appended(let directory): appends.remove(directory)
        case .begin: self = PendingIntents()
        case .touch, .unindexed: break
        }
    }
}
