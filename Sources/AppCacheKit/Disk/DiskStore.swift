import Foundation

/// One collection as the disk layer stores it: encoded payload, header facts and the moment the
/// items were cached.
struct ArchiveRecord: Sendable {
    var payload: Data
    var codec: UInt16
    var schemaVersion: Int64
    /// When the items were cached: the archive file's modification date.
    var cachedDate: Date
    /// After this moment the items must not be returned (unless pinned); `nil` for never.
    var expiry: Date? = nil
    /// Whether the collection ignores its expiry and is the last to go from a full disk.
    var isPinned = false

    /// Whether the items must no longer be returned at `now`.
    func isExpired(at now: Date) -> Bool {
        guard let expiry, !isPinned else { return false }
        return expiry <= now
    }
}

/// The disk layer: self-checking archive files under a ``CacheLayout``.
///
/// Holds no mutable state, so it needs no lock. A file that cannot be trusted (damaged, foreign,
/// another schema version) is a miss: it is removed, alone, and the reason goes to `report`.
struct DiskStore: Sendable {
    let layout: CacheLayout
    let fileSystem: FileSystem
    let report: @Sendable (AppCacheError) -> Void
    /// Told of every archive `discard` removes, so the disk index can forget it.
    var onDiscard: @Sendable (String) -> Void = { _ in }

    /// Finishes interrupted wipes and wipes the data of every other app schema version.
    ///
    /// Lists the root only (a few entries), never the archives, so opening does not slow down
    /// as the cache grows.
    ///
    /// - Throws: `versionWipeFailed` when old data cannot be removed, `notADirectory` when the
    ///   root is a file, `permissionDenied` or `ioFailure` when it cannot be listed.
    func openVersion() throws {
        let names: [String]?
        do {
            names = try fileSystem.contentsOfDirectory(layout.rootPath)
        } catch {
            throw AppCacheError(
                code: error.code, message: "The cache root cannot be listed.", path: layout.rootPath,
                underlyingError: error)
        }
        for name in names ?? [] {
            let path = layout.rootPath + "/" + name
            do {
                if name.hasPrefix(CacheLayout.trashPrefix) {
                    try fileSystem.removeTree(path)
                } else if name.hasPrefix(CacheLayout.versionPrefix) && name != layout.versionDirectoryName {
                    // Out of view in one step; a crash during the deletion leaves only trash.
                    let trash = layout.trashPath()
                    if try fileSystem.move(path, to: trash) {
                        try fileSystem.removeTree(trash)
                    }
                }
            } catch {
                throw AppCacheError(
                    code: .versionWipeFailed,
                    message: "Data of another app schema version could not be removed, so the cache did not open.",
                    path: error.path, underlyingError: error)
            }
        }
    }

    /// The stored collection for `key`, or `nil` on a miss.
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when the file exists but cannot be read.
    func value(forKey key: ArchiveKey, schemaVersion: Int64) throws -> ArchiveRecord? {
        let path = layout.archivePath(for: key)
        let contents: FileSystem.Contents?
        do {
            contents = try fileSystem.read(path)
        } catch {
            throw AppCacheError(
                code: error.code, message: "The archive could not be read.", cacheName: key.cacheName,
                key: key.key, path: path, underlyingError: error)
        }
        guard let contents else { return nil }
        switch Self.validate(contents.bytes, for: key, schemaVersion: schemaVersion) {
        case .success(let (header, payload)):
            return ArchiveRecord(
                payload: payload, codec: header.codec, schemaVersion: header.schemaVersion,
                cachedDate: contents.modificationDate, expiry: header.expiry, isPinned: header.isPinned)
        case .failure(let problem):
            discard(path, key: key, code: problem.code, message: problem.message)
            return nil
        }
    }

    /// Writes `record` atomically; the archive's modification date becomes `record.cachedDate`.
    ///
    /// - Returns: the archive's size in bytes.
    /// - Throws: `permissionDenied`, `noSpace`, `notADirectory` or `ioFailure`. No temporary
    ///   file is left behind and the previous archive, if any, is untouched.
    @discardableResult
    func store(_ record: ArchiveRecord, forKey key: ArchiveKey) throws -> Int {
        var header = ArchiveHeader(
            codec: record.codec, schemaVersion: record.schemaVersion, expiryMilliseconds: nil,
            payloadLength: UInt64(record.payload.count), payloadChecksum: CRC32.checksum(record.payload),
            user: key.user, cacheName: key.cacheName, key: key.key)
        header.expiry = record.expiry
        header.isPinned = record.isPinned
        let path = layout.archivePath(for: key)
        let headerBytes = header.encoded()
        do {
            try fileSystem.writeAtomically(
                header: headerBytes, payload: record.payload, to: path, in: layout.userPath(key.user),
                modificationDate: record.cachedDate)
            return headerBytes.count + record.payload.count
        } catch {
            throw AppCacheError(
                code: error.code,
                message: "The items could not be written; what was cached before is unchanged.",
                cacheName: key.cacheName, key: key.key, path: error.path, underlyingError: error)
        }
    }

