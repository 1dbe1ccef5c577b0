import Foundation

/// The one way the cache changes the disk: batches of archive writes, removals, re-datings and
/// user-directory wipes, each following the journal protocol, one batch at a time across every
/// thread, instance and process that shares the version directory.
///
/// A batch (``batch(problems:changed:_:)``):
/// 1. takes the writer's lock (this process), then the lock file's `flock` (every process); if
///    a purge deleted or replaced the root, the version directory or the lock file, it makes
///    them again first (see ``ProcessCoordinator``);
/// 2. tells the cache's memory what it found ( ``Hooks/didLock``): a reopened directory or
///    another process's change means memory must check its entries against the disk;
/// 3. settles a crashed batch or catches up with other processes' journal lines
///    (``JournalLedger``), then runs the caller's changes through ``Batch``, whose every
///    method announces its change in the journal before making it and records it after;
/// 4. records the reads since the last batch (uses, for the disk budget), enforces the budget,
///    appends the outcomes, and, when the disk changed, bumps the shared change count and
///    tells memory (``Hooks/didChange``);
/// 5. lets go of both locks and, if the disk changed, wakes the other processes' watchers
///    (``ChangeWatcher``); the caller reports the problems collected and notifies observers
///    after that, with no lock held.
///
/// Because ``Batch`` is the only holder of the write methods, a new kind of disk change cannot
/// forget the protocol. Reads never take the writer's lock: they go to ``store`` directly.
///
/// Thread safety: `Sendable`. The writer's lock is a ``BlockingLock``, held across file I/O by
/// design (its job is to order writes); the cache never waits for it on a cooperative thread.
final class DiskWriter: Sendable {
    /// The archives, for reads (no lock needed: a read never sees a half-written archive).
    let store: DiskStore
    let coordinator: ProcessCoordinator
    private let hooks: Hooks
    private let ledger: BlockingLock<JournalLedger?>
    /// Reads of archives (uses, for the disk budget) not yet in the journal; bounded.
    private let uses = Locked<[CachePath]>([])
    private let tracksUses: Bool
    /// The longest a batch waits for another holder of the lock file.
    private let lockTimeout: Duration
    /// Keeps the lock file's lock out of suspension (see ``SuspensionGate``).
    let gate: SuspensionGate

    /// What a batch tells the memory layer above it, which the disk layer cannot name.
    struct Hooks: Sendable {
        /// Called under the writer's lock once the batch holds the lock file, before any
        /// change: `reopened` when purged directories were made again, with the shared change
        /// count found.
        var didLock: @Sendable (_ reopened: Bool, _ change: UInt64) -> Void
        /// The archives memory served since the last batch (uses, for the disk budget).
        var takeReadArchives: @Sendable () -> [CachePath]
        /// Called under the writer's lock when the batch changed the disk: the change count
        /// before the batch and after it.
        var didChange: @Sendable (_ before: UInt64, _ after: UInt64) -> Void
        /// Called after the batch, with no lock held, with the collections the disk budget
        /// removed in it.
        var didEvictForBudget: @Sendable (_ collections: [ArchiveKey]) -> Void = { _ in }
    }

    /// Reads gathered before they are written to the journal in a batch of their own.
    static let pendingUsesLimit = 512
    /// The most reads kept waiting for the journal; the oldest go first (they only order the
    /// budget's evictions, and the newest uses are the ones that matter).
    static let pendingUsesCap = 4 * pendingUsesLimit

