import Foundation

/// The disk layer: self-checking archive files under a ``CacheLayout``.
///
/// Holds no mutable state, so it needs no lock; the cache orders its changes. Everything it reads
/// is untrusted: a file that cannot be trusted (damaged, foreign, another schema version, not a
/// regular file) is answered as ``Read/damaged(_:identity:)``, and the caller removes it inside
/// a batch of disk changes; memory spent on any file is bounded by its header's checked claims,
/// never by the file's size alone.
struct DiskStore: Sendable {
    let layout: CacheLayout
    var fileSystem: FileSystem
    /// The user directories' packs of small archives, as this process knows them.
    let packs: PackTable

    /// A store of `layout` on `fileSystem`, packing archives up to `packLimit` bytes
    /// (``PackTable/limit``; 0: each archive a file, as the inspector and tests plant them).
    init(layout: CacheLayout, fileSystem: FileSystem, packLimit: Int = 0, maximumPackSize: Int = PackFile.maximumSize) {
        self.layout = layout
        self.fileSystem = fileSystem
        packs = PackTable(
            limit: packLimit, maximumSize: maximumPackSize, identify: { [layout] bytes in Self.nameHash(ofArchive: bytes, layout: layout) },
            onDamage: fileSystem.onDamage)
    }

    /// Payloads longer than this are checked against their checksum in bounded chunks before
    /// being read whole, so a huge file that only claims to be an archive costs no memory.
    static let streamingCheckThreshold = 16 << 20

    /// Opens (creating them) the root and the version directory, finishes interrupted wipes and
    /// wipes the data of every other app schema version.
    ///
    /// Lists the root only (a few entries), never the archives, so opening does not slow down
    /// as the cache grows.
    ///
    /// - Throws: `notADirectory` when the root (or the version directory) is a file;
    ///   `permissionDenied` or `ioFailure` when they cannot be made or opened;
    ///   `versionWipeFailed` when old data cannot be removed.
    static func open(
        layout: CacheLayout, packLimit: Int = 0, faults: FileSystem.FaultInjector? = nil, protection: FileProtection? = nil,
        onDamage: @escaping @Sendable (String, String) -> Void, onProblem: (AppCacheError) -> Void = { _ in }
    ) throws(AppCacheError) -> DiskStore {
        var fileSystem: FileSystem
        do throws(SystemError) {
            guard let opened = try FileSystem.open(
                rootPath: layout.rootPath, versionName: layout.versionDirectoryName, create: true, faults: faults,
                onDamage: onDamage)
            else { throw SystemError(operation: "open", errorNumber: ENOENT, path: layout.versionPath) }
            fileSystem = opened
        } catch {
            throw AppCacheError(
                code: error.code, message: "The cache directory cannot be created or opened.", path: error.path,
                underlyingError: error)
        }
        fileSystem.protection = protection
        BackupExclusion.apply(toRoot: URL(filePath: layout.rootPath, directoryHint: .isDirectory))
        var layout = layout
        layout.isCaseInsensitive = fileSystem.isCaseInsensitive()
        let store = DiskStore(layout: layout, fileSystem: fileSystem, packLimit: packLimit)
        try store.wipeOtherVersions(onProblem: onProblem)
        return store
    }

