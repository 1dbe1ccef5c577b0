public import Foundation

/// A cache of `Codable` model collections that an app's model layer can lean on: per-user,
/// schema-versioned, with staleness judged from when the items were cached.
///
/// ```swift
/// let cache = try AppCache(configuration: .init(schemaVersion: "2.1", user: "alice"))
/// try cache.cacheItems(menu)                                  // [MenuItem]
/// if let cached = try cache.getCachedItems(MenuItem.self) { show(cached) }
/// if cache.isStale(MenuItem.self) { refresh() }
/// ```
///
/// Each collection is one archive file: a checksummed header, then the encoded items. Writes go
/// to a temporary file renamed into place, so a reader sees the old collection or the new one.
/// The file's modification date is the moment the items were cached. A file that is damaged,
/// foreign or written for another `schemaVersion` is a miss (the file is removed and the
/// configuration's `diagnostics` hook is told), never a crash and never garbage.
///
/// `AppCache` is `Sendable`: every method may be called from any thread or task at once. No
/// lock is held while encoding, decoding or touching files.
public final class AppCache: Sendable {
    /// The configuration the cache was opened with.
    public let configuration: Configuration

    private let store: DiskStore
    private let state: Locked<State>

    private struct State {
        var user: String?
    }

    /// Opens the cache, wiping the data of every app schema version other than the
    /// configuration's and finishing any wipe an earlier run left unfinished.
    ///
    /// Opening lists only the root directory, so it takes the same time however many archives
    /// the cache holds. Directories are created when the first collection is written.
    ///
    /// - Throws: `versionWipeFailed` when old data cannot be removed (the cache refuses to open
    ///   rather than mix versions); `notADirectory` when the root is a file; `permissionDenied`
    ///   or `ioFailure` when the root cannot be listed.
    public init(configuration: Configuration) throws {
        self.configuration = configuration
        let diagnostics = configuration.diagnostics
        store = DiskStore(
            layout: CacheLayout(rootDirectory: configuration.rootDirectory, schemaVersion: configuration.schemaVersion),
            fileSystem: FileSystem(faults: configuration.faults),
            report: { problem in diagnostics?(problem) })
        state = Locked(State(user: configuration.user))
        try store.openVersion()
    }

    /// The user whose collections the cache reads and writes; `nil` for the shared space.
    public var user: String? {
        state.withLock { $0.user }
    }

    /// Caches `items` as the collection of `Model` under `key`, replacing what was there.
    ///
    /// The moment of the call becomes the collection's cached date.
    ///
    /// - Parameters:
    ///   - items: the collection to cache; an empty one is cached as empty, not removed.
    ///   - key: which collection of the type; `nil` for its default collection.
    /// - Throws: `encodingFailed` when the items cannot be encoded; `permissionDenied`,
    ///   `noSpace`, `notADirectory` or `ioFailure` when the archive cannot be written. In every
    ///   case what was cached before stays as it was.
    public func cacheItems<Model: CacheableModel>(_ items: [Model], forKey key: String? = nil) throws {
        let archiveKey = archiveKey(Model.self, key)
        let codec = PayloadCodec.json
        let payload: Data
        do {
            payload = try codec.encode(items)
        } catch {
            throw AppCacheError(
                code: .encodingFailed,
                message: "The items could not be encoded; nothing was written.",
                cacheName: Model.cacheName, key: key, underlyingError: error)
        }
        let record = ArchiveRecord(
            payload: payload, codec: codec.rawValue, schemaVersion: Int64(Model.schemaVersion),
            cachedDate: configuration.now())
        try store.store(record, forKey: archiveKey)
    }

    /// The cached collection of `Model` under `key`, or `nil` when there is none.
    ///
    /// Stale items are returned too; ask ``isStale(_:forKey:)`` or use
    /// ``cachedCollection(_:forKey:)`` to get both in one read.
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when an archive exists but cannot be read.
    ///   A damaged or outdated archive is not an error but a miss.
    public func getCachedItems<Model: CacheableModel>(_ type: Model.Type, forKey key: String? = nil) throws -> [Model]? {
        try cachedCollection(type, forKey: key)?.items
    }