    /// Opens the writer of `store`'s version directory: the lock file (read-only when it
    /// cannot be written) and, on first use by a newer release, the rename of archives named
    /// by an earlier one.
    ///
    /// - Throws: `AppCacheError` when the lock file can be neither opened nor found read-only.
    init(
        store: DiskStore, diskByteLimit: Int?, isAppExtension: Bool = false, lockTimeout: Duration = .seconds(1),
        gate: SuspensionGate = SuspensionGate(startActivity: nil), hooks: Hooks
    ) throws(AppCacheError) {
        var store = store
        let coordinator: ProcessCoordinator
        do {
            coordinator = try ProcessCoordinator(fileSystem: store.fileSystem)
        } catch {
            throw AppCacheError(
                code: error.code, message: "The cache's lock file cannot be opened.", path: error.path, underlyingError: error)
        }
        if coordinator.isReadOnly { store.fileSystem.isReadOnly = true }
        self.store = store
        self.coordinator = coordinator
        self.hooks = hooks
        // The app's budget holds for every cache on the root (see recordBudget).
        tracksUses = coordinator.recordBudget(diskByteLimit, asExtension: isAppExtension) != nil
        self.lockTimeout = lockTimeout
        self.gate = gate
        ledger = BlockingLock(JournalLedger(store: store, coordinator: coordinator, diskByteLimit: diskByteLimit, isAppExtension: isAppExtension))
        if !coordinator.isReadOnly, coordinator.layoutVersion != CacheLayout.currentVersion {
            // Archives named by an earlier release: renamed once, under the lock (another
            // process may be opening too).
            ledger.withLock { _ in
                guard gate.enter() else { return }
                defer { gate.leave() }
                guard (try? coordinator.lock(fileSystem: store.fileSystem, timeout: lockTimeout, giveUp: { gate.isClosed })) != nil else { return }
                if coordinator.layoutVersion != CacheLayout.currentVersion {
                    store.migrateArchiveNames()
                    // The journal went with the old names.
                    coordinator.journalGeneration &+= 1
                    coordinator.journalLength = 0
                    coordinator.layoutVersion = CacheLayout.currentVersion
                    coordinator.didChange()
                }
                coordinator.unlock()
            }
        }
    }

    /// Whether a disk budget held for the root when the cache opened (the app's, or this
    /// cache's own): reads are then uses, which order the budget's evictions.
    var hasBudget: Bool { tracksUses }

    /// Whether this process may not change the disk (a read-only volume or root).
    var isReadOnly: Bool { coordinator.isReadOnly }

    /// The shared change count: moves on with every batch, of any process, that changed the
    /// disk. Lock-free; read on every memory hit.
    var changeCount: UInt64 { coordinator.changeCount }

    /// Runs `body`'s changes as one batch (see the type's documentation).
    ///
    /// - Parameters:
    ///   - problems: receives what went wrong without failing the batch (damage found, a
    ///     journal that could not be written), to report once no lock is held; filled even
    ///     when the batch throws.
    ///   - changed: set when the batch changed the disk (or found it purged): observers must
    ///     hear of it.
    /// - Throws: what `body` throws; `permissionDenied` on a read-only cache; `busy` when the
    ///   lock file stayed locked past the lock timeout or the system is suspending the process
    ///   (the ``SuspensionGate`` is closed); what recreating a purged directory reports
    ///   (`permissionDenied`, `noSpace`, `ioFailure`).
    func batch<Result>(
        problems: inout [AppCacheError], changed: inout Bool, _ body: (inout Batch) throws -> Result
    ) throws -> Result {
        guard gate.enter() else { throw suspended() }
        defer { gate.leave() }
        var evicted: [ArchiveKey] = []
        defer { if !evicted.isEmpty { hooks.didEvictForBudget(evicted) } }
        return try ledger.withLock { held in
            let reopened: Bool
            do throws(SystemError) {
                reopened = try coordinator.lock(fileSystem: store.fileSystem, timeout: lockTimeout, giveUp: { gate.isClosed })
            } catch {
                if gate.isClosed { throw suspended() }
                if error.code == .versionRemoved {
                    throw AppCacheError(
                        code: .versionRemoved,
                        message: "Another app schema version opened the cache root and removed this version's data; nothing was written. Reopen the cache with the new schema version.",
                        path: error.path, underlyingError: error)
                }
                if error.code == .busy {
                    throw AppCacheError(
                        code: .busy, message: "Another process held the cache's lock file past the lock timeout; nothing was written.",
                        path: error.path, underlyingError: error)
                }
                throw coordinator.isReadOnly
                    ? AppCacheError(
                        code: .permissionDenied, message: "The cache is read-only: its directory cannot be written.",
                        path: store.fileSystem.versionPath, underlyingError: error)
                    : AppCacheError(
                        code: error.code, message: "The cache directory was removed and cannot be made again.",
                        path: error.path, underlyingError: error)
            }
            let crashed = coordinator.beginBatch()
            let changeBefore = coordinator.changeCount
            if reopened { store.packs.forgetAll() }
            hooks.didLock(reopened, changeBefore)
            // Moved, not copied: the index inside is large, and a copy would be made on write.
            var batch = Batch(ledger: held.moveOut()!, store: store, gate: gate, change: changeBefore)
            if reopened { batch.ledger.forgetOpenJournal() }
            batch.ledger.begin(afterCrash: crashed)
            defer {
                if tracksUses {
                    // Reads are uses: from disk (gathered as they happened) and from memory;
                    // recorded before this batch's writes, which are newer still.
                    let fromDisk = uses.withLock { uses in
                        defer { uses = [] }
                        return uses
                    }
                    batch.ledger.recordUses(fromDisk + hooks.takeReadArchives())
                }
                batch.ledger.finish()
                let announces = batch.ledger.changedDisk || reopened
                if announces {
                    changed = true
                    hooks.didChange(changeBefore, coordinator.didChange())
                    batch.ledger.changedDisk = false
                }
                coordinator.endBatch()
                coordinator.unlock()
                // After unlocking, so that a woken process does not wait for this lock.
                if announces { coordinator.announceChange() }
                problems += batch.ledger.problems
                batch.ledger.problems = []
                evicted = batch.ledger.evictedForBudget
                batch.ledger.evictedForBudget = []
                held = batch.ledger
            }
            return try body(&batch)
        }
    }