    /// Deletes the trash earlier wipes left and wipes every other version's directory.
    ///
    /// Another version's directory is moved out of view in one rename (after its lock file's
    /// batch under way, if any, has finished: a writer of that version then finds its
    /// directory gone before its next batch, never writes into the trash), then deleted. What
    /// cannot be deleted right now (a directory another process still writes into, a file the
    /// process may not remove) stays as trash for a later open or ``AppCache/removeExpired()``,
    /// reported to `onProblem`; it never keeps the cache from opening.
    ///
    /// - Throws: `versionWipeFailed` when another version's directory cannot be moved out of
    ///   view (the cache must not mix versions).
    private func wipeOtherVersions(onProblem: (AppCacheError) -> Void) throws(AppCacheError) {
        let names: [String]
        do {
            names = try fileSystem.contentsOfRoot()
        } catch {
            throw AppCacheError(code: error.code, message: "The cache root cannot be listed.", path: error.path, underlyingError: error)
        }
        for name in names {
            var trash: String?
            if name.hasPrefix(CacheLayout.trashPrefix) {
                trash = name
            } else if name.hasPrefix(CacheLayout.versionPrefix) && name != layout.versionDirectoryName {
                do {
                    // Out of view in one step; a crash during the deletion leaves only trash.
                    trash = try fileSystem.moveOutOfView(versionDirectory: name)
                } catch {
                    throw AppCacheError(
                        code: .versionWipeFailed,
                        message: "Data of another app schema version could not be removed, so the cache did not open.",
                        path: error.path, underlyingError: error)
                }
            }
            if let trash, let problem = deleteTrash(trash) { onProblem(problem) }
        }
    }

    /// Deletes every trash directory in the root that earlier wipes could not finish.
    ///
    /// - Returns: the problems of those that still cannot be deleted (they stay for later).
    func deleteLeftoverTrash() -> [AppCacheError] {
        let names = (try? fileSystem.contentsOfRoot()) ?? []
        return names.filter { $0.hasPrefix(CacheLayout.trashPrefix) }.compactMap(deleteTrash)
    }

    /// What a read of an archive found.
    enum Read<Found> {
        case missing
        /// What the reader made of the archive, and which file it was read from.
        case found(Found, identity: FileVersion)
        /// A file that cannot be trusted: the problem, and which file it was (`nil` when it was
        /// not a regular file).
        case damaged(Problem, identity: FileVersion?)
    }

    /// The stored collection for `key` at `path`, its payload copied into the record.
    ///
    /// - Parameter change: as for ``read(at:forKey:versions:change:_:)``.
    /// - Throws: `permissionDenied` or `ioFailure` when the file exists but cannot be read.
    func record(
        at path: CachePath, forKey key: ArchiveKey, versions: ReadableVersions, change: UInt64? = nil
    ) throws(AppCacheError) -> Read<ArchiveRecord> {
        try read(at: path, forKey: key, versions: versions, change: change) { record, payload in
            var whole = record
            whole.payload = Data(payload)
            return whole
        }
    }

    /// Reads the stored collection for `key` at `path` and hands its record (without the
    /// payload) and its checked payload bytes to `use`, which may read the bytes during the
    /// call only.
    ///
    /// A small archive (up to ``singleReadLimit``) is read whole in one system call into a
    /// buffer that lives for the call; a larger one header first, checked (names within their
    /// cap, the payload length equal to what the file holds) before anything is allocated for
    /// its payload. `use` is called only for an archive of `key` in one of `versions` whose
    /// payload passed its checksum.
    ///
    /// - Parameter change: the disk's change count the read started at, if known: the user
    ///   directory may then be one held open (see ``DirectoryCache``).
    /// - Throws: `permissionDenied` or `ioFailure` when the file exists but cannot be read.
    func read<Found>(
        at path: CachePath, forKey key: ArchiveKey, versions: ReadableVersions, change: UInt64? = nil,
        _ use: (consuming ArchiveRecord, UnsafeRawBufferPointer) -> Found
    ) throws(AppCacheError) -> Read<Found> {
        if let packed = packs.locate(path, fileSystem: fileSystem, change: change) {
            return Self.readPacked(
                packed, forKey: key, versions: versions, keyTable: { packs.keyTable($0, for: packed, fileSystem: fileSystem) }, use)
        }
        do throws(SystemError) {
            return try fileSystem.withFileForReading(path, change: change) { opened throws(SystemError) -> Read<Found> in
                switch opened {
                case .missing:
                    return .missing
                case .unsafe(let what):
                    return .damaged(Problem(code: .corruptArchive, message: "The archive path holds \(what)."), identity: nil)
                case .file(let file):
                    guard file.size <= Self.singleReadLimit else {
                        return try Self.readLarge(file, forKey: key, versions: versions, use)
                    }
                    // A small archive in one read; header, checks and payload all from its bytes.
                    let facts = file.facts
                    return try file.withContents { bytes in Self.checked(bytes, of: facts, forKey: key, versions: versions, use) }
                }
            }
        } catch {
            throw AppCacheError(
                code: error.code, message: "The archive could not be read.", cacheName: key.cacheName,
                key: key.key, path: error.path, underlyingError: error)
        }
    }

