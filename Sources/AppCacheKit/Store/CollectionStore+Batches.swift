import Foundation

extension CollectionStore {
    /// The bytes the archives of the current app schema version take on disk, of every user
    /// and every process sharing the root (see ``AppCache/bytesOnDisk()-9srlz``).
    ///
    /// - Throws: what a batch throws.
    func bytesOnDisk() throws -> Int {
        // Removals still due, and the budget, first: a batch counts its own changes, and keeps
        // the disk within the budget, only once it ends. (Any batch carries out what is due.)
        if disk.hasBudget {
            try withDiskWrites { _ in }
        } else {
            _ = settleDueWipes()
        }
        return try withDiskWrites { batch in batch.diskUsage() }
    }

    /// Runs a batch of disk changes (see ``DiskWriter``), after the removals still due
    /// (``DueWipes``); then, with no lock held, deletes what those moved to the trash, reports
    /// the problems found to `diagnostics` and, if the disk changed, tells observers of
    /// ``AppCache/updates(_:forKey:)``.
    ///
    /// - Throws: what `body` throws; what ``DiskWriter/batch(problems:changed:_:)`` throws.
    func withDiskWrites<Result>(_ body: (inout DiskWriter.Batch) throws -> Result) throws -> Result {
        var problems: [AppCacheError] = []
        var changed = false
        let interval = events.systemLog?.begin("disk batch", disk.store.layout.versionDirectoryName)
        defer {
            if let interval { events.systemLog?.end(interval) }
            // What this batch's wipes moved out of view (at its start, or before a write).
            let trashes = state.withLock { state in
                defer { state.trashesToDelete = [] }
                return state.trashesToDelete
            }
            problems += trashes.compactMap { disk.store.deleteTrash($0) }
            if changed { onChange(nil, nil) }
            reportAll(problems)
        }
        if let removal = state.withLock({ $0.versionRemoval }) { throw removal }
        do {
            return try disk.batch(problems: &problems, changed: &changed) { batch in
                performDueWipes(&batch)
                recordDueSignedInUser(&batch)
                return try body(&batch)
            }
        } catch let error as AppCacheError where error.code == .versionRemoved {
            noteVersionRemoved(error)
            throw error
        }
    }

    /// Another app schema version (a newer app, whose extension this may be) removed this
    /// version's directory: the cache stops writing and forgets what memory holds (no version
    /// can take it any more), so reads miss; every write throws `error` from now on, and
    /// `diagnostics` hears of it once.
    func noteVersionRemoved(_ error: AppCacheError) {
        state.withLock { state in
            guard state.versionRemoval == nil else { return }
            state.versionRemoval = error
            state.memory.removeEverything()
        }
        onChange(nil, nil)
    }

    /// Moves the user directories of removals still due out of view, in `batch`; the trash
    /// directories go to ``StoreState/trashesToDelete``, deleted once no lock is held.
    ///
    /// Every batch does it first, and every archive write again just before it writes, with
    /// the removals due when it took its entries from memory (`due`): a removal may come while
    /// a batch runs, on another thread, and a user's entries in memory then are newer than it
    /// (a removal takes its user's entries out of memory), so their archives must not be wiped
    /// by the next batch.
    func performDueWipes(_ batch: inout DiskWriter.Batch, _ snapshot: DueWipes? = nil) {
        performSharedRemovals(&batch)
        let done = disk.coordinator.removals.doneCount
        var due = snapshot ?? state.withLock { state in
            state.dueWipes.didCarryOutShared(below: done)
            return state.dueWipes
        }
        // Removals in the shared record that a batch (this one, or another process's) carried
        // out are not this process's any more: the directories may hold newer data by now.
        due.didCarryOutShared(below: done)
        guard !due.isEmpty else { return }
        var directories = due.directories
        if due.allUsers {
            do {
                directories.formUnion(try disk.store.userDirectories())
            } catch {
                batch.report(error)
                return
            }
        }
        var trashes: [String] = []
        var wiped: [String] = []
        for directory in directories.sorted() {
            do {
                if let trash = try batch.wipe(userDirectory: directory) { trashes.append(trash) }
                wiped.append(directory)
            } catch {
                if state.withLock({ $0.dueWipes.shouldReport(directory) }) {
                    var failure = error
                    failure.message = "A removed user's archives could not leave the disk (\(error.message)); they stay out of reach of reads and go with the next write."
                    batch.report(failure)
                }
            }
        }
        state.withLock { state in
            state.dueWipes.didWipe(wiped, allUsers: due.allUsers && wiped.count == directories.count)
            state.trashesToDelete += trashes
        }
    }