    /// The error of a batch (or a write in one) the ``SuspensionGate`` kept from starting.
    private func suspended() -> AppCacheError {
        Self.suspended(lockFilePath: lockFilePath)
    }

    fileprivate static func suspended(lockFilePath: String) -> AppCacheError {
        AppCacheError(
            code: .busy,
            message: "The system is suspending the process: no disk write starts until the app is active again (a lock held into suspension gets the app terminated); nothing was written.",
            path: lockFilePath)
    }

    /// The lock file's path, for errors that name it.
    var lockFilePath: String {
        Self.lockFilePath(of: store)
    }

    fileprivate static func lockFilePath(of store: DiskStore) -> String {
        store.fileSystem.displayPath(CachePath(directory: nil, name: ProcessCoordinator.fileName))
    }

    /// Notes a read of the archive at `path` as a use, for the disk budget (only with one).
    ///
    /// - Returns: `true` when enough uses have gathered that a batch of their own should
    ///   write them to the journal (the caller runs it on a library thread).
    func noteUse(of path: CachePath) -> Bool {
        guard tracksUses else { return false }
        let count = uses.withLock { uses in
            if uses.count >= Self.pendingUsesCap { uses.removeFirst(uses.count - Self.pendingUsesCap + 1) }
            uses.append(path)
            return uses.count
        }
        return count == Self.pendingUsesLimit
    }

    /// How many reads wait for the journal.
    var pendingUseCount: Int {
        uses.withLock { $0.count }
    }

    /// The changes a batch may make, each announced in the journal before it is made and
    /// recorded after it. Exists only inside ``DiskWriter/batch(problems:changed:_:)``.
    struct Batch {
        fileprivate var ledger: JournalLedger
        let store: DiskStore
        fileprivate let gate: SuspensionGate
        /// The shared change count when the batch took the lock: no other process changes the
        /// disk until it ends, so what a pack held at this count is still what it holds
        /// (besides this batch's own appends, which its index already has).
        fileprivate let change: UInt64

        /// Writes the archive for `key` at `path`.
        ///
        /// - Returns: which file the archive now is.
        /// - Throws: what ``DiskStore/write(_:forKey:at:temporaryName:)`` throws; `busy` when
        ///   the system started suspending the process once the batch had begun (nothing is
        ///   written then).
        @discardableResult
        mutating func write(_ record: ArchiveRecord, forKey key: ArchiveKey, at path: CachePath) throws(AppCacheError) -> FileVersion {
            let written = write([ArchiveWrite(record: record, key: key, path: path)])
            if let error = written.failures[0] { throw error }
            guard let identity = written.identities.first ?? nil else {
                throw DiskWriter.suspended(lockFilePath: DiskWriter.lockFilePath(of: store))
            }
            return identity
        }

        /// What ``write(_:until:)`` did with each archive it tried.
        struct Written {
            /// By position, for each archive tried (the rest, after the batch was told to
            /// stop, were not): which file it now is; `nil` where it could not be written.
            var identities: [FileVersion?]
            /// By position: why an archive could not be written.
            var failures: [Int: AppCacheError] = [:]
        }

