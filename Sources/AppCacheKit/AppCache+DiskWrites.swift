import Foundation

extension AppCache {
    /// The bytes the archives of the current app schema version take on disk, of every user
    /// and every process sharing the root.
    ///
    /// Kept by a disk index rather than measured: the first call reads the index's journal (or,
    /// when it is missing or damaged, rebuilds it from the archives' headers, reading each
    /// once); later calls read only what other processes appended since. Waits for writes under
    /// way, in this process and others.
    public var diskUsage: Int {
        (try? withDiskWrites { batch in batch.diskUsage() }) ?? 0
    }

    /// Runs a batch of disk changes (see ``DiskWriter``); then, with no lock held, reports the
    /// problems it found to `diagnostics` and, if the disk changed, tells observers of
    /// ``updates(of:forKey:)``.
    ///
    /// - Throws: what `body` throws; what ``DiskWriter/batch(problems:changed:_:)`` throws.
    func withDiskWrites<Result>(_ body: (inout DiskWriter.Batch) throws -> Result) throws -> Result {
        var problems: [AppCacheError] = []
        var changed = false
        defer {
            if changed { observers.notifyAll() }
            reportAll(problems)
        }
        return try disk.batch(problems: &problems, changed: &changed, body)
    }

    /// How the disk writer's batches keep memory coherent with the disk: what memory holds is
    /// checked again after a purge or another process's change, and this process's own change
    /// leaves memory in agreement with the disk (it updated the entries it wrote), unless
    /// someone else's came between. Reads served from memory count as uses for the budget.
    static func hooks(_ state: Locked<State>) -> DiskWriter.Hooks {
        DiskWriter.Hooks(
            didLock: { reopened, change in
                state.withLock { state in
                    if reopened { state.memory.invalidateAll() }
                    state.observe(change: change)
                }
            },
            takeReadArchives: {
                state.withLock { $0.memory.takeReadArchives() }
            },
            didChange: { before, after in
                state.withLock { state in
                    if state.syncedChange == before { state.syncedChange = after }
                }
            })
    }
}
