public import Foundation

/// A read-only look at everything under a cache root, for tools such as `appcache-inspect`.
///
/// Reading never changes the cache: no version is wiped, no damaged file removed, no directory
/// created. It needs no model types: every archive header names its user, cache name and key.
///
/// ```swift
/// let listing = try CacheRootListing.read(root: url, verifyChecksums: true)
/// for archive in listing.archives where archive.checksumVerified == false { print("damaged:", archive.path) }
/// for file in listing.unreadable { print("unreadable:", file.path, file.reason) }
/// ```
public struct CacheRootListing: Sendable {
    /// One archive, as its header and file system describe it.
    public struct Archive: Sendable, Hashable {
        /// The app schema version of the directory it is in.
        public var schemaVersion: String
        /// Its user; `nil` for the shared space.
        public var user: String?
        /// The cache name of its model type.
        public var cacheName: String
        /// Its key; `nil` for a type's default collection.
        public var key: String?
        /// The file's size in bytes.
        public var bytes: Int
        /// When the items were cached (the file's modification date).
        public var cachedDate: Date
        /// When the items stop being returned; `nil` for never.
        public var expiry: Date?
        /// Whether it is pinned.
        public var isPinned: Bool
        /// The staleness threshold of its type when it was written, as the writing app judged
        /// it; `nil` for archives of the first format, which do not record it.
        public var stalenessThreshold: Duration?
        /// The `schemaVersion` of the model type it was written with.
        public var modelSchemaVersion: Int
        /// With `verifyChecksums`, whether the payload's length and checksum match the header;
        /// `nil` when not verified.
        public var checksumVerified: Bool?
        /// With `verifyChecksums`, why the app could not decode this archive as its model, as
        /// the app recorded it (a pinned archive it kept: ``AppCacheError/Code/modelMismatch``
        /// with the path inside the items, or a version it declares no upgrade from); `nil`
        /// when the app recorded nothing for this very file, or when not verified.
        public var modelProblem: String?
        /// Where the file is; for an archive in its directory's pack, the path its file would
        /// have.
        public var path: String
        /// Whether it is stored in its user directory's pack of small archives (`.pack`)
        /// rather than as a file of its own.
        public var isPacked: Bool = false
        /// How many items the collection holds, told from its payload's framing without
        /// decoding an item (the binary codec's array count; the elements of a JSON payload's
        /// array); with `verifyChecksums`, only from a payload that passed its checksum.
        /// `nil` when it cannot be told: a damaged payload, or a codec this build does not know.
        public var itemCount: Int?
    }

    /// A mutation queued for the server (``AppCache/enqueue(_:)``) in a user's outbox, listed
    /// from the outbox's records without decoding the mutation itself.
    public struct QueuedMutation: Sendable, Hashable {
        /// The app schema version whose directory holds the outbox.
        public var schemaVersion: String
        /// The user (`nil`: the shared space), as far as the directory name tells (a very long
        /// id is shortened there).
        public var user: String?
        /// The mutation, as ``AppCache/pendingMutations`` lists it.
        public var mutation: PendingMutation
        /// The mutation: ``mutation``, by its earlier name.
        @available(*, deprecated, renamed: "mutation")
        public var change: PendingMutation {
            get { mutation }
            set { mutation = newValue }
        }
        /// The outbox file.
        public var path: String
    }

    /// A mutation queued for the server: ``QueuedMutation``, by its earlier name.
    @available(*, deprecated, renamed: "QueuedMutation")
    public typealias QueuedChange = QueuedMutation

    /// A file under a version directory that is not a readable archive, or a directory that
    /// cannot be listed.
    public struct Unreadable: Sendable, Hashable {
        /// Where the file is.
        public var path: String
        /// Why it cannot be read.
        public var reason: String
    }