        /// Writes several archives: small ones appended to their directories' packs (one
        /// `write` per pack, announced by one journal line per pack), large ones as files of
        /// their own (each announced by its own intent, all in one journal write first).
        ///
        /// - Parameter shouldStop: asked before each archive; once it says `true`, or the
        ///   system is suspending the process (``SuspensionGate/isClosed``), the rest are not
        ///   written (their announcements are settled when the batch finishes).
        /// - Returns: for each archive tried, by position, which file it now is or why it could
        ///   not be written (``Written``); those after the batch stopped are not in it.
        mutating func write(
            _ archives: [ArchiveWrite], until shouldStop: () -> Bool = { false }
        ) -> Written {
            // Read in place: an element read through an array's subscript is copied whole
            // (every string and buffer retained) at each use.
            archives.withUnsafeBufferPointer { archives in
                // Which archives go into packs: decided first, so that only files are announced
                // one by one. (The room is counted for all the batch's packed archives: enough to
                // stay within the bound, whichever directories they go to.)
                var headers: [ArchiveHeader] = []
                var isPacked: [Bool] = []
                headers.reserveCapacity(archives.count)
                isPacked.reserveCapacity(archives.count)
                var packedBytes = 0
                // The room left in each directory's pack, asked once per directory (most batches
                // are one user's).
                var room: [(directory: String, bytes: Int)] = []
                for position in archives.indices {
                    let header = DiskStore.header(of: archives[position].record, forKey: archives[position].key)
                    let length = header.encodedLength + archives[position].record.payload.count
                    var packs = store.packs(archiveOf: length)
                    if packs {
                        let directory = archives[position].packDirectory
                        let left: Int
                        if let known = room.last(where: { $0.directory == directory }) {
                            left = known.bytes
                        } else {
                            left = store.packs.room(in: directory)
                            room.append((directory, left))
                        }
                        packs = packedBytes + length <= left
                    }
                    if packs { packedBytes += length + PackRecord.prefixLength }
                    headers.append(header)
                    isPacked.append(packs)
                }
                let temporaryNames = isPacked.map { $0 ? "" : FileSystem.temporaryName() }
                ledger.announce(archives.indices.compactMap { position in
                    temporaryNames[position].isEmpty ? nil : .willChange(path: archives[position].path, temporaryName: temporaryNames[position])
                })
                var results = Written(identities: [])
                results.identities.reserveCapacity(archives.count)
                func settle(_ position: Int, _ result: Swift.Result<FileVersion, AppCacheError>) {
                    switch result {
                    case .success(let identity): results.identities[position] = identity
                    case .failure(let error): results.failures[position] = error
                    }
                }
                // Small archives go into their directories' packs, gathered and appended together
                // (one `write` per pack) before a file of the same path or at the end: by position.
                var packing: [Int] = []
                func appendPacked() {
                    guard !packing.isEmpty else { return }
                    // The packs appended to, each with its archives, in the order first met (most
                    // batches are one user's: one pack).
                    var groups: [(directory: String, positions: [Int])] = []
                    for position in packing {
                        let directory = archives[position].packDirectory
                        if let group = groups.lastIndex(where: { $0.directory == directory }) {
                            groups[group].positions.append(position)
                        } else {
                            groups.append((directory, [position]))
                        }
                    }
                    let directories = groups.map(\.directory).sorted()
                    ledger.announce(directories.map { .willAppend(directory: $0) })
                    let (written, failures, damage) = store.writePacked(archives, headers: headers, in: groups)
                    for problem in damage { report(problem) }
                    let recordsEach = ledger.recordsEachPackedArchive
                    for position in packing {
                        if let outcome = written[position] {
                            if recordsEach {
                                ledger.recordPacked(
                                    .set(path: archives[position].path, size: outcome.size, isPinned: archives[position].record.isPinned),
                                    inDirectory: archives[position].packDirectory)
                            }
                            results.identities[position] = outcome.identity
                        } else if let error = failures[archives[position].packDirectory] {
                            if error.errorNumber == EFBIG {
                                // The pack is full (another process filled it): a file of its own.
                                let temporaryName = FileSystem.temporaryName()
                                ledger.announce([.willChange(path: archives[position].path, temporaryName: temporaryName)])
                                settle(position, writeFile(
                                    archives[position].record, headers[position].encoded(), archives[position].key, archives[position].path, temporaryName))
                            } else {
                                let key = archives[position].key
                                results.failures[position] = AppCacheError(
                                    code: error.code, message: "The items could not be written; what was cached before is unchanged.",
                                    cacheName: key.cacheName, key: key.key, path: error.path, underlyingError: error)
                            }
                        }
                    }
                    if !recordsEach {
                        for directory in directories where failures[directory] == nil { ledger.notePacked(inDirectory: directory) }
                    }
                    // Each pack holds what was appended whole, or what it held before.
                    for directory in directories { ledger.record(.appended(directory: directory)) }
                    // Compaction and checkpoints look after the packs of user directories.
                    // (A group's archives share their directory: its first one tells.)
                    let appended = Set(groups.filter { archives[$0.positions[0]].path.directory != nil }.map(\.directory))
                    compactWastefulPacks(appended)
                    checkpointPacks(appended)
                    packing = []
                }
                for position in archives.indices {
                    if shouldStop() || gate.isClosed { break }
                    results.identities.append(nil)
                    if isPacked[position] {
                        packing.append(position)
                        continue
                    }
                    if packing.contains(where: { archives[$0].path == archives[position].path }) { appendPacked() }
                    settle(position, writeFile(
                        archives[position].record, headers[position].encoded(), archives[position].key, archives[position].path,
                        temporaryNames[position]))
                }
                appendPacked()
                return results
            }
        }