    /// An archive's header facts and dates, read without its payload.
    struct Summary {
        var header: ArchiveHeader
        var cachedDate: Date
        /// The file's size in bytes.
        var size: Int

        /// The record the header describes, without the payload.
        var record: ArchiveRecord {
            ArchiveRecord(
                payload: Data(), codec: header.codec, schemaVersion: header.schemaVersion, cachedDate: cachedDate,
                expiry: header.expiry, isPinned: header.isPinned)
        }
    }

    /// The header of the archive for `key`, checked but without reading the payload; `nil`
    /// when there is none or it is not a readable archive (a read will deal with that).
    func summary(forKey key: ArchiveKey) -> Summary? {
        guard let summary = summary(atPath: layout.archivePath(for: key)),
            summary.header.user == key.user, summary.header.cacheName == key.cacheName, summary.header.key == key.key
        else { return nil }
        return summary
    }

    /// The header of the archive at `path`, without reading its payload.
    func summary(atPath path: String) -> Summary? {
        let prefixLength = 4096
        guard var contents = try? fileSystem.read(path, limit: prefixLength) else { return nil }
        var parsed = contents.bytes.withUnsafeBytes { buffer in Result { () throws(ArchiveDefect) in try ArchiveHeader.parse(buffer) } }
        if case .failure(.truncated) = parsed, contents.fileSize > prefixLength {
            // Names longer than the prefix: read the whole file.
            guard let whole = try? fileSystem.read(path) else { return nil }
            contents = whole
            parsed = contents.bytes.withUnsafeBytes { buffer in Result { () throws(ArchiveDefect) in try ArchiveHeader.parse(buffer) } }
        }
        guard case .success(let (header, _)) = parsed else { return nil }
        return Summary(header: header, cachedDate: contents.modificationDate, size: contents.fileSize)
    }

    /// The paths of the archives in `user`'s directory (`nil`: the shared space).
    func archivePaths(user: String?) throws -> [String] {
        try archivePaths(inDirectory: layout.userPath(user))
    }

    /// The paths of the archives in every user directory of the current version.
    func archivePathsOfAllUsers() throws -> [String] {
        let directories: [String]
        do {
            directories = try fileSystem.contentsOfDirectory(layout.versionPath) ?? []
        } catch {
            throw AppCacheError(code: error.code, message: "The cache cannot be listed.", path: error.path, underlyingError: error)
        }
        return try directories
            .filter { $0 == CacheLayout.sharedDirectoryName || $0.hasPrefix(CacheLayout.userPrefix) }
            .sorted()
            .flatMap { try archivePaths(inDirectory: layout.versionPath + "/" + $0) }
    }

    private func archivePaths(inDirectory directory: String) throws -> [String] {
        do {
            return (try fileSystem.contentsOfDirectory(directory) ?? [])
                .filter { $0.hasSuffix(CacheLayout.archiveSuffix) && !$0.hasPrefix(".") }
                .sorted()
                .map { directory + "/" + $0 }
        } catch {
            throw AppCacheError(code: error.code, message: "The cache cannot be listed.", path: error.path, underlyingError: error)
        }
    }

    /// Removes the temporary files that writes interrupted by a crash left in the user
    /// directories of the current version. Call only while no write is under way (inside the
    /// disk-write lock): a write in progress has a temporary file too.
    ///
    /// - Returns: how many were removed.
    @discardableResult
    func sweepTemporaryFiles() -> Int {
        guard let directories = try? fileSystem.contentsOfDirectory(layout.versionPath) else { return 0 }
        var removed = 0
        for directory in directories where directory == CacheLayout.sharedDirectoryName || directory.hasPrefix(CacheLayout.userPrefix) {
            let path = layout.versionPath + "/" + directory
            for name in ((try? fileSystem.contentsOfDirectory(path)) ?? nil) ?? [] where name.hasPrefix(FileSystem.temporaryPrefix) {
                if (try? fileSystem.removeFile(path + "/" + name)) != nil { removed += 1 }
            }
        }
        return removed
    }

