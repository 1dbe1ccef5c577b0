public import Foundation

/// One cached collection as ``AppCache/entries()-15aed`` lists it: what it is and its state, read
/// from memory and archive headers without decoding any items.
public struct CacheEntry: Sendable, Hashable {
    /// The user it belongs to; `nil` for the shared, signed-out space.
    public var user: String?
    /// The cache name of its model type (`MenuItems` for `MenuItem`).
    public var cacheName: String
    /// Its key; `nil` for the type's default collection.
    public var key: String?
    /// Its encoded size in bytes (the archive file's size when it is on disk).
    public var bytes: Int
    /// When the items were cached.
    public var cachedDate: Date
    /// When the items stop being returned; `nil` for never.
    public var expiry: Date?
    /// Whether it is pinned: it ignores its expiry.
    public var isPinned: Bool
    /// The `schemaVersion` of the model type it was written with.
    public var modelSchemaVersion: Int
    /// Whether it is older than its staleness threshold, the same answer as
    /// ``AppCache/isStale(_:forKey:)``, ``AppCache/cachedCollection(_:forKey:)`` and
    /// ``AppCache/load(_:forKey:policy:retry:fetch:)-(_,_,_,_,(LoadContext<Model>)->FetchResult<Model>)`` give: this cache's configuration decides (its
    /// override for the cache name, else the type's own once this cache has used the type).
    /// For a type this cache knows nothing of, the threshold its writer judged by, recorded in
    /// the archive, else the default. Staleness is each process's policy (when it refetches):
    /// an extension that must judge as its app does shares the app's configuration.
    public var isStale: Bool
    /// Whether memory holds it.
    public var isInMemory: Bool
    /// Whether it has an archive on disk (possibly older than memory's copy; see `isDirty`).
    public var isOnDisk: Bool
    /// Whether the archive on disk is older than what memory holds (or there is none yet).
    public var isDirty: Bool
}