    /// ``read(at:forKey:versions:change:_:)`` of an archive too large to read whole at
    /// once: its header first, checked before anything is allocated for its payload; a payload
    /// over ``streamingCheckThreshold`` checked against its checksum in chunks before it is
    /// read.
    private static func readLarge<Found>(
        _ file: FileSystem.ReadableFile, forKey key: ArchiveKey, versions: ReadableVersions,
        _ use: (consuming ArchiveRecord, UnsafeRawBufferPointer) -> Found
    ) throws(SystemError) -> Read<Found> {
        let header: ArchiveHeader
        let headerLength: Int
        switch try readHeader(file) {
        case .success(let value): (header, headerLength) = value
        case .failure(let defect):
            return .damaged(Problem(code: .corruptArchive, message: "Unreadable archive: \(defect)."), identity: file.identity)
        }
        let payloadLength = file.size - headerLength
        // Nothing is allocated for a payload the header does not promise: a huge file behind a
        // valid header costs no memory.
        if let problem = check(header, for: key, versions: versions, payloadLength: payloadLength) {
            return .damaged(problem, identity: file.identity)
        }
        if payloadLength > streamingCheckThreshold {
            var checksum: UInt32 = 0
            var offset = headerLength
            while offset < file.size {
                let chunk = try file.read(count: min(1 << 20, file.size - offset), at: offset)
                if chunk.isEmpty { break }
                checksum = CRC32.checksum(chunk, seed: checksum)
                offset += chunk.count
            }
            guard offset == file.size, checksum == header.payloadChecksum else {
                return .damaged(
                    Problem(code: .corruptArchive, message: "Unreadable archive: \(ArchiveDefect.payloadChecksumMismatch)."),
                    identity: file.identity)
            }
        }
        let payload = try file.read(count: payloadLength, at: headerLength)
        guard payload.count == payloadLength else {
            return .damaged(
                Problem(code: .corruptArchive, message: "Unreadable archive: \(ArchiveDefect.payloadChecksumMismatch)."),
                identity: file.identity)
        }
        let facts = file.facts
        return payload.withUnsafeBytes { bytes in verified(header, payload: bytes, of: facts, use) }
    }

    /// What `use` makes of a whole archive's bytes, header and payload, read from the file or
    /// pack record `facts` describes: parsed, checked against the collection asked for, and
    /// its payload against its checksum; damaged otherwise.
    static func checked<Found>(
        _ bytes: UnsafeRawBufferPointer, of facts: FileFacts, forKey key: ArchiveKey, versions: ReadableVersions,
        _ use: (consuming ArchiveRecord, UnsafeRawBufferPointer) -> Found
    ) -> Read<Found> {
        let header: ArchiveHeader
        let headerLength: Int
        do throws(ArchiveDefect) {
            (header, headerLength) = try ArchiveHeader.parse(bytes, expecting: key)
        } catch {
            return .damaged(Problem(code: .corruptArchive, message: "Unreadable archive: \(error)."), identity: facts.identity)
        }
        return checked(header, payload: UnsafeRawBufferPointer(rebasing: bytes[headerLength...]), of: facts, forKey: key, versions: versions, use)
    }

    /// ``checked(_:of:forKey:versions:_:)`` of an archive whose header was read already.
    static func checked<Found>(
        _ header: consuming ArchiveHeader, payload: UnsafeRawBufferPointer, of facts: FileFacts, forKey key: ArchiveKey,
        versions: ReadableVersions, _ use: (consuming ArchiveRecord, UnsafeRawBufferPointer) -> Found
    ) -> Read<Found> {
        if let problem = check(header, for: key, versions: versions, payloadLength: payload.count) {
            return .damaged(problem, identity: facts.identity)
        }
        return verified(header, payload: payload, of: facts, use)
    }

