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
        self.init(rootPath: Self.rootPath(of: rootDirectory), schemaVersion: schemaVersion)
    }

    /// The layout under a root whose path ``rootPath(of:)`` gave already.
    init(rootPath: String, schemaVersion: String) {
        self.rootPath = rootPath
        versionDirectoryName = FileName.bounded(stem: Self.versionPrefix + FileName.encode(schemaVersion))
    }

    /// The path of `rootDirectory` as `standardizedFileURL` gives it, without a trailing slash.
    ///
    /// A path with no dot segment and no empty one is its own standard form: it is taken as it
    /// is, since standardizing builds a new URL, which cost more than all of opening's other
    /// path work.
    static func rootPath(of rootDirectory: URL) -> String {
        var path = rootDirectory.path(percentEncoded: false)
        if !isStandard(path) { path = rootDirectory.standardizedFileURL.path(percentEncoded: false) }
        // Cut as bytes: a slash can end a grapheme cluster that begins with another character,
        // and a byte 0x2F is always a whole scalar. (Removing scalars one at a time through the
        // unicode scalar view cost about 12,000 instructions each, an eighth of opening's.)
        var slashes = 0
        for byte in path.utf8.reversed() {
            guard byte == UInt8(ascii: "/"), path.utf8.count - slashes > 1 else { break }
            slashes += 1
        }
        guard slashes > 0 else { return path }
        return String(decoding: path.utf8.dropLast(slashes), as: UTF8.self)
    }

    /// Whether `path` is not empty and has no empty segment (`//`) and no `.` or `..` segment.
    ///
    /// - Complexity: O(n) in its bytes, one pass, no allocation (splitting it into segments
    ///   and searching it for `//` cost about a third of opening's instructions).
    static func isStandard(_ path: String) -> Bool {
        guard !path.isEmpty else { return false }
        let slash = UInt8(ascii: "/")
        var previous: UInt8 = 0
        var segmentLength = 0
        var onlyDots = true
        /// Whether the segment that just ended is `.` or `..`.
        func endsDotSegment() -> Bool { onlyDots && segmentLength > 0 && segmentLength <= 2 }
        for byte in path.utf8 {
            if byte == slash {
                if previous == slash || endsDotSegment() { return false }
                segmentLength = 0
                onlyDots = true
            } else {
                segmentLength += 1
                if byte != UInt8(ascii: ".") { onlyDots = false }
            }
            previous = byte
        }
        return !endsDotSegment()
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
