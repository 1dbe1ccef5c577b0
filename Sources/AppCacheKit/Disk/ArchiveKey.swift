import Foundation

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
        self.init(CacheNamePart(cacheName: cacheName), user: user, key: key)
    }

    /// The key of `user`'s collection under `key` of the cache name `part` was made for,
    /// hashing the user and the key only.
    init(_ part: CacheNamePart, user: String?, key: String?) {
        self.user = user
        cacheName = part.cacheName
        self.key = key
        var hasher = Hasher()
        hasher.combine(part.hash)
        hasher.combine(user)
        hasher.combine(key)
        hash = hasher.finalize()
    }

    /// A cache name with its hash, computed once: kept with a model type, so that making one
    /// of its keys hashes a number, the user and the key rather than the name again.
    struct CacheNamePart: Sendable {
        let cacheName: String
        let hash: Int

        init(cacheName: String) {
            self.cacheName = cacheName
            hash = cacheName.hashValue
        }
    }

    static func == (lhs: ArchiveKey, rhs: ArchiveKey) -> Bool {
        lhs.hash == rhs.hash && lhs.cacheName == rhs.cacheName && lhs.key == rhs.key && lhs.user == rhs.user
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }
}