    /// What `use` makes of an archive whose header passed ``check(_:for:versions:payloadLength:)``,
    /// when its payload passes its checksum; damaged otherwise.
    private static func verified<Found>(
        _ header: consuming ArchiveHeader, payload: UnsafeRawBufferPointer, of file: FileFacts,
        _ use: (consuming ArchiveRecord, UnsafeRawBufferPointer) -> Found
    ) -> Read<Found> {
        // A date from disk that no write makes (not finite, or beyond the years 1 to 9999) is
        // damage, not a date to compute an age from.
        guard DiskDate.isSane(file.modificationDate) else {
            return .damaged(Problem(code: .corruptArchive, message: "The archive's date is no date a write makes."), identity: file.identity)
        }
        guard CRC32.checksum(payload) == header.payloadChecksum else {
            return .damaged(
                Problem(code: .corruptArchive, message: "Unreadable archive: \(ArchiveDefect.payloadChecksumMismatch)."),
                identity: file.identity)
        }
        let record = ArchiveRecord(
            payload: Data(), codec: header.codec, schemaVersion: header.schemaVersion, cachedDate: file.modificationDate,
            expiry: header.expiry, isPinned: header.isPinned, stalenessThreshold: header.stalenessThreshold,
            decodedSize: header.plausibleDecodedSize, validators: header.validators, nextPageCursor: header.cursor)
        return .found(use(record, payload), identity: file.identity)
    }

    /// Writes `record` atomically through the temporary file `temporaryName`; the archive's
    /// modification date becomes `record.cachedDate`.
    ///
    /// - Returns: the archive's size in bytes and which file it now is.
    /// - Throws: `permissionDenied`, `noSpace`, `notADirectory` or `ioFailure`. No temporary
    ///   file is left behind and the previous archive, if any, is untouched.
    func write(
        _ record: ArchiveRecord, forKey key: ArchiveKey, at path: CachePath, temporaryName: String
    ) throws(AppCacheError) -> (size: Int, identity: FileVersion) {
        try write(record, header: Self.header(of: record, forKey: key).encoded(), forKey: key, at: path, temporaryName: temporaryName)
    }

    /// The header of `record`'s archive (its payload's checksum computed).
    static func header(of record: ArchiveRecord, forKey key: ArchiveKey) -> ArchiveHeader {
        var header = ArchiveHeader(
            codec: record.codec, schemaVersion: record.schemaVersion, expiryMilliseconds: nil,
            decodedSize: record.decodedSize.map { UInt64(max($0, 0)) },
            payloadLength: UInt64(record.payload.count), payloadChecksum: CRC32.checksum(record.payload),
            user: key.user, cacheName: key.cacheName, key: key.key)
        header.expiry = record.expiry
        header.stalenessThreshold = record.stalenessThreshold
        header.isPinned = record.isPinned
        // Validators too long for a header are not kept: the next fetch is then unconditional.
        header.validators = record.validators.map { validators in
            func fits(_ value: String?) -> String? { value.flatMap { $0.utf8.count <= ArchiveHeader.maximumNameLength ? $0 : nil } }
            return CacheValidators(etag: fits(validators.etag), lastModified: fits(validators.lastModified))
        }
        // A cursor too long for a header is not kept: the collection then has no next page.
        header.nextPageCursor = record.nextPageCursor.flatMap { $0.utf8.count <= ArchiveHeader.maximumNameLength ? $0 : nil }
        return header
    }