    /// Carries out the removals of every process recorded in the root's shared record
    /// (``PendingRemovals``), oldest first, before anything else the batch does; then notes
    /// them done. A directory that cannot be moved is reported, and they stay pending (every
    /// read still misses it) for the next batch to try again.
    private func performSharedRemovals(_ batch: inout DiskWriter.Batch) {
        let removals = disk.coordinator.removals
        let (end, pending) = removals.pending()
        guard !pending.isEmpty else {
            removals.markDone(upTo: end)
            return
        }
        var hashes: Set<UInt64> = []
        var allUsers = false
        for entry in pending {
            switch entry {
            case .directory(let hash): hashes.insert(hash)
            case .allUsers: allUsers = true
            // Its recorder died before writing it, or is too slow: it was never acknowledged,
            // and a recorder that finds it passed carries its removal out itself.
            case .unknown: continue
            }
        }
        let onDisk: [String]
        do {
            onDisk = try disk.store.userDirectories()
        } catch {
            batch.report(error)
            return
        }
        var trashes: [String] = []
        var failed = false
        for directory in onDisk.sorted() where allUsers || hashes.contains(PendingRemovals.hash(of: directory)) {
            do {
                if let trash = try batch.wipe(userDirectory: directory) { trashes.append(trash) }
            } catch {
                failed = true
                if state.withLock({ $0.dueWipes.shouldReport(directory) }) {
                    var failure = error
                    failure.message = "A removed user's archives could not leave the disk (\(error.message)); they stay out of reach of reads and go with the next write."
                    batch.report(failure)
                }
            }
        }
        state.withLock { $0.trashesToDelete += trashes }
        if !failed { removals.markDone(upTo: end) }
    }

    /// Records the signed-in user a switch, sign-out or removal left due (see
    /// ``Configuration/followsSignedInUser``), unless the record already says so.
    private func recordDueSignedInUser(_ batch: inout DiskWriter.Batch) {
        guard let due = state.withLock({ state -> String?? in
            defer { state.signedInUserDue = nil }
            return state.signedInUserDue
        }) else { return }
        if case .some(let recorded) = SignedInUserRecord.read(from: disk.store), recorded == due { return }
        do {
            try batch.replace(SignedInUserRecord(user: due), at: SignedInUserRecord.path, failure: "The signed-in user could not be recorded for the app's extensions.")
        } catch {
            batch.report(error)
            // Tried again by the next batch, unless a newer switch is due by then.
            state.withLock { if $0.signedInUserDue == nil { $0.signedInUserDue = .some(due) } }
        }
    }

    /// Whether `path` is in a directory whose removal is recorded but not yet carried out, by
    /// this process (``DueWipes``) or another (``PendingRemovals``): its archives are removed
    /// as far as reads go, while the write-back thread takes them off the disk. A read asks it
    /// instead of running a batch, so it never waits for the lock file.
    func isRemoved(_ path: CachePath) -> Bool {
        disk.coordinator.removals.covers(path.directory) || state.withLock { $0.dueWipes.covers(path.directory) }
    }

    /// Notes that this process reads the root (``PeerPresence``): other processes' writers
    /// then write back promptly, so what they cache reaches this one's reads.
    func renewPresence() {
        disk.coordinator.presence.renew()
    }

    /// Carries out the removals still due, before work that lists or measures the disk.
    ///
    /// - Returns: those that could not be carried out, whose archives reads must not see.
    func settleDueWipes() -> DueWipes {
        // Another process's removals too: a batch counts the directories it moves only once
        // it ends, so measuring in the batch that moves them would count them still.
        guard state.withLock({ !$0.dueWipes.isEmpty }) || disk.coordinator.removals.hasPending else { return DueWipes() }
        _ = try? withDiskWrites { _ in }
        return state.withLock { $0.dueWipes }
    }
}
