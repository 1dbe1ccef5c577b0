/// The archive paths of the keys used lately, so that a key's file name (Unicode
/// normalisation, escaping, perhaps a hash) is worked out once, not on every read and write.
///
/// One for the process: a path depends only on the key and on whether the volume ignores case,
/// so every cache instance (a fresh one too) shares what another worked out. Bounded: past
/// ``capacity`` keys it starts afresh (names are cheap to work out again, and a cache touching
/// more keys than that spends its time on disk anyway). Thread-safe.
final class ArchivePathCache: Sendable {
    /// The most keys kept.
    static let capacity = 4_096

    static let shared = ArchivePathCache()

    private struct Key: Hashable {
        var archive: ArchiveKey
        var caseInsensitive: Bool
    }

    private let paths = Locked<[Key: CachePath]>([:])

    /// The path of `key`'s archive on a volume that ignores case or not: the one kept, or
    /// `make()`'s, then kept.
    ///
    /// `make` runs outside the lock.
    func path(for key: ArchiveKey, caseInsensitive: Bool, make: (ArchiveKey) -> CachePath) -> CachePath {
        let cacheKey = Key(archive: key, caseInsensitive: caseInsensitive)
        if let known = paths.withLock({ $0[cacheKey] }) { return known }
        let path = make(key)
        paths.withLock { paths in
            if paths.count >= Self.capacity { paths.removeAll(keepingCapacity: true) }
            paths[cacheKey] = path
        }
        return path
    }
}
