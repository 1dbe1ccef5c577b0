import Foundation

/// The disk writer's bookkeeping, guarded by `diskWrites`: the disk index (loaded when first
/// needed) and the changes of the batch under way.
struct DiskBook {
    var index: DiskIndex?
    /// Lines appended to the journal since it was last compacted (or since this cache opened).
    var journalLines = 0
    /// The changes of the batch under way, recorded as they happen.
    var records: [DiskIndex.Record] = []
    /// Problems to report once the lock is released.
    var problems: [AppCacheError] = []
}

extension AppCache {
    /// The bytes the archives of the current app schema version take on disk.
    ///
    /// Kept by a disk index rather than measured: the first call after opening reads the
    /// index's journal (or, when it is missing or damaged, rebuilds it from the archives'
    /// headers, reading each once); later calls cost a lock. Waits for writes under way.
    public var diskUsage: Int {
        withDiskWrites { book in
            ensureIndex(&book)
            return book.index?.totalBytes ?? 0
        }
    }

    /// Runs a batch of disk changes under the write lock, then brings the index and its
    /// journal up to date and enforces the disk budget. Problems go to `diagnostics` after the
    /// lock is released.
    func withDiskWrites<Result>(_ body: (inout DiskBook) throws -> Result) rethrows -> Result {
        var problems: [AppCacheError] = []
        defer { reportAll(problems) }
        return try diskWrites.withLock { book in
            defer {
                finishBatch(&book)
                problems = book.problems
                book.problems = []
            }
            return try body(&book)
        }
    }

    /// Writes the archive for `key` and records it in the batch, so the disk index never
    /// misses a write. Call inside ``withDiskWrites(_:)``.
    ///
    /// - Throws: what ``DiskStore/store(_:forKey:)`` throws; nothing is recorded then.
    func writeArchive(_ record: ArchiveRecord, forKey key: ArchiveKey, _ book: inout DiskBook) throws {
        let size = try store.store(record, forKey: key)
        book.records.append(.set(path: store.layout.relativePath(for: key), size: size, isPinned: record.isPinned))
    }

    /// Removes the archive for `key` and records it in the batch. Call inside
    /// ``withDiskWrites(_:)``.
    ///
    /// - Throws: what ``DiskStore/removeValue(forKey:)`` throws; nothing is recorded then.
    func deleteArchive(forKey key: ArchiveKey, _ book: inout DiskBook) throws {
        try store.removeValue(forKey: key)
        book.records.append(.remove(path: store.layout.relativePath(for: key)))
    }

    /// Records a change made outside the write lock (a read from disk, a damaged archive
    /// removed by a read), for the next batch.
    func recordOutsideWrites(_ record: DiskIndex.Record) {
        indexRecordsOutsideWrites.withLock { $0.append(record) }
    }

    /// Loads the index from its journal, or rebuilds it from the archives.
    func ensureIndex(_ book: inout DiskBook) {
        guard book.index == nil else { return }
        let journal = indexJournal
        if let records = journal.load() {
            var index = DiskIndex()
            for record in records { index.apply(record) }
            book.index = index
            book.journalLines = records.count
            return
        }
        // Missing or damaged: rebuild from the archives, oldest first, and start a new journal.
        // No write is under way (the caller holds the disk-write lock), so temporary files are
        // leftovers of a crash: they go too.
        store.sweepTemporaryFiles()
        var index = DiskIndex()
        let paths = (try? store.archivePathsOfAllUsers()) ?? []
        let summaries = paths.compactMap { path in store.summary(atPath: path).map { (path, $0) } }
        for (path, summary) in summaries.sorted(by: { $0.1.cachedDate < $1.1.cachedDate }) {
            guard let relative = store.layout.relativePath(ofAbsolute: path) else { continue }
            index.apply(.set(path: relative, size: summary.size, isPinned: summary.header.isPinned))
        }
        book.index = index
        rewriteJournal(&book)
    }

    /// Applies the batch's records, enforces the budget, and appends the records to the journal.
    private func finishBatch(_ book: inout DiskBook) {
        book.records += indexRecordsOutsideWrites.withLock { records in
            defer { records = [] }
            return records
        }
        if configuration.diskByteLimit != nil {
            // Reads served from memory are uses too; record them before this batch's writes,
            // which are newer still.
            let layout = store.layout
            let touches = state.withLock { $0.memory.takeReadArchives() }.map { DiskIndex.Record.touch(path: layout.relativePath(for: $0)) }
            book.records.insert(contentsOf: touches, at: 0)
        }
        guard !book.records.isEmpty else { return }
        if configuration.diskByteLimit != nil { ensureIndex(&book) }
        if book.index != nil {
            for record in book.records { book.index!.apply(record) }
        }
        if let limit = configuration.diskByteLimit {
            enforce(limit, &book)
        }
        let records = book.records
        book.records = []
        do throws(SystemError) {
            try indexJournal.append(records)
            book.journalLines += records.count
        } catch where error.errorNumber == ENOENT {
            // No version directory yet: nothing on disk to account for.
        } catch {
            book.problems.append(AppCacheError(
                code: error.code, message: "The disk index journal could not be written; it will be rebuilt from the archives.",
                path: error.path, underlyingError: error))
            try? store.fileSystem.removeFile(indexJournal.path)
        }
        if book.journalLines > 2 * (book.index?.count ?? 0) + 4096 {
            ensureIndex(&book)
            rewriteJournal(&book)
        }
    }

    /// Removes least recently used archives (unpinned first) until the rest fit in `limit`.
    private func enforce(_ limit: Int, _ book: inout DiskBook) {
        while let index = book.index, index.totalBytes > limit, let victim = index.nextVictim {
            let path = store.layout.versionPath + "/" + victim.path
            do {
                try store.fileSystem.removeFile(path)
            } catch {
                book.problems.append(AppCacheError(
                    code: error.code, message: "An archive could not be removed to keep within the disk budget.",
                    path: path, underlyingError: error))
                return
            }
            book.index!.apply(.remove(path: victim.path))
            book.records.append(.remove(path: victim.path))
            // A clean copy in memory would claim an archive that is gone; a dirty one is newer
            // than the archive and stays, to be written (and budgeted) again. (A hashed name
            // does not tell its collection; such a clean copy stays and is merely a miss later.)
            if let archiveKey = CacheLayout.archiveKey(fromRelativePath: victim.path) {
                state.withLock { state in
                    if let owner = state.memory.owner(of: archiveKey), state.memory.peek(owner)?.isDirty == false {
                        state.memory.remove(archiveKey)
                    }
                }
            }
        }
    }

    private func rewriteJournal(_ book: inout DiskBook) {
        guard let snapshot = book.index?.snapshot else { return }
        do {
            try store.fileSystem.makeDirectories(store.layout.versionPath)
            try indexJournal.rewrite(snapshot, in: store.layout.versionPath)
            book.journalLines = snapshot.count
        } catch {
            book.problems.append(AppCacheError(
                code: error.code, message: "The disk index journal could not be rewritten; it will be rebuilt from the archives.",
                path: error.path, underlyingError: error))
        }
    }

    var indexJournal: IndexJournal {
        IndexJournal(path: store.layout.versionPath + "/" + IndexJournal.fileName, fileSystem: store.fileSystem)
    }
}

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