    /// The cached collection of `Model` under `key` with its cached date, age and staleness,
    /// all from one read; `nil` when there is none.
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when an archive exists but cannot be read.
    public func cachedCollection<Model: CacheableModel>(
        _ type: Model.Type, forKey key: String? = nil
    ) throws -> CachedCollection<Model>? {
        let archiveKey = archiveKey(Model.self, key)
        guard let record = try store.value(forKey: archiveKey, schemaVersion: Int64(Model.schemaVersion)) else {
            return nil
        }
        guard let codec = PayloadCodec(rawValue: record.codec) else {
            store.discard(
                store.layout.archivePath(for: archiveKey), key: archiveKey, code: .corruptArchive,
                message: "The archive was written with payload codec \(record.codec), which this build cannot read.")
            return nil
        }
        let items: [Model]
        do {
            items = try codec.decode(Model.self, from: record.payload)
        } catch {
            store.discard(
                store.layout.archivePath(for: archiveKey), key: archiveKey, code: .decodingFailed,
                message: "The archive could not be decoded as \(Model.self).", cause: error)
            return nil
        }
        let age = Self.age(of: record.cachedDate, now: configuration.now())
        return CachedCollection(
            items: items, cachedDate: record.cachedDate, age: age,
            isStale: Self.isStale(age: age, threshold: configuration.stalenessThreshold(for: Model.self)))
    }

    /// Whether the collection of `Model` under `key` is missing or older than the type's
    /// staleness threshold.
    ///
    /// A collection dated further in the future than the threshold (the clock was moved back)
    /// counts as stale too. Reads the archive's modification date only, not its contents.
    public func isStale<Model: CacheableModel>(_ type: Model.Type, forKey key: String? = nil) -> Bool {
        guard let date = cachedDate(of: type, forKey: key) else { return true }
        return Self.isStale(
            age: Self.age(of: date, now: configuration.now()),
            threshold: configuration.stalenessThreshold(for: Model.self))
    }

    /// When the collection of `Model` under `key` was cached; `nil` when there is none.
    ///
    /// Reads the archive's modification date only, not its contents.
    public func cachedDate<Model: CacheableModel>(of type: Model.Type, forKey key: String? = nil) -> Date? {
        store.cachedDate(forKey: archiveKey(Model.self, key))
    }

    /// Removes the collection of `Model` under `key` for the current user. Removing a missing
    /// collection is not an error.
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when the archive cannot be removed.
    public func removeItems<Model: CacheableModel>(_ type: Model.Type, forKey key: String? = nil) throws {
        try store.removeValue(forKey: archiveKey(Model.self, key))
    }

    /// Removes every collection of the current user (of every type and key).
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when the user's directory cannot be moved
    ///   out of view; the collections are then unchanged.
    public func removeAll() throws {
        try store.removeAll(user: user)
    }

    /// Makes `user` the current user: from now on reads and writes see only that user's
    /// collections. `nil` signs out to the shared space. Other users' data stays on disk.
    ///
    /// - Throws: nothing yet: every switch succeeds while the cache holds nothing in memory.
    public func switchUser(to user: String?) throws {
        state.withLock { $0.user = user }
    }

    // MARK: - Private

    private func archiveKey<Model: CacheableModel>(_ type: Model.Type, _ key: String?) -> ArchiveKey {
        let cacheName = Model.cacheName
        precondition(!cacheName.isEmpty, "CacheableModel.cacheName of \(Model.self) must not be empty")
        return ArchiveKey(user: user, cacheName: cacheName, key: key)
    }

    static func age(of cachedDate: Date, now: Date) -> Duration {
        .seconds(now.timeIntervalSince(cachedDate))
    }

    static func isStale(age: Duration, threshold: Duration) -> Bool {
        age > threshold || age < .zero - threshold
    }
}
