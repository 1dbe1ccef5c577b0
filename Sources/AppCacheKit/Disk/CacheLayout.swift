import Foundation

/// Where each collection's archive lives under the cache root.
///
/// ```
/// <root>/
///   version-<schema version>/      one per app schema version; others are wiped on open
///     shared/                      the signed-out space
///     user-<user id>/              one per user
///       <cache name>.archive       a type's default collection
///       <cache name>+<key>.archive a keyed collection
///   .wipe-<random>/                a directory being deleted (finished on the next open)
/// ```
/// Every name part goes through ``FileName``; a name too long for the file system keeps a
/// readable prefix and a hash, and the archive header holds the full names.
struct CacheLayout: Sendable {
    static let versionPrefix = "version-"
    static let userPrefix = "user-"
    static let sharedDirectoryName = "shared"
    static let trashPrefix = ".wipe-"
    static let archiveSuffix = ".archive"

    /// The cache root, without a trailing slash.
    let rootPath: String
    /// The directory name of the app schema version this cache opened with.
    let versionDirectoryName: String

    init(rootDirectory: URL, schemaVersion: String) {
        var path = rootDirectory.standardizedFileURL.path(percentEncoded: false)
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        rootPath = path
        versionDirectoryName = FileName.bounded(stem: Self.versionPrefix + FileName.encode(schemaVersion))
    }

    /// The directory of the current app schema version.
    var versionPath: String { rootPath + "/" + versionDirectoryName }

    /// The directory holding `user`'s archives (`nil`: the shared space).
    func userPath(_ user: String?) -> String {
        versionPath + "/" + Self.userDirectoryName(user)
    }

    /// The archive file of one collection.
    func archivePath(for key: ArchiveKey) -> String {
        userPath(key.user) + "/" + Self.archiveFileName(cacheName: key.cacheName, key: key.key)
    }

    /// The archive file of one collection, relative to the version directory, as the disk index
    /// names it.
    func relativePath(for key: ArchiveKey) -> String {
        Self.userDirectoryName(key.user) + "/" + Self.archiveFileName(cacheName: key.cacheName, key: key.key)
    }

    /// The collection a path from ``relativePath(for:)`` stands for; `nil` for hashed (long)
    /// names, whose header tells instead.
    static func archiveKey(fromRelativePath path: String) -> ArchiveKey? {
        let parts = path.split(separator: "/", maxSplits: 1)
        guard parts.count == 2, let names = archiveName(fromFileName: String(parts[1])) else { return nil }
        if parts[0] == sharedDirectoryName {
            return ArchiveKey(user: nil, cacheName: names.cacheName, key: names.key)
        }
        guard parts[0].hasPrefix(userPrefix), let user = FileName.decode(parts[0].dropFirst(userPrefix.count)) else { return nil }
        return ArchiveKey(user: user, cacheName: names.cacheName, key: names.key)
    }

    /// `path` relative to the version directory, if it is inside it.
    func relativePath(ofAbsolute path: String) -> String? {
        let prefix = versionPath + "/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : nil
    }

    /// A fresh name under the root for a directory about to be deleted.
    func trashPath() -> String {
        rootPath + "/" + Self.trashPrefix + FileSystem.randomSuffix()
    }

    static func userDirectoryName(_ user: String?) -> String {
        guard let user else { return sharedDirectoryName }
        return FileName.bounded(stem: userPrefix + FileName.encode(user))
    }

    static func archiveFileName(cacheName: String, key: String?) -> String {
        var stem = FileName.encode(cacheName)
        if let key { stem += "+" + FileName.encode(key) }
        return FileName.bounded(stem: stem, suffix: archiveSuffix)
    }

    /// The cache name and key an archive file name stands for; `nil` for hashed (long) names,
    /// whose header tells instead, and for files that are not archives.
    static func archiveName(fromFileName fileName: String) -> (cacheName: String, key: String?)? {
        guard fileName.hasSuffix(archiveSuffix), !fileName.contains("~") else { return nil }
        let stem = fileName.dropLast(archiveSuffix.count)
        let parts = stem.split(separator: "+", maxSplits: 1, omittingEmptySubsequences: false)
        guard let cacheName = FileName.decode(parts[0]), !cacheName.isEmpty else { return nil }
        guard parts.count == 2 else { return (cacheName, nil) }
        guard let key = FileName.decode(parts[1]) else { return nil }
        return (cacheName, key)
    }
}

/// The identity of one cached collection: whose, which type, which key.
struct ArchiveKey: Hashable, Sendable {
    var user: String?
    var cacheName: String
    var key: String?
}