        /// Writes one archive as a file of its own, through `temporaryName` (announced), and
        /// records it.
        private mutating func writeFile(
            _ record: ArchiveRecord, _ header: [UInt8], _ key: ArchiveKey, _ path: CachePath, _ temporaryName: String
        ) -> Swift.Result<FileVersion, AppCacheError> {
            Swift.Result { () throws(AppCacheError) in
                let (size, identity) = try store.write(record, header: header, forKey: key, at: path, temporaryName: temporaryName)
                ledger.record(.set(path: path, size: size, isPinned: record.isPinned))
                return identity
            }
        }

        /// Rewrites `directory`'s pack with its live records only (see
        /// ``JournalLedger/compactPack(inDirectory:)``).
        ///
        /// - Returns: whether it did.
        @discardableResult
        mutating func compactPack(inDirectory directory: String) -> Bool {
            ledger.compactPack(inDirectory: directory)
        }

        /// Rewrites the packs among `directories` whose dead records outweigh their live ones,
        /// each through a temporary file announced in the journal. A failure is reported and
        /// leaves the pack as it was.
        private mutating func compactWastefulPacks(_ directories: Set<String>) {
            for directory in directories.sorted() where store.packs.isWasteful(directory) {
                compactPack(inDirectory: directory)
            }
        }

        /// Checkpoints the packs among `directories` that had enough written since their
        /// checkpoint (``PackTable/needsCheckpoint(_:fileSystem:)``, ``PackCheckpoint``).
        private mutating func checkpointPacks(_ directories: Set<String>) {
            for directory in directories.sorted() where store.packs.needsCheckpoint(directory, fileSystem: store.fileSystem) {
                ledger.checkpointPack(inDirectory: directory)
            }
        }

        /// Removes the archive at `path`; a missing file is not an error.
        mutating func delete(at path: CachePath, key: ArchiveKey?) throws(AppCacheError) {
            ledger.announce([.willChange(path: path, temporaryName: FileSystem.temporaryName())])
            try store.removeFile(at: path, key: key)
            ledger.record(.remove(path: path))
        }

        /// Removes the archive at `path` if it is still the file `identity` (`nil`: still no
        /// regular file, such as a FIFO); a newer archive another writer put there stays.
        mutating func delete(at path: CachePath, ifStill identity: FileVersion?, key: ArchiveKey) throws(AppCacheError) {
            guard store.facts(of: path, change: change)?.identity == identity else { return }
            try delete(at: path, key: key)
        }

        /// Moves a user directory out of view in one rename (a crash never leaves part of it
        /// readable).
        ///
        /// - Returns: the trash directory to delete once no lock is held; `nil` when there was
        ///   no such directory.
        /// - Throws: `permissionDenied` or `ioFailure` when it cannot be moved; its archives are
        ///   then unchanged.
        mutating func wipe(userDirectory directory: String) throws(AppCacheError) -> String? {
            ledger.announce([.willRemoveAll(directory: directory)])
            let trash = try store.moveOutOfView(userDirectory: directory)
            ledger.record(.removeAll(directory: directory))
            return trash
        }

