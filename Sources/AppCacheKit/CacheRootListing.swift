public import Foundation

/// A read-only look at everything under a cache root, for tools such as `appcache-inspect`.
///
/// Reading never changes the cache: no version is wiped, no damaged file removed, no directory
/// created. It needs no model types: every archive header names its user, cache name and key.
///
/// ```swift
/// let listing = try CacheRootListing.read(root: url, verifyChecksums: true)
/// for archive in listing.archives where archive.problem != nil { print(archive.path) }
/// ```
public struct CacheRootListing: Sendable {
    /// One archive file, as its header and file system describe it.
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
        /// The `schemaVersion` of the model type it was written with.
        public var modelSchemaVersion: Int
        /// With `verifyChecksums`, whether the payload's length and checksum match the header;
        /// `nil` when not verified.
        public var checksumVerified: Bool?
        /// Where the file is.
        public var path: String
    }

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
    /// The users (or `nil`, the shared space) that have archives, in any version.
    public var users: [String?]
    /// Every readable archive, by version, user, cache name and key.
    public var archives: [Archive]
    /// Files where archives should be that are not readable archives.
    public var unreadable: [Unreadable]

    /// Reads the cache at `root`.
    ///
    /// - Parameters:
    ///   - root: a cache root directory, as `AppCache.Configuration.rootDirectory`.
    ///   - verifyChecksums: also read each payload and check its length and checksum.
    ///   - progress: called with (files done, files in all) as files are read; on the calling
    ///     thread.
    /// - Throws: `notACache` when `root` is not a directory holding a `version-*` directory;
    ///   `permissionDenied` or `ioFailure` when it cannot be listed.
    /// - Complexity: one directory listing per user, one header read per archive (a whole-file
    ///   read with `verifyChecksums`).
    public static func read(
        root: URL, verifyChecksums: Bool = false, progress: ((Int, Int) -> Void)? = nil
    ) throws -> CacheRootListing {
        let fileSystem = FileSystem()
        // The version only matters to paths this listing does not use.
        let layout = CacheLayout(rootDirectory: root, schemaVersion: "")
        let rootPath = layout.rootPath
        func notACache(_ why: String, _ cause: (any Error)? = nil) -> AppCacheError {
            AppCacheError(code: .notACache, message: "\(rootPath) is not an AppCache root: \(why).", path: rootPath, underlyingError: cause)
        }
        let names: [String]
        do {
            guard let listed = try fileSystem.contentsOfDirectory(rootPath) else { throw notACache("it does not exist") }
            names = listed
        } catch let error as SystemError {
            if error.errorNumber == ENOTDIR { throw notACache("it is not a directory", error) }
            throw AppCacheError(code: error.code, message: "The cache root cannot be listed.", path: rootPath, underlyingError: error)
        }
        let versionDirectories = names.filter { $0.hasPrefix(CacheLayout.versionPrefix) }.sorted()
        guard !versionDirectories.isEmpty else { throw notACache("it holds no version-* directory") }

        var files: [(version: String, path: String)] = []
        var schemaVersions: [String] = []
        var unreadable: [Unreadable] = []
        /// The names in a directory; one that cannot be listed is reported, not fatal.
        func sortedNames(in directory: String) -> [String] {
            do {
                return (try fileSystem.contentsOfDirectory(directory) ?? []).sorted()
            } catch {
                unreadable.append(Unreadable(path: directory, reason: "cannot be listed: \(error)"))
                return []
            }
        }
        for directory in versionDirectories {
            let versionPath = rootPath + "/" + directory
            let version = FileName.decode(directory.dropFirst(CacheLayout.versionPrefix.count)) ?? directory
            schemaVersions.append(version)
            for userDirectory in sortedNames(in: versionPath)
            where userDirectory == CacheLayout.sharedDirectoryName || userDirectory.hasPrefix(CacheLayout.userPrefix) {
                let userPath = versionPath + "/" + userDirectory
                for name in sortedNames(in: userPath) where name.hasSuffix(CacheLayout.archiveSuffix) && !name.hasPrefix(".") {
                    files.append((version, userPath + "/" + name))
                }
            }
        }

        let store = DiskStore(layout: layout, fileSystem: fileSystem, report: { _ in })
        var archives: [Archive] = []
        for (index, file) in files.enumerated() {
            defer { progress?(index + 1, files.count) }
            guard let summary = store.summary(atPath: file.path) else {
                unreadable.append(Unreadable(path: file.path, reason: "not a readable AppCache archive header"))
                continue
            }
            let header = summary.header
            var verified: Bool?
            if verifyChecksums {
                let key = ArchiveKey(user: header.user, cacheName: header.cacheName, key: header.key)
                if let contents = try? fileSystem.read(file.path),
                    case .success = DiskStore.validate(contents.bytes, for: key, schemaVersion: header.schemaVersion) {
                    verified = true
                } else {
                    verified = false
                }
            }
            archives.append(Archive(
                schemaVersion: file.version, user: header.user, cacheName: header.cacheName, key: header.key,
                bytes: summary.size, cachedDate: summary.cachedDate, expiry: header.expiry, isPinned: header.isPinned,
                modelSchemaVersion: Int(header.schemaVersion), checksumVerified: verified, path: file.path))
        }
        var users: [String?] = []
        for archive in archives where !users.contains(archive.user) {
            users.append(archive.user)
        }
        return CacheRootListing(schemaVersions: schemaVersions, users: users, archives: archives, unreadable: unreadable)
    }
}

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