    /// ``write(_:forKey:at:temporaryName:)`` with the header already made: the archive file,
    /// after which an older copy in the directory's pack is removed.
    func write(
        _ record: ArchiveRecord, header headerBytes: [UInt8], forKey key: ArchiveKey, at path: CachePath, temporaryName: String
    ) throws(AppCacheError) -> (size: Int, identity: FileVersion) {
        do throws(SystemError) {
            let identity = try fileSystem.writeAtomically(
                header: headerBytes, payload: record.payload, to: path, temporaryName: temporaryName,
                modificationDate: record.cachedDate)
            if let packed = packs.locate(path, fileSystem: fileSystem, change: nil) {
                // The pack's copy is older now, and would win over the file: it goes.
                let removal = PackRecord(kind: .removal, bodyLength: 0, nameHash: packed.hash, sequence: UniqueNumbers.next(), cachedDate: record.cachedDate)
                _ = try packs.append(PackTable.Appending(removal), toDirectory: path.directory ?? CacheLayout.sharedDirectoryName, fileSystem: fileSystem)
            }
            return (headerBytes.count + record.payload.count, identity)
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
        /// The bytes it takes: its file's size, or its record's in its directory's pack.
        var size: Int
        /// Which file (or pack record) it is.
        var identity: FileVersion
        /// Whether it is a record of its directory's pack rather than a file.
        var isPacked = false

        /// The record the header describes, without the payload.
        var record: ArchiveRecord {
            ArchiveRecord(
                payload: Data(), codec: header.codec, schemaVersion: header.schemaVersion, cachedDate: cachedDate,
                expiry: header.expiry, isPinned: header.isPinned, stalenessThreshold: header.stalenessThreshold,
                decodedSize: header.plausibleDecodedSize, validators: header.validators, nextPageCursor: header.cursor)
        }

        var archiveKey: ArchiveKey {
            ArchiveKey(user: header.user, cacheName: header.cacheName, key: header.key)
        }
    }

    /// What reading an archive's header found.
    enum SummaryRead {
        case missing
        case summary(Summary)
        /// Not a readable archive header, and why; `size` is the file's size when it is a
        /// regular file.
        case unreadable(String, size: Int?)
    }

    /// The header of the file at `path`, checked, and its size and date, without reading the
    /// payload. Costs at most a few hundred kilobytes, whatever the file.
    func summary(at path: CachePath) -> SummaryRead {
        if let packed = packs.locate(path, fileSystem: fileSystem, change: nil) {
            return Self.packedSummary(packed)
        }
        do {
            return try fileSystem.withFileForReading(path) { opened throws(SystemError) -> SummaryRead in
                switch opened {
                case .missing:
                    return .missing
                case .unsafe(let what):
                    return .unreadable(what, size: nil)
                case .file(let file):
                    return Self.summary(
                        of: try Self.readHeader(file), archiveLength: file.size, size: file.size, cachedDate: file.modificationDate,
                        identity: file.identity, isPacked: false)
                }
            }
        } catch {
            return .unreadable("cannot be read: \(error)", size: nil)
        }
    }

    /// The summary of an archive of `archiveLength` bytes (header and payload) whose header read
    /// as `header`: unreadable when the header does not parse or promises another payload length.
    ///
    /// - Parameters:
    ///   - size: what the archive takes on disk (its file, or its pack record).
    ///   - isPacked: whether it is a pack record.
    static func summary(
        of header: Result<(ArchiveHeader, Int), ArchiveDefect>, archiveLength: Int, size: Int, cachedDate: Date, identity: FileVersion,
        isPacked: Bool
    ) -> SummaryRead {
        guard DiskDate.isSane(cachedDate) else { return .unreadable("its date is no date a write makes", size: size) }
        switch header {
        case .success(let (header, headerLength)):
            guard header.payloadLength == UInt64(archiveLength - headerLength) else {
                let defect = ArchiveDefect.payloadLengthMismatch(expected: header.payloadLength, found: archiveLength - headerLength)
                return .unreadable("\(defect)", size: size)
            }
            return .summary(Summary(header: header, cachedDate: cachedDate, size: size, identity: identity, isPacked: isPacked))
        case .failure(let defect):
            return .unreadable("\(defect)", size: size)
        }
    }

    /// The summary of the archive for `key` at `path`, if it is one and is that collection's.
    func summary(at path: CachePath, forKey key: ArchiveKey) -> Summary? {
        guard case .summary(let summary) = summary(at: path), summary.archiveKey == key else { return nil }
        return summary
    }

    /// The paths of the archives in `user`'s directory (`nil`: the shared space).
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when the directory cannot be listed.
    func archivePaths(user: String?) throws(AppCacheError) -> [CachePath] {
        try archivePaths(inDirectory: CacheLayout.userDirectoryName(user))
    }

    /// The paths of the archives in every user directory of the current version.
    func archivePathsOfAllUsers() throws(AppCacheError) -> [CachePath] {
        var paths: [CachePath] = []
        for directory in try userDirectories() {
            paths += try archivePaths(inDirectory: directory)
        }
        return paths
    }

    /// The user directories (and `shared`) of the current version, sorted.
    func userDirectories() throws(AppCacheError) -> [String] {
        do {
            return (try fileSystem.contentsOfDirectory(nil) ?? []).map(\.name).filter(CachePath.isValidDirectory).sorted()
        } catch {
            throw AppCacheError(code: error.code, message: "The cache cannot be listed.", path: error.path, underlyingError: error)
        }
    }

    /// The paths of the archives in the user directory `directory`.
    ///
    /// Both kinds: archive files, and the archives its pack holds (named from their headers).
    func archivePaths(inDirectory directory: String) throws(AppCacheError) -> [CachePath] {
        let files: [String]
        do {
            files = (try fileSystem.contentsOfDirectory(directory) ?? [])
                .map(\.name)
                .filter { $0.hasSuffix(CacheLayout.archiveSuffix) && !$0.hasPrefix(".") && CachePath.isValidComponent($0) }
        } catch {
            throw AppCacheError(code: error.code, message: "The cache cannot be listed.", path: error.path, underlyingError: error)
        }
        let packed: [String]
        do {
            packed = try packs.archives(inDirectory: directory, fileSystem: fileSystem).compactMap { packedPath(of: $0, in: directory)?.name }
        } catch {
            throw AppCacheError(code: error.code, message: "The cache cannot be listed.", path: error.path, underlyingError: error)
        }
        return Set(files + packed).sorted().map { CachePath(directory: directory, name: $0) }
    }

    /// Renames every archive whose file name is not the one this layout gives its collection
    /// (archives of an earlier naming), reading each one's header for its names. Where two
    /// files claim one collection, the one cached later stays. Removes the journal, whose paths
    /// would be stale: the next batch rebuilds it. Call holding the write lock.
    ///
    /// - Returns: how many archives were renamed.
    @discardableResult
    func migrateArchiveNames() -> Int {
        try? fileSystem.removeFile(IndexJournal.path)
        var renamed = 0
        for path in (try? archivePathsOfAllUsers()) ?? [] {
            guard case .summary(let summary) = summary(at: path) else { continue }
            let target = layout.archivePath(for: summary.archiveKey)
            guard target != path, target.directory == path.directory else { continue }
            if let existing = fileSystem.facts(of: target), existing.modificationDate > summary.cachedDate {
                try? fileSystem.removeFile(path)
            } else if (try? fileSystem.rename(path, to: target)) != nil {
                renamed += 1
            }
        }
        return renamed
    }

    /// Removes every temporary file in the version directory and its user directories. Call
    /// only while holding the write lock (``ProcessCoordinator``): no live writer has a temporary
    /// file then, so every one found is a crash's leftover.
    ///
    /// - Returns: how many were removed.
    @discardableResult
    func sweepTemporaryFiles() -> Int {
        var removed = 0
        let directories: [String?] = [nil] + ((try? userDirectories()) ?? [])
        for directory in directories {
            for entry in ((try? fileSystem.contentsOfDirectory(directory)) ?? nil) ?? [] where entry.name.hasPrefix(FileSystem.temporaryPrefix) {
                if (try? fileSystem.removeFile(CachePath(directory: directory, name: entry.name))) != nil { removed += 1 }
            }
        }
        return removed
    }

    /// Which regular file is at `path` and when it was modified; `nil` when there is none.
    ///
    /// - Parameter change: as for ``read(at:forKey:versions:change:_:)``.
    func facts(of path: CachePath, change: UInt64? = nil) -> FileFacts? {
        if let packed = packs.locate(path, fileSystem: fileSystem, change: change) {
            return FileFacts(identity: packed.entry.identity, modificationDate: packed.entry.cachedDate)
        }
        return fileSystem.facts(of: path)
    }

    /// Sets the modification date of the archive at `path` to `date`, its bytes untouched, if
    /// it is still the file `identity`.
    ///
    /// - Returns: which file it is after the change; `nil` when it was removed or replaced.
    /// - Throws: `permissionDenied` or `ioFailure` when the date cannot be set.
    func redate(_ path: CachePath, ifStill identity: FileVersion, to date: Date, key: ArchiveKey) throws(AppCacheError) -> FileVersion? {
        if let packed = packs.locate(path, fileSystem: fileSystem, change: nil) {
            guard packed.entry.identity == identity else { return nil }
            let record = PackRecord(kind: .redating, bodyLength: 0, nameHash: packed.hash, sequence: UniqueNumbers.next(), cachedDate: date)
            try appendToPack(PackTable.Appending(record), in: path, key: key, failure: "The cached items could not be re-dated; they keep their date.")
            return FileVersion(value: record.sequence)
        }
        do {
            return try fileSystem.redate(path, ifStill: identity, to: date)
        } catch {
            throw AppCacheError(
                code: error.code, message: "The cached items could not be re-dated; they keep their date.",
                cacheName: key.cacheName, key: key.key, path: error.path, underlyingError: error)
        }
    }

    /// Removes the file at `path`; a missing file is not an error.
    ///
    /// An archive in a pack is removed by a removal record; any file at the path goes too.
    func removeFile(at path: CachePath, key: ArchiveKey? = nil) throws(AppCacheError) {
        if let packed = packs.locate(path, fileSystem: fileSystem, change: nil) {
            let record = PackRecord(kind: .removal, bodyLength: 0, nameHash: packed.hash, sequence: UniqueNumbers.next(), cachedDate: Date())
            try appendToPack(PackTable.Appending(record), in: path, key: key, failure: "The archive could not be removed.")
        }
        do {
            try fileSystem.removeFile(path)
        } catch {
            throw AppCacheError(
                code: error.code, message: "The archive could not be removed.", cacheName: key?.cacheName, key: key?.key,
                path: error.path, underlyingError: error)
        }
    }

    /// Moves a user directory (see ``CacheLayout/userDirectoryName(_:)``) out of view in one
    /// rename.
    ///
    /// - Returns: the name of the trash directory to delete, or `nil` when there was nothing.
    /// - Throws: `permissionDenied`, `notADirectory` or `ioFailure` when it cannot be moved; the
    ///   archives are then unchanged.
    func moveOutOfView(userDirectory name: String) throws(AppCacheError) -> String? {
        defer { packs.forget(name) }
        do {
            return try fileSystem.moveOutOfView(userDirectory: name)
        } catch {
            throw AppCacheError(
                code: error.code, message: "The archives could not be removed; they are unchanged.",
                path: error.path, underlyingError: error)
        }
    }

    /// Deletes a trash directory ``moveOutOfView(user:)`` made.
    ///
    /// - Returns: the problem to report when the deletion failed (the rest goes on the next
    ///   open).
    func deleteTrash(_ name: String) -> AppCacheError? {
        do {
            try fileSystem.removeTree(rootEntry: name)
            return nil
        } catch {
            return AppCacheError(
                code: error.code,
                message: "Removed data was moved out of view but not all deleted; the rest goes on a later open or removeExpired().",
                path: error.path, underlyingError: error)
        }
    }

    /// Why an archive's bytes cannot be used.
    struct Problem: Error {
        var code: AppCacheError.Code
        var message: String
        /// For `schemaMismatch`: the version the archive holds, and whether it is pinned.
        var foundVersion: Int64? = nil
        var isPinned = false

        /// Whether the archive is of a version newer than the reader's: left for a build that
        /// reads it.
        func isNewer(than versions: ReadableVersions) -> Bool {
            foundVersion.map { $0 > versions.current } ?? false
        }
    }

    /// Archives up to this size are read in one system call, header and payload together.
    static let singleReadLimit = 64 << 10

    /// Reads and parses the header at the start of `file`: first a prefix, then, if the fixed
    /// part claims longer names (each within the cap), exactly the rest of the header.
    static func readHeader(_ file: FileSystem.ReadableFile) throws(SystemError) -> Result<(ArchiveHeader, Int), ArchiveDefect> {
        let prefix = try file.read(count: min(file.size, 4096), at: 0)
        let required: Int
        switch prefix.withUnsafeBytes({ buffer in Result { () throws(ArchiveDefect) in try ArchiveHeader.requiredLength(buffer) } }) {
        case .success(let length): required = length
        case .failure(let defect): return .failure(defect)
        }
        guard required <= file.size else { return .failure(.truncated) }
        let bytes = required <= prefix.count ? prefix : try file.read(count: required, at: 0)
        return bytes.withUnsafeBytes { buffer in Result { () throws(ArchiveDefect) in try ArchiveHeader.parse(buffer) } }
    }

    /// Whether a header is the collection asked for, in the schema version asked for, and
    /// promises the `payloadLength` bytes the file holds after it: checked before anything is
    /// read or allocated for the payload.
    static func check(_ header: ArchiveHeader, for key: ArchiveKey, versions: ReadableVersions, payloadLength: Int) -> Problem? {
        guard header.user == key.user, header.cacheName == key.cacheName, header.key == key.key else {
            return Problem(code: .corruptArchive, message: "The archive belongs to another collection.")
        }
        guard versions.reads(header.schemaVersion) else {
            let newer = header.schemaVersion > versions.current
            return Problem(
                code: .schemaMismatch,
                message: newer
                    ? "The archive holds schema version \(header.schemaVersion) of its type, newer than this build's \(versions.current)."
                    : "The archive holds schema version \(header.schemaVersion) of its type, not \(versions.current), and the type declares no upgrade from it.",
                foundVersion: header.schemaVersion, isPinned: header.isPinned)
        }
        guard header.payloadLength == UInt64(payloadLength) else {
            let defect = ArchiveDefect.payloadLengthMismatch(expected: header.payloadLength, found: payloadLength)
            return Problem(code: .corruptArchive, message: "Unreadable archive: \(defect).")
        }
        return nil
    }

    /// Checks an archive's bytes, all in memory, against the collection asked for, returning
    /// its header and payload. For tests and the inspector's verification.
    static func validate(
        _ bytes: Data, for key: ArchiveKey, versions: ReadableVersions
    ) -> Result<(ArchiveHeader, Data), Problem> {
        let parsed: (header: ArchiveHeader, length: Int)
        switch bytes.withUnsafeBytes({ buffer in Result { () throws(ArchiveDefect) in try ArchiveHeader.parse(buffer) } }) {
        case .success(let value): parsed = value
        case .failure(let defect): return .failure(Problem(code: .corruptArchive, message: "Unreadable archive: \(defect)."))
        }
        if let problem = check(parsed.header, for: key, versions: versions, payloadLength: bytes.count - parsed.length) {
            return .failure(problem)
        }
        let payload = bytes.subdata(in: (bytes.startIndex + parsed.length)..<bytes.endIndex)
        guard CRC32.checksum(payload) == parsed.header.payloadChecksum else {
            return .failure(Problem(code: .corruptArchive, message: "Unreadable archive: \(ArchiveDefect.payloadChecksumMismatch)."))
        }
        return .success((parsed.header, payload))
    }
}
