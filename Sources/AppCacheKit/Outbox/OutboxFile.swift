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
/// Thread safety: stateless; ``change(for:in:_:)`` must run inside a batch.
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
        try read(fromDirectory: CacheLayout.userDirectoryName(user), in: store)
    }

    /// Reads the outbox of the user directory `directory` (as listed, for the inspector).
    static func read(fromDirectory directory: String, in store: DiskStore) throws(SystemError) -> Read {
        try store.fileSystem.withFileForReading(CachePath(directory: directory, name: name)) { (opened) throws(SystemError) -> Read in
            switch opened {
            case .missing:
                return Read()
            case .unsafe(let what):
                return Read(unsafe: what)
            case .file(let file):
                guard file.size <= maximumSize else { return Read(identity: file.identity, isTooLarge: true) }
                return Read(log: OutboxLog(decoding: try file.read(count: file.size, at: 0)), identity: file.identity)
            }
        }
    }

    /// Changes `user`'s outbox: `records` sees the queue as the disk holds it now and returns the
    /// records to add (`nil`: none).
    ///
    /// - Returns: the queue after the change, and the file's read before it (for reports).
    /// - Throws: `permissionDenied`, `noSpace` or `ioFailure` when the file cannot be written;
    ///   it is then as it was.
    static func change(
        for user: String?, in store: DiskStore, _ records: (OutboxLog) -> Data?
    ) throws(AppCacheError) -> (queue: OutboxLog, before: Read) {
        let path = path(for: user)
        do throws(SystemError) {
            let current = try read(user, from: store)
            guard let added = records(current.log) else { return (current.log, current) }
            let after = OutboxLog(decoding: current.log.encoded() + added)
            if after.entries.isEmpty {
                try store.fileSystem.removeFile(path)
                return (after, current)
            }
            var appended = false
            if current.identity != nil && !current.needsRewrite {
                // `nil`: the file went since it was read (a purge); it is written anew.
                appended = try store.fileSystem.append(added, to: path, synchronize: true) != nil
            }
            if !appended {
                _ = try store.fileSystem.writeAtomically(
                    header: [], payload: after.encoded(), to: path, temporaryName: FileSystem.temporaryName(), modificationDate: Date(),
                    synchronize: true)
            }
            return (after, current)
        } catch {
            throw AppCacheError(
                code: error.code, message: "The outbox of queued changes could not be written; it is as it was.", path: error.path,
                underlyingError: error)
        }
    }
}
