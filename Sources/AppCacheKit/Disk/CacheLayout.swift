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
    /// The naming of archive files this build makes (see ``ArchiveFileName``): 2, readable
    /// names; 0, the first release's percent-encoded ones.
    static let currentVersion: UInt64 = 2

    /// The cache root, without a trailing slash.
    let rootPath: String
    /// The directory name of the app schema version this cache opened with.
    let versionDirectoryName: String
    /// Whether the volume ignores the case of file names (then more archive names carry a
    /// hash; see ``ArchiveFileName``). Found when the version directory is opened.
    var isCaseInsensitive = false

    init(rootDirectory: URL, schemaVersion: String) {
        var path = rootDirectory.standardizedFileURL.path(percentEncoded: false)
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        rootPath = path
        versionDirectoryName = FileName.bounded(stem: Self.versionPrefix + FileName.encode(schemaVersion))
    }

    /// The directory of the current app schema version.
    var versionPath: String { rootPath + "/" + versionDirectoryName }

    /// The directory holding `user`'s archives (`nil`: the shared space), for messages and tests.
    func userPath(_ user: String?) -> String {
        versionPath + "/" + Self.userDirectoryName(user)
    }

    /// The full path of `path`, for messages and tests.
    func absolutePath(_ path: CachePath) -> String {
        versionPath + "/" + path.relative
    }

    /// The archive file of one collection.
    func archivePath(for key: ArchiveKey) -> CachePath {
        ArchivePathCache.shared.path(for: key, caseInsensitive: isCaseInsensitive) { key in
            CachePath(directory: Self.userDirectoryName(key.user), name: archiveFileName(cacheName: key.cacheName, key: key.key))
        }
    }

    /// The disk index's journal.
    static let journalPath = CachePath(directory: nil, name: ".index")

    static func userDirectoryName(_ user: String?) -> String {
        guard let user else { return sharedDirectoryName }
        return FileName.bounded(stem: userPrefix + FileName.encode(user))
    }

    /// The archive file name of a collection on this layout's volume (see ``ArchiveFileName``).
    func archiveFileName(cacheName: String, key: String?) -> String {
        ArchiveFileName.make(cacheName: cacheName, key: key, caseInsensitiveVolume: isCaseInsensitive)
    }
}

/// The identity of one cached collection: whose, which type, which key.
///
/// Hashed once, when made: an operation looks its key up in several tables (paths, owners),
/// and hashing three strings each time was a good part of a disk hit.
struct ArchiveKey: Hashable, Sendable {
    let user: String?
    let cacheName: String
    let key: String?
    private let hash: Int

    init(user: String?, cacheName: String, key: String?) {
        self.init(seed: Seed(cacheName: cacheName), user: user, key: key)
    }

    /// The key of `user`'s collection under `key` of the cache name `seed` was made for,
    /// hashing the user and the key only.
    init(seed: Seed, user: String?, key: String?) {
        self.user = user
        cacheName = seed.cacheName
        self.key = key
        var hasher = seed.hasher
        hasher.combine(user)
        hasher.combine(key)
        hash = hasher.finalize()
    }

    /// A cache name with its part of the keys' hash: kept with a model type, so that making
    /// one of its keys hashes just the user and the key.
    ///
    /// `@unchecked`: a `Hasher` is a value of plain integers, copied, never shared; the
    /// standard library just does not declare it `Sendable`.
    struct Seed: @unchecked Sendable {
        let cacheName: String
        /// Has combined `cacheName`, and nothing else.
        fileprivate let hasher: Hasher

        init(cacheName: String) {
            self.cacheName = cacheName
            var hasher = Hasher()
            hasher.combine(cacheName)
            self.hasher = hasher
        }
    }

    static func == (lhs: ArchiveKey, rhs: ArchiveKey) -> Bool {
        lhs.hash == rhs.hash && lhs.cacheName == rhs.cacheName && lhs.key == rhs.key && lhs.user == rhs.user
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }
}
