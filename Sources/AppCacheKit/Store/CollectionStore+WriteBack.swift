import Foundation

extension CollectionStore {
    /// Writes every dirty collection, as ``AppCache/flush()`` does.
    ///
    /// - Throws: the first write error, its message counting the collections that failed.
    func flush() throws {
        let failures = writeDirtyEntries()
        if let first = failures.first {
            if first.code == .versionRemoved { throw first }
            throw AppCacheError(
                code: first.code,
                message: "\(failures.count) collection(s) could not be written; they stay in memory for the next flush.",
                cacheName: first.cacheName, key: first.key, path: first.path, underlyingError: first.underlyingError)
        }
    }

    /// Empties memory as the system asks (see ``AppCache/didReceiveMemoryWarning()``).
    func didReceiveMemoryWarning() {
        let keys = state.withLock { $0.memory.evictAll() }
        spillInBackground(keys)
    }

    /// What the memory layer holds and how it has served so far.
    var memoryStatistics: AppCache.MemoryStatistics {
        state.withLock { state in
            let memory = state.memory
            return AppCache.MemoryStatistics(
                entries: memory.entryCount, bytes: memory.byteCount, dirtyEntries: memory.dirtyCount, hits: memory.hits,
                misses: memory.misses, spills: memory.spills)
        }
    }

    /// Writes the detached (evicted while dirty) entries on the write-back queue: the caller (a
    /// write past the memory limit, a switch of user, a memory warning) never waits for the
    /// disk. Until written they stay in memory, answering reads; a write that fails is
    /// reported to `diagnostics` and retried by the write-back timer and every flush.
    func spillInBackground(_ keys: [MemoryKey]) {
        if events.isObserved { recordEvictions(state.withLock { $0.memory.takeEvicted() }, .memoryLimit) }
        guard !keys.isEmpty, writeBack.claimSpill() else { return }
        writeBack.queue.async { [weak self] in
            guard let self else { return }
            writeBack.spillStarted()
            let keys = state.withLock { $0.memory.detachedKeys }
            // The system is suspending the process: they stay in memory, readable, until the
            // app's return writes them.
            guard !disk.gate.isClosed else { return }
            let failures = spill(keys)
            reportAll(failures)
            if !failures.isEmpty { scheduleWriteBack() }
        }
    }

    /// Writes the detached (evicted while dirty) entries among `keys`, each as its archive.
    ///
    /// - Returns: the errors of the writes that failed; those entries stay detached and dirty.
    func spill(_ keys: [MemoryKey]) -> [AppCacheError] {
        guard !keys.isEmpty else { return [] }
        do {
            return try withDiskWrites { batch in
                // A removal that came since the batch began goes first: these entries are newer.
                let (entries, due) = state.withLock { ($0.memory.detachedEntries(keys), $0.dueWipes) }
                performDueWipes(&batch, due)
                return write(entries, spilled: true, &batch)
            }
        } catch {
            return unwritten(count: keys.count, because: error)
        }
    }

    /// Writes every dirty entry, oldest first.
    ///
    /// - Parameter shouldStop: asked before each archive; once it says `true`, the rest stay
    ///   dirty (the system is about to suspend the process).
    /// - Returns: the errors of the writes that failed; those entries stay dirty.
    func writeDirtyEntries(until shouldStop: () -> Bool = { false }) -> [AppCacheError] {
        do {
            return try withDiskWrites { batch in
                let (entries, due) = state.withLock { ($0.memory.dirtyEntries(), $0.dueWipes) }
                performDueWipes(&batch, due)
                return write(entries, spilled: false, until: shouldStop, &batch)
            }
        } catch {
            return unwritten(count: state.withLock { $0.memory.dirtyCount }, because: error)
        }
    }

    /// The errors of `count` dirty collections that stay in memory because no batch could
    /// start (a read-only cache, a purged directory that cannot be made again).
    private func unwritten(count: Int, because error: any Error) -> [AppCacheError] {
        var failure = AppCacheError(wrapping: error)
        // A removed version dropped what memory held: said once, nothing stays dirty.
        if failure.code == .versionRemoved { return [failure] }
        guard count > 0 else { return [] }
        failure.message = "A cached collection could not be written to disk (\(failure.message)); it stays in memory, dirty, for the next flush."
        return Array(repeating: failure, count: count)
    }