    /// The app schema versions that have a directory under the root.
    public var schemaVersions: [String]
    /// The users (or `nil`, the shared space) that have archives or queued changes, in any
    /// version.
    public var users: [String?]
    /// Every readable archive, by version, user, cache name and key.
    public var archives: [Archive]
    /// Files where archives should be that are not readable archives (and damaged outboxes).
    public var unreadable: [Unreadable]
    /// The changes waiting for the server, per user, oldest first.
    public var queuedMutations: [QueuedMutation] = []

    /// The mutations queued in the outboxes: ``queuedMutations``, by its earlier name.
    @available(*, deprecated, renamed: "queuedMutations")
    public var queuedChanges: [QueuedMutation] {
        get { queuedMutations }
        set { queuedMutations = newValue }
    }

    /// Reads the cache at `root`.
    ///
    /// - Parameters:
    ///   - root: a cache root directory, as `AppCache.Configuration.rootDirectory`.
    ///   - verifyChecksums: also read each payload and check its length and checksum (and take
    ///     each ``Archive/itemCount`` from the checked payload).
    ///   - progress: called with (files done, files in all) as files are read; on the calling
    ///     thread.
    /// - Throws: `notACache` when `root` is not a directory holding a `version-*` directory;
    ///   `permissionDenied` or `ioFailure` when it cannot be listed.
    /// - Complexity: one directory listing per user; per archive, one header read and a read of
    ///   its payload's framing (13 bytes of a binary payload; all of a JSON payload, in chunks
    ///   of 1 MiB), or one whole-file read with `verifyChecksums`.
    public static func read(
        root: URL, verifyChecksums: Bool = false, progress: ((Int, Int) -> Void)? = nil
    ) throws -> CacheRootListing {
        let rootPath = CacheLayout.rootPath(of: root)
        func notACache(_ why: String, _ cause: (any Error)? = nil) -> AppCacheError {
            AppCacheError(code: .notACache, message: "\(rootPath) is not an AppCache root: \(why).", path: rootPath, underlyingError: cause)
        }
        let names: [String]
        do throws(SystemError) {
            let descriptor = open(rootPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard descriptor >= 0 else { throw SystemError.last("open", rootPath) }
            names = try FileSystem.list(descriptor, rootPath).map(\.name)
        } catch {
            if error.errorNumber == ENOENT { throw notACache("it does not exist", error) }
            if error.errorNumber == ENOTDIR { throw notACache("it is not a directory", error) }
            throw AppCacheError(code: error.code, message: "The cache root cannot be listed.", path: rootPath, underlyingError: error)
        }
        let versionDirectories = names.filter { $0.hasPrefix(CacheLayout.versionPrefix) }.sorted()
        guard !versionDirectories.isEmpty else { throw notACache("it holds no version-* directory") }

        var files: [(version: String, store: DiskStore, path: CachePath)] = []
        var schemaVersions: [String] = []
        var unreadable: [Unreadable] = []
        var queued: [QueuedMutation] = []
        for directory in versionDirectories {
            let versionPath = rootPath + "/" + directory
            let version = FileName.decode(directory.dropFirst(CacheLayout.versionPrefix.count)) ?? directory
            let fileSystem: FileSystem
            do throws(SystemError) {
                guard let opened = try FileSystem.open(rootPath: rootPath, versionName: directory, create: false, readOnly: true) else {
                    unreadable.append(Unreadable(path: versionPath, reason: "a symbolic link, not a directory"))
                    continue
                }
                fileSystem = opened
            } catch {
                unreadable.append(Unreadable(path: versionPath, reason: "cannot be opened: \(error)"))
                continue
            }
            schemaVersions.append(version)
            let layout = CacheLayout(rootDirectory: root, schemaVersion: version)
            let store = DiskStore(layout: layout, fileSystem: fileSystem)
            let userDirectories: [String]
            do {
                userDirectories = try store.userDirectories()
            } catch {
                unreadable.append(Unreadable(path: versionPath, reason: "cannot be listed: \(error.message)"))
                continue
            }
            for userDirectory in userDirectories {
                let userPath = versionPath + "/" + userDirectory
                do throws(SystemError) {
                    guard let entries = try fileSystem.contentsOfDirectory(userDirectory) else {
                        unreadable.append(Unreadable(path: userPath, reason: "a symbolic link, not a directory"))
                        continue
                    }
                    // Archive files and the archives the directory's pack holds.
                    for path in (try? store.archivePaths(inDirectory: userDirectory)) ?? [] {
                        files.append((version, store, path))
                    }
                    if entries.contains(where: { $0.name == OutboxFile.name }) {
                        let outboxPath = userPath + "/" + OutboxFile.name
                        let user = userDirectory == CacheLayout.sharedDirectoryName
                            ? nil : FileName.decode(userDirectory.dropFirst(CacheLayout.userPrefix.count)) ?? userDirectory
                        let read = try OutboxFile.read(fromDirectory: userDirectory, in: store)
                        queued += read.log.entries.map { entry in
                            QueuedMutation(
                                schemaVersion: version, user: user, mutation: OutboxQueue.Change(entry: entry).pendingMutation, path: outboxPath)
                        }
                        if read.isTooLarge || read.log.damagedRecords > 0 {
                            unreadable.append(Unreadable(
                                path: outboxPath,
                                reason: read.isTooLarge ? "an outbox larger than any queue can be" : "an outbox with \(read.log.damagedRecords) damaged record(s)"))
                        }
                    }
                } catch {
                    unreadable.append(Unreadable(path: userPath, reason: "cannot be listed: \(error)"))
                }
            }
        }

        var archives: [Archive] = []
        var mismatchLogs: [String: [ModelMismatchLog.Entry]] = [:]
        for (index, file) in files.enumerated() {
            defer { progress?(index + 1, files.count) }
            let fullPath = file.store.fileSystem.displayPath(file.path)
            let summary: DiskStore.Summary
            switch file.store.summary(at: file.path) {
            case .summary(let found): summary = found
            case .missing: continue
            case .unreadable(let reason, _):
                unreadable.append(Unreadable(path: fullPath, reason: "not a readable AppCache archive: \(reason)"))
                continue
            }
            let header = summary.header
            var verified: Bool?
            var modelProblem: String?
            var itemCount: Int?
            if verifyChecksums {
                // The count from the payload whose checksum was checked, in the same read.
                let read = try? file.store.read(at: file.path, forKey: summary.archiveKey, versions: .only(header.schemaVersion)) { record, payload in
                    PayloadItemCount.count(codec: record.codec, payload: payload)
                }
                if case .found(let count, _) = read {
                    verified = true
                    itemCount = count
                } else {
                    verified = false
                }
                let mismatches = mismatchLogs[file.version] ?? ModelMismatchLog.read(from: file.store)
                mismatchLogs[file.version] = mismatches
                modelProblem = mismatches.last {
                    $0.archive == file.path && $0.size == summary.size
                        && $0.cachedMilliseconds == Milliseconds.nearest(summary.cachedDate)
                }?.reason
            } else {
                itemCount = file.store.itemCount(at: file.path, of: summary)
            }
            archives.append(Archive(
                schemaVersion: file.version, user: header.user, cacheName: header.cacheName, key: header.key,
                bytes: summary.size, cachedDate: summary.cachedDate, expiry: header.expiry, isPinned: header.isPinned,
                stalenessThreshold: header.stalenessThreshold, modelSchemaVersion: Int(clamping: header.schemaVersion),
                checksumVerified: verified, modelProblem: modelProblem, path: fullPath, isPacked: summary.isPacked,
                itemCount: itemCount))
        }
        var users: [String?] = []
        for archive in archives where !users.contains(archive.user) {
            users.append(archive.user)
        }
        for change in queued where !users.contains(change.user) {
            users.append(change.user)
        }
        return CacheRootListing(
            schemaVersions: schemaVersions, users: users, archives: archives, unreadable: unreadable, queuedMutations: queued)
    }
}

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
