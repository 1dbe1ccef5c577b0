import Foundation

/// A user's outbox on disk: `<user directory>/.outbox`, an ``OutboxLog`` read as untrusted
/// bytes and changed only inside a batch (under the lock file's lock).
///
/// Changes are appended (`O_APPEND`, then `fsync`: a queued change survives a kill the moment
/// `enqueue` returns, and a power loss as far as the system's `fsync` goes). The log is
/// rewritten whole instead (a new file, synced, renamed into place) when appending would build
/// on bad bytes (a tail a crash cut off, damaged records) or when most of its records are
/// spent (done, or older attempts): readers without the lock see the old file or the new one.
/// A queue that empties removes the file.
///
/// Thread safety: stateless; ``change(for:in:_:)`` runs inside a batch.
enum OutboxFile {
    static let name = ".outbox"
    /// The largest outbox file read; a larger one is damage (1,024 changes of the largest size).
    static let maximumSize = 1_024 * (OutboxLog.maximumBodyLength + 13)

    /// The outbox file of `user` (`nil`: the shared space).
    static func path(for user: String?) -> CachePath {
        CachePath(directory: CacheLayout.userDirectoryName(user), name: name)
    }

    /// What reading an outbox file found.
    struct Read {
        var log = OutboxLog()
        /// Which file was read; `nil` when there is none.
        var identity: FileVersion?
        /// Whether the file is larger than ``maximumSize`` (read as empty, and damage).
        var isTooLarge = false
        /// What was there instead of a regular file (a link, which was removed, a FIFO, ...).
        var unsafe: String?

        init() {}

        init(_ read: RecordFileRead) {
            log = OutboxLog(decoding: read.bytes)
            identity = read.identity
            isTooLarge = read.isTooLarge
            unsafe = read.unsafe
        }

        /// Whether an append would build on bad bytes, or most records are spent: the log is
        /// then written anew.
        var needsRewrite: Bool {
            isTooLarge || unsafe != nil || log.hasIncompleteTail || log.damagedRecords > 0
                || log.recordCount > 4 * max(log.entries.count, 16)
        }
    }

    /// Reads `user`'s outbox.
    ///
    /// - Throws: `SystemError` when the file exists but cannot be read.
    static func read(_ user: String?, from store: DiskStore) throws(SystemError) -> Read {
        Read(try store.readRecordFileWithIdentity(at: path(for: user), maximumSize: maximumSize))
    }

    /// Reads the outbox of the user directory `directory` (as listed, for the inspector).
    static func read(fromDirectory directory: String, in store: DiskStore) throws(SystemError) -> Read {
        Read(try store.readRecordFileWithIdentity(at: CachePath(directory: directory, name: name), maximumSize: maximumSize))
    }

    /// Changes `user`'s outbox in `batch`: `records` sees the queue as the disk holds it now and
    /// returns the records to add (`nil`: none). Added records are appended and synced; a log
    /// that would build on bad bytes or is mostly spent is written anew (a temporary file
    /// announced in the journal, synced and renamed over it), and a queue that empties removes
    /// the file. Every watching process is told when records were added.
    ///
    /// - Returns: the queue after the change, and the file's read before it (for reports).
    /// - Throws: `permissionDenied`, `noSpace` or `ioFailure` when the file cannot be written;
    ///   it is then as it was.
    static func change(
        for user: String?, in batch: inout DiskWriter.Batch, _ records: (OutboxLog) -> Data?
    ) throws(AppCacheError) -> (queue: OutboxLog, before: Read) {
        let path = path(for: user)
        let failure = "The outbox of queued changes could not be written; it is as it was."
        let current: Read
        do throws(SystemError) {
            current = Read(try batch.readRecordFile(at: path, maximumSize: maximumSize))
        } catch {
            throw AppCacheError(code: error.code, message: failure, path: error.path, underlyingError: error)
        }
        guard let added = records(current.log) else { return (current.log, current) }
        let after = OutboxLog(decoding: current.log.encoded() + added)
        if after.entries.isEmpty {
            try batch.removeRecordFile(at: path, failure: failure)
            return (after, current)
        }
        // `false`: the file went since it was read (a purge); it is written anew.
        var appended = false
        if current.identity != nil && !current.needsRewrite {
            appended = try batch.append(added, toRecordFile: path, synchronize: true, failure: failure)
        }
        if !appended {
            try batch.replace(after, at: path, synchronize: true, failure: failure)
        }
        return (after, current)
    }
}
