import Foundation

extension AppCache {
    /// Writes every dirty collection to disk.
    ///
    /// After it returns, everything cached before the call is on disk, unless it throws. Each
    /// archive gets the moment its items were cached as its modification date, not the moment
    /// of the flush. Collections stay in memory, now clean.
    ///
    /// - Throws: the first write error (`noSpace`, `permissionDenied`, `notADirectory`,
    ///   `ioFailure`), its message counting the collections that failed. Those stay dirty in
    ///   memory for the next flush; the others are written.
    /// - Complexity: O(n) in the entries held, plus one file write per dirty collection.
    public func flush() throws {
        let failures = writeDirtyEntries()
        if let first = failures.first {
            throw AppCacheError(
                code: first.code,
                message: "\(failures.count) collection(s) could not be written; they stay in memory for the next flush.",
                cacheName: first.cacheName, key: first.key, path: first.path, underlyingError: first)
        }
    }

    /// Empties memory as the system asks: every dirty collection is written to disk, then every
    /// collection leaves memory.
    ///
    /// Reads go on working throughout (from memory until a collection's archive is in place,
    /// from disk after). A collection that cannot be written stays in memory, dirty, and the
    /// error goes to the `diagnostics` hook; the next flush tries again. On iOS, tvOS and
    /// visionOS the cache calls this itself on memory warnings.
    public func didReceiveMemoryWarning() {
        let keys = state.withLock { $0.memory.evictAll() }
        reportAll(spill(keys))
    }

    /// What the memory layer holds and how it has served so far.
    public var memoryStatistics: MemoryStatistics {
        state.withLock { $0.memory.statistics }
    }

    // MARK: - Internal

    /// Writes the detached (evicted while dirty) entries among `keys`, each as its archive.
    ///
    /// - Returns: the errors of the writes that failed; those entries stay detached and dirty.
    func spill(_ keys: [MemoryKey]) -> [AppCacheError] {
        guard !keys.isEmpty else { return [] }
        return withDiskWrites { book in
            write(state.withLock { $0.memory.detachedEntries(keys) }, spilled: true, &book)
        }
    }

    /// Writes every dirty entry.
    ///
    /// - Returns: the errors of the writes that failed; those entries stay dirty.
    func writeDirtyEntries() -> [AppCacheError] {
        withDiskWrites { book in
            write(state.withLock { $0.memory.dirtyEntries() }, spilled: false, &book)
        }
    }

    /// Writes `entries` (taken inside `diskWrites`, which the caller holds) and records which
    /// generations reached disk.
    private func write(_ entries: [(key: MemoryKey, entry: MemoryEntry)], spilled: Bool, _ book: inout DiskBook) -> [AppCacheError] {
        var written: [(MemoryKey, UInt64)] = []
        var failures: [AppCacheError] = []
        for (key, entry) in entries {
            do {
                try writeArchive(entry.record, forKey: entry.archiveKey, &book)
                written.append((key, entry.generation))
            } catch let error as AppCacheError {
                var error = error
                error.message = "A cached collection could not be written to disk; it stays in memory, dirty, for the next flush."
                failures.append(error)
            } catch {
                failures.append(AppCacheError(code: .ioFailure, message: "\(error)", underlyingError: error))
            }
        }
        if !written.isEmpty {
            state.withLock { state in
                for (key, generation) in written {
                    state.memory.didWrite(key, generation: generation, spilled: spilled)
                }
            }
        }
        return failures
    }

    /// Arranges for dirty collections to be written `writeBackDelay` after the first of them
    /// was cached, unless that is already arranged or the delay says to wait for events.
    func scheduleWriteBack() {
        guard let delay = configuration.writeBackDelay, delay > .zero else { return }
        let schedule = state.withLock { state -> Bool in
            guard !state.writeBackScheduled else { return false }
            state.writeBackScheduled = true
            return true
        }
        guard schedule else { return }
        let (seconds, attoseconds) = delay.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let deadline: DispatchTime = nanoseconds.overflow
            ? .distantFuture : .now() + .nanoseconds(Int(clamping: nanoseconds.partialValue + attoseconds / 1_000_000_000))
        writeBackQueue.asyncAfter(deadline: deadline) { [weak self] in
            self?.performScheduledWriteBack()
        }
    }

    /// Writes every dirty collection now, as the write-back timer does, reporting failures to
    /// `diagnostics`; then arranges the next write-back if collections are still dirty.
    func performScheduledWriteBack() {
        state.withLock { $0.writeBackScheduled = false }
        let failures = writeDirtyEntries()
        reportAll(failures)
        // Failed writes wait for the next write-back, not a tight retry loop.
        if state.withLock({ $0.memory.statistics.dirtyEntries > 0 }) {
            scheduleWriteBack()
        }
    }
}
