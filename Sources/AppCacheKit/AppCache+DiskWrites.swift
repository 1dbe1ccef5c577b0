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
        (try? withDiskWrites { book in
            book.ensureIndex()
            return book.index?.totalBytes ?? 0
        }) ?? 0
    }

    /// Runs a batch of disk changes under the write lock and the lock file (see ``DiskBook``),
    /// then brings the journal up to date, enforces the disk budget, and tells other processes
    /// that the disk changed. Problems go to `diagnostics`, and observers of
    /// ``updates(of:forKey:)`` hear of a change, after the locks are released.
    ///
    /// Before the batch, the root, the version directory and the lock file are checked against
    /// their paths and made again if a purge deleted or replaced them; what memory holds is
    /// then checked against the disk before it is served again.
    ///
    /// - Throws: what `body` throws; `permissionDenied` on a read-only cache; what recreating a
    ///   purged directory reports (`permissionDenied`, `noSpace`, `ioFailure`).
    func withDiskWrites<Result>(_ body: (inout DiskBook) throws -> Result) throws -> Result {
        var problems: [AppCacheError] = []
        var changed = false
        defer {
            if changed { observers.notifyAll() }
            reportAll(problems)
        }
        return try diskWrites.withLock { book in
            let reopened: Bool
            do throws(SystemError) {
                reopened = try coordinator.lock(fileSystem: store.fileSystem)
            } catch {
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
            state.withLock { state in
                if reopened { state.memory.invalidateAll() }
                state.observe(change: changeBefore)
            }
            book.begin(afterCrash: crashed)
            defer {
                if configuration.diskByteLimit != nil {
                    // Reads are uses: from disk (gathered as they happened) and from memory;
                    // recorded before this batch's writes, which are newer still.
                    let fromDisk = pendingUses.withLock { uses in
                        defer { uses = [] }
                        return uses
                    }
                    let fromMemory = state.withLock { $0.memory.takeReadArchives() }
                    book.recordUses(fromDisk + fromMemory)
                }
                book.finish()
                if book.changedDisk || reopened {
                    changed = true
                    let after = coordinator.didChange()
                    // This process's own change leaves what memory holds in agreement with the
                    // disk (it updated the entries it wrote), unless someone else's came between.
                    state.withLock { state in
                        if state.syncedChange == changeBefore { state.syncedChange = after }
                    }
                    book.changedDisk = false
                }
                coordinator.endBatch()
                coordinator.unlock()
                problems = book.problems
                book.problems = []
            }
            return try body(&book)
        }
    }

    /// Writes the archive for `key` at `path`, announcing it first and recording it after, so
    /// the disk index never misses a write. Call inside ``withDiskWrites(_:)``.
    ///
    /// - Returns: which file the archive now is.
    /// - Throws: what ``DiskStore/store(_:forKey:at:temporaryName:)`` throws.
    @discardableResult
    func writeArchive(_ record: ArchiveRecord, forKey key: ArchiveKey, at path: CachePath, _ book: inout DiskBook) throws -> FileIdentity {
        try writeArchives([(record, key, path)], &book)[0].get()
    }

    /// Writes several archives, announcing them all in one journal write first.
    ///
    /// - Parameter shouldStop: asked before each archive; once it says `true`, the rest are not
    ///   written (their announcements are settled when the batch finishes).
    /// - Returns: for each archive written or tried, in order, which file it now is or why it
    ///   could not be written.
    func writeArchives(
        _ archives: [(record: ArchiveRecord, key: ArchiveKey, path: CachePath)], until shouldStop: () -> Bool = { false },
        _ book: inout DiskBook
    ) -> [Swift.Result<FileIdentity, AppCacheError>] {
        let temporaryNames = archives.map { _ in FileSystem.temporaryName() }
        book.announce(zip(archives, temporaryNames).map { .willChange(path: $0.0.path, temporaryName: $0.1) })
        var results: [Swift.Result<FileIdentity, AppCacheError>] = []
        for (archive, temporaryName) in zip(archives, temporaryNames) {
            if shouldStop() { break }
            results.append(Swift.Result { () throws(AppCacheError) in
                let (size, identity) = try store.store(archive.record, forKey: archive.key, at: archive.path, temporaryName: temporaryName)
                book.record(.set(path: archive.path, size: size, isPinned: archive.record.isPinned))
                return identity
            })
        }
        return results
    }

    /// Removes the archive at `path`, announcing it first and recording it after. Call inside
    /// ``withDiskWrites(_:)``.
    func deleteArchive(at path: CachePath, key: ArchiveKey?, _ book: inout DiskBook) throws(AppCacheError) {
        book.announce([.willChange(path: path, temporaryName: FileSystem.temporaryName())])
        try store.removeFile(at: path, key: key)
        book.record(.remove(path: path))
    }
}