        /// Sets the archive at `path`'s modification date to `date`, its bytes untouched, if it
        /// is still the file `identity`.
        ///
        /// - Returns: which file it now is; `nil` when it was removed or replaced meanwhile.
        mutating func redate(_ path: CachePath, ifStill identity: FileVersion, to date: Date, key: ArchiveKey) throws(AppCacheError) -> FileVersion? {
            let redated = try store.redate(path, ifStill: identity, to: date, key: key)
            // The size and pin are unchanged: nothing for the journal, but other processes
            // must check what they hold (the cached date moved).
            if redated != nil { ledger.changedDisk = true }
            return redated
        }

        /// The root record file at `path` as it is under the lock, with its identity.
        ///
        /// - Throws: `SystemError` when the file exists but cannot be read.
        func readRecordFile(at path: CachePath, maximumSize: Int) throws(SystemError) -> RecordFileRead {
            try store.readRecordFileWithIdentity(at: path, maximumSize: maximumSize)
        }

        /// Replaces the root record file at `path` with `file`, atomically (a temporary file
        /// renamed over it, announced in the journal so that a crash before the rename leaves
        /// nothing the next batch does not remove); every watching process is told the disk
        /// changed.
        ///
        /// - Parameters:
        ///   - synchronize: whether the bytes are synced to the device before the rename (a
        ///     queued change must survive a power loss); other records need not be.
        ///   - failure: what the error says went wrong, when it cannot be written.
        /// - Throws: `permissionDenied`, `noSpace` or `ioFailure`; the file is as it was.
        mutating func replace(_ file: some RootRecordFile, at path: CachePath, synchronize: Bool = false, failure: String) throws(AppCacheError) {
            let bytes = file.encoded()
            // Its temporary file sits beside it and is announced as a journal rewrite's is.
            let temporaryName = FileSystem.temporaryName()
            ledger.announce([.willCompact(temporaryName: temporaryName, directory: path.directory)])
            defer { ledger.record(.temporaryGone(name: temporaryName, directory: path.directory)) }
            do throws(SystemError) {
                _ = try store.fileSystem.writeAtomically(
                    header: [], payload: bytes, to: path, temporaryName: temporaryName, modificationDate: Date(), synchronize: synchronize)
            } catch {
                throw AppCacheError(code: error.code, message: failure, path: error.path, underlyingError: error)
            }
            // No archive changed, but every watching process must look.
            ledger.changedDisk = true
        }

        /// Appends `bytes` to the root record file at `path`, synced to the device when
        /// `synchronize` says; every watching process is told the disk changed.
        ///
        /// - Returns: whether it appended; `false` when the file is not there (it went since it
        ///   was read): the caller writes it whole.
        /// - Throws: `permissionDenied`, `noSpace` or `ioFailure`.
        mutating func append(_ bytes: Data, toRecordFile path: CachePath, synchronize: Bool, failure: String) throws(AppCacheError) -> Bool {
            do throws(SystemError) {
                let appended = try store.fileSystem.append(bytes, to: path, synchronize: synchronize) != nil
                if appended { ledger.changedDisk = true }
                return appended
            } catch {
                throw AppCacheError(code: error.code, message: failure, path: error.path, underlyingError: error)
            }
        }

        /// Removes the root record file at `path`, if there is one; every watching process is
        /// told the disk changed.
        mutating func removeRecordFile(at path: CachePath, failure: String) throws(AppCacheError) {
            do throws(SystemError) {
                try store.fileSystem.removeFile(path)
            } catch {
                throw AppCacheError(code: error.code, message: failure, path: error.path, underlyingError: error)
            }
            ledger.changedDisk = true
        }

        /// Which regular file is at `path` now (under the lock: no other writer changes it
        /// until the batch ends).
        func facts(of path: CachePath) -> FileFacts? {
            store.facts(of: path, change: change)
        }

        /// Removes every temporary file: with the lock file held, any left is a crash's.
        func sweepTemporaryFiles() {
            store.sweepTemporaryFiles()
        }

        /// The bytes the archives take on disk, of every user and process: their files and
        /// their directories' packs, dead records included (see
        /// ``JournalLedger/diskUsage()``). Loads the disk index, and keeps it from now on, if
        /// it was not.
        mutating func diskUsage() -> Int {
            ledger.diskUsage()
        }

        /// Loads the disk index (replaying the journal, or rebuilding it) and keeps it.
        mutating func loadIndex() {
            ledger.ensureIndex()
        }

        /// Adds a problem to report once the batch's locks are released.
        mutating func report(_ problem: AppCacheError) {
            ledger.problems.append(problem)
        }
    }
}