    /// Writes `entries` (taken inside the batch) and records which generations reached disk.
    ///
    /// An entry not checked since another process or instance changed the disk is compared with
    /// its archive first (``MemoryEntry/agrees(withDisk:epoch:)``): when the disk holds items
    /// cached later than the entry's, those win, and the entry leaves memory unwritten.
    private func write(
        _ entries: consuming [(key: MemoryKey, entry: MemoryEntry)], spilled: Bool, until shouldStop: () -> Bool = { false },
        _ batch: inout DiskWriter.Batch
    ) -> [AppCacheError] {
        let epoch = state.withLock { $0.memory.epoch }
        // What goes to disk, and whose it is: built by position, without copying the entries.
        var archives: [ArchiveWrite] = []
        var owners: [(key: MemoryKey, generation: UInt64)] = []
        var superseded: [(key: MemoryKey, generation: UInt64)] = []
        archives.reserveCapacity(entries.count)
        owners.reserveCapacity(entries.count)
        // Each element taken once: an element of an array of tuples is copied whole (through an
        // outlined copy) at every use of the subscript, even through a buffer pointer.
        for (key, entry) in entries {
            if entry.epoch == epoch || entry.agrees(withDisk: batch.facts(of: entry.path), epoch: epoch) {
                archives.append(ArchiveWrite(record: entry.record, key: entry.archiveKey, path: entry.path))
                owners.append((key, entry.generation))
            } else {
                superseded.append((key, entry.generation))
            }
        }
        // Gone before the entries in memory change: their copies here would make each change
        // copy the entry's details.
        entries = []
        if !superseded.isEmpty {
            state.withLock { state in
                for (key, generation) in superseded { state.memory.remove(key, generation: generation) }
            }
        }
        let results = batch.write(archives, until: shouldStop)
        var written: [(MemoryKey, UInt64, FileVersion)] = []
        var failures: [AppCacheError] = []
        let tried = results.identities.count
        written.reserveCapacity(tried)
        if tried < archives.count && !shouldStop() {
            // The system is suspending the process (the batch stopped between archives): the
            // rest stay dirty, and a flush must say it did not write everything.
            let failure = AppCacheError(
                code: .busy,
                message: "The system is suspending the process: the collection stays in memory, dirty, for the next flush.",
                path: disk.lockFilePath)
            failures += Array(repeating: failure, count: archives.count - tried)
        }
        var happened: [CacheEventHub.Happened] = []
        happened.reserveCapacity(spilled ? 2 * tried : tried)
        for position in 0..<tried {
            if let identity = results.identities[position] {
                written.append((owners[position].key, owners[position].generation, identity))
                let bytes = archives[position].record.payload.count
                let key = archives[position].key
                happened.append(CacheEventHub.Happened(kind: .written(bytes: bytes), collection: key))
                if spilled { happened.append(CacheEventHub.Happened(kind: .spilled(bytes: bytes), collection: key)) }
            } else if var error = results.failures[position] {
                error.message = "A cached collection could not be written to disk; it stays in memory, dirty, for the next flush."
                failures.append(error)
            }
        }
        events.record(happened)
        if !written.isEmpty {
            state.withLock { state in
                for (key, generation, identity) in written {
                    state.memory.didWrite(key, generation: generation, identity: identity, spilled: spilled)
                }
            }
        }
        return failures
    }

    /// Arranges for dirty collections to be written `writeBackDelay` after the first of them
    /// was cached, or within ``WriteBack/sharedDelay`` while another live process uses the root
    /// (``PeerPresence``), unless the delay says to wait for events.
    func scheduleWriteBack() {
        // A read-only cache cannot write: its dirty collections wait for an explicit flush
        // (which throws permissionDenied), rather than fail again every delay.
        guard let delay = configuration.writeBackDelay, delay > .zero, !disk.isReadOnly else { return }
        let presence = disk.coordinator.presence
        writeBack.schedule(after: delay, timers: configuration.timers, othersArePresent: { presence.othersArePresent() }) { [weak self] due in
            self?.performScheduledWriteBack(due: due)
        }
    }

    /// Writes every dirty collection now, as the write-back timer does, reporting failures to
    /// `diagnostics`; then arranges the next write-back if collections are still dirty.
    ///
    /// - Parameter due: the deadline of the timer that fired: a timer made needless by an
    ///   earlier one (brought forward by a present peer) leaves the schedule alone.
    func performScheduledWriteBack(due: UInt64? = nil) {
        guard writeBack.fire(due: due) else { return }
        // The system is suspending the process: the app's return schedules the write again.
        guard !disk.gate.isClosed else { return }
        let failures = writeDirtyEntries()
        reportAll(failures)
        // Failed writes wait for the next write-back, not a tight retry loop.
        if state.withLock({ $0.memory.dirtyCount > 0 }) {
            scheduleWriteBack()
        }
    }

    /// The app is back from the background: writes may start again, and what waited for it
    /// (detached entries, the write-back) is arranged.
    func resume() {
        disk.gate.open()
        spillInBackground(state.withLock { $0.memory.detachedKeys })
        scheduleWriteBack()
    }

    /// Writes every dirty collection on the write-back thread, inside the system's background
    /// time (``SuspensionGate``); with `thenClose`, no write starts after it (an extension's
    /// host went to the background, and the process is about to be suspended).
    func flushBeforeSuspension(thenClose: Bool) {
        let gate = disk.gate
        guard gate.enter() else { return }
        writeBack.queue.async { [weak self] in
            // Collections the end of the system's time left dirty are no problem to report.
            if let self { reportAll(writeDirtyEntries().filter { $0.code != .busy || !gate.isClosed }) }
            gate.leave()
            if thenClose { gate.close() }
        }
    }
}