    /// Removes the archive at `path`; a missing file is not an error.
    func removeFile(atPath path: String) throws {
        do {
            try fileSystem.removeFile(path)
        } catch {
            throw AppCacheError(code: error.code, message: "The archive could not be removed.", path: path, underlyingError: error)
        }
    }

    /// Removes the archive for `key`; a missing archive is not an error.
    func removeValue(forKey key: ArchiveKey) throws {
        let path = layout.archivePath(for: key)
        do {
            try fileSystem.removeFile(path)
        } catch {
            throw AppCacheError(
                code: error.code, message: "The archive could not be removed.", cacheName: key.cacheName,
                key: key.key, path: path, underlyingError: error)
        }
    }

    /// Removes every archive of `user` (`nil`: the shared space) in the current version.
    ///
    /// The user's directory leaves view in one rename; if deleting it then fails, the hidden
    /// remains are removed on the next open.
    ///
    /// - Returns: the problem to report when the deletion after the rename failed.
    /// - Throws: `permissionDenied`, `notADirectory` or `ioFailure` when the directory cannot be
    ///   moved out of view; the archives are then unchanged.
    func removeAll(user: String?) throws -> AppCacheError? {
        try removeTree(layout.userPath(user))
    }

    /// Removes the archives of every user in the current version, as ``removeAll(user:)`` does
    /// for one.
    func removeAllUsers() throws -> AppCacheError? {
        try removeTree(layout.versionPath)
    }

    private func removeTree(_ path: String) throws -> AppCacheError? {
        let trash = layout.trashPath()
        do {
            guard try fileSystem.move(path, to: trash) else { return nil }
        } catch {
            throw AppCacheError(
                code: error.code, message: "The archives could not be removed; they are unchanged.",
                path: path, underlyingError: error)
        }
        do {
            try fileSystem.removeTree(trash)
            return nil
        } catch {
            return AppCacheError(
                code: error.code,
                message: "The archives were removed from view but not all deleted; the rest goes on the next open.",
                path: error.path, underlyingError: error)
        }
    }

    /// Removes a file that cannot be trusted and reports why.
    func discard(_ path: String, key: ArchiveKey, code: AppCacheError.Code, message: String, cause: (any Error)? = nil) {
        var text = message
        do {
            try fileSystem.removeFile(path)
            text += " The file was removed."
            onDiscard(path)
        } catch {
            text += " Removing the file failed too: \(error)."
        }
        report(AppCacheError(code: code, message: text, cacheName: key.cacheName, key: key.key, path: path, underlyingError: cause))
    }

    /// Why an archive's bytes cannot be used.
    struct Problem: Error {
        var code: AppCacheError.Code
        var message: String
    }

    /// Checks an archive's bytes against the collection asked for, returning its header and
    /// payload.
    static func validate(
        _ bytes: Data, for key: ArchiveKey, schemaVersion: Int64
    ) -> Result<(ArchiveHeader, Data), Problem> {
        let parsed: (header: ArchiveHeader, length: Int)
        switch bytes.withUnsafeBytes({ buffer in Result { () throws(ArchiveDefect) in try ArchiveHeader.parse(buffer) } }) {
        case .success(let value): parsed = value
        case .failure(let defect): return .failure(Problem(code: .corruptArchive, message: "Unreadable archive: \(defect)."))
        }
        let header = parsed.header
        guard header.user == key.user, header.cacheName == key.cacheName, header.key == key.key else {
            return .failure(Problem(code: .corruptArchive, message: "The archive belongs to another collection."))
        }
        guard header.schemaVersion == schemaVersion else {
            return .failure(Problem(
                code: .schemaMismatch,
                message: "The archive holds schema version \(header.schemaVersion) of its type, not \(schemaVersion)."))
        }
        let payloadCount = bytes.count - parsed.length
        guard header.payloadLength == UInt64(payloadCount) else {
            let defect = ArchiveDefect.payloadLengthMismatch(expected: header.payloadLength, found: payloadCount)
            return .failure(Problem(code: .corruptArchive, message: "Unreadable archive: \(defect)."))
        }
        let payload = bytes.subdata(in: (bytes.startIndex + parsed.length)..<bytes.endIndex)
        guard CRC32.checksum(payload) == header.payloadChecksum else {
            return .failure(Problem(code: .corruptArchive, message: "Unreadable archive: \(ArchiveDefect.payloadChecksumMismatch)."))
        }
        return .success((header, payload))
    }
}
