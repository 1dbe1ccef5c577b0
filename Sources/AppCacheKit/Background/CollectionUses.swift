import Foundation

/// What a background refresh (``AppCache/refreshInBackground(until:usedWithin:maxConcurrentFetches:)``)
/// knows of the collections: which have a fetch it may run, and when each was last used.
///
/// - **Registered fetches**, one per model type (by cache name): ``register(_:cacheName:)``.
/// - **Uses**: a load or watch of a collection (``AppCache/load(_:forKey:policy:retry:fetch:)-(_,_,_,_,(LoadContext<Model>)->FetchResult<Model>)``,
///   ``AppCache/watch(_:forKey:policy:refresh:retry:fetch:)``, ``CachedQuery``, `CachedItems`)
///   uses it when it begins, at the configuration's clock (uses less than a second apart are
///   one). The table keeps the
///   ``capacity`` most recently used collections of this process, each with the fetch its last
///   load or watch passed (the remembered fetch), unless its type has a registered fetch. A
///   remembered fetch keeps what its closure captures alive until it is replaced, falls out of
///   the table or a registration for its type lets it go; one that captures the cache keeps
///   the cache (the public API says to capture it weakly).
/// - **Recorded uses**: the uses of collections whose type has a registered fetch are also
///   written to the cache, for the current user (``RecordedUse``), at most once a minute per
///   collection, so that they outlive the process. A refresh's own fetches are no use: a
///   collection nobody looks at stops being refreshed once its last use leaves the window.
///
/// Thread safety: `Sendable`; the table sits behind one lock, never held while the recorded
/// uses are read or written (on a serial queue of its own, off the caller's thread).
final class CollectionUses: Sendable {
    /// A collection of a user, as this process knows it.
    struct Key: Hashable, Sendable {
        var user: String?
        var type: ObjectIdentifier
        var key: String?
    }

    /// A collection of the current user, by name: what the listing and the recorded uses say.
    typealias Collection = BackgroundRefreshReport.Collection

    /// The last use of a collection in this process.
    struct Use: Sendable {
        var cacheName: String
        var date: Date
        /// The fetch the load or watch passed.
        var fetch: BackgroundFetch?
        /// The use last written to the cache, if any.
        var recorded: Date?
    }

    private struct State {
        var registered: [String: BackgroundFetch] = [:]
        var recent = LRUDictionary<Key, Use>()
    }

    /// How many collections the table remembers (and the recorded uses keep, per user).
    static let capacity = 256
    /// A use is written again only once it is this much newer than the one written.
    static let recordingInterval: TimeInterval = 60
    /// Uses of a collection closer together than this are one: the hot path of a load whose
    /// collection was used a moment ago takes one lock and allocates nothing.
    static let coalescingInterval: TimeInterval = 1

    private let state = Locked(State())
    private let recording = DispatchQueue(label: "AppCache.recentUses", qos: .utility)
    /// The recordings queued on `recording` and not yet done: what ``finishRecording()`` waits
    /// for without entering libdispatch (it runs in the cache's `deinit`, see ``JobsInFlight``).
    private let recordings = JobsInFlight()

    /// Registers the fetch a background refresh runs for every collection of a type, and lets
    /// go of the fetches remembered for the type's collections (the registered one wins over
    /// them, so keeping them would only keep alive what they capture).
    func register(_ fetch: BackgroundFetch, cacheName: String) {
        // Released after the lock: a fetch's captures may deinitialise anything.
        let released = state.withLock { state -> [BackgroundFetch] in
            var released = state.registered.updateValue(fetch, forKey: cacheName).map { [$0] } ?? []
            state.recent.modifyEachFromLeastRecent { _, use in
                guard use.cacheName == cacheName, let remembered = use.fetch else { return }
                released.append(remembered)
                use.fetch = nil
            }
            return released
        }
        withExtendedLifetime(released) {}
    }

    /// Notes that a load or watch of the collection of `Model` under `key` of `user` began, with
    /// its fetch; records the use in the cache (later, on a queue of its own) when the type has
    /// a registered fetch. A use within ``coalescingInterval`` of the last one changes nothing
    /// (its fetch stays the one noted then).
    ///
    /// - Complexity: O(1), amortized.
    func noteUse<Model: CacheableModel>(
        _ type: Model.Type, key: String?, user: String?, store: CollectionStore,
        fetch: @escaping @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>
    ) {
        let id = Key(user: user, type: ObjectIdentifier(Model.self), key: key)
        let date = store.configuration.now()
        let isNoted = state.withLock { state in
            state.recent.value(forKey: id).map { date >= $0.date && date.timeIntervalSince($0.date) < Self.coalescingInterval } ?? false
        }
        if isNoted { return }
        let cacheName = store.typeInfo(Model.self).cacheName
        // A type with a registered fetch never runs a remembered one: none is kept, so that
        // nothing the load's closure captures outlives the load.
        let erased = state.withLock { $0.registered[cacheName] } == nil ? BackgroundFetch(Model.self, fetch) : nil
        let (record, released) = state.withLock { state -> (Bool, [BackgroundFetch]) in
            var use = state.recent.value(forKey: id) ?? Use(cacheName: cacheName, date: date)
            var released = use.fetch.map { [$0] } ?? []
            use.date = max(use.date, date)
            let isRegistered = state.registered[cacheName] != nil
            use.fetch = isRegistered ? nil : erased
            let record = isRegistered && use.recorded.map { use.date.timeIntervalSince($0) >= Self.recordingInterval } ?? true
            if record { use.recorded = use.date }
            _ = state.recent.updateValue(use, forKey: id)
            while state.recent.count > Self.capacity {
                if let fetch = state.recent.removeLeastRecentlyUsed()?.value.fetch { released.append(fetch) }
            }
            return (record, released)
        }
        // Released after the lock: a fetch's captures may deinitialise anything.
        withExtendedLifetime(released) {}
        if record {
            recordings.begin()
            recording.async { [weak self, weak store, recordings] in
                if let self, let store { self.record(in: store) }
                recordings.end()
            }
        }
    }

    /// Waits until the uses queued for recording are in the store (then a flush writes them):
    /// what a flush, the exit's flush and ``AppCache/idle()`` do first, so that a process that
    /// ends soon after a load still leaves its use for the next background launch.
    ///
    /// It makes no dispatch call, so the cache's `deinit` may run on a thread that is exiting.
    func finishRecording() {
        recordings.waitUntilNone()
    }

    /// The current user's uses, this process's and the recorded ones, with the fetch to run for
    /// each: the registered one of its type, else the remembered one; uses with neither are
    /// left out. Reads the recorded uses: call on a library thread.
    func uses(of session: CacheSession, switches: UInt64, store: CollectionStore) -> [Collection: (date: Date, fetch: BackgroundFetch)] {
        let recorded = (try? store.readCollection(RecordedUse.self, key: nil, switches: switches))?.items ?? []
        return state.withLock { state in
            var found: [Collection: (date: Date, fetch: BackgroundFetch)] = [:]
            for use in recorded {
                guard let fetch = state.registered[use.cacheName] else { continue }
                let collection = Collection(cacheName: use.cacheName, key: use.key)
                found[collection] = (max(use.date, found[collection]?.date ?? .distantPast), fetch)
            }
            for (key, use) in state.recent.elementsFromMostRecent where key.user == session.user {
                guard let fetch = state.registered[use.cacheName] ?? use.fetch else { continue }
                let collection = Collection(cacheName: use.cacheName, key: key.key)
                found[collection] = (max(use.date, found[collection]?.date ?? .distantPast), fetch)
            }
            return found
        }
    }

    /// Writes the current user's uses of types with a registered fetch into their recorded
    /// uses (the newest ``capacity``), merged with those recorded before.
    private func record(in store: CollectionStore) {
        let (session, switches) = store.sessionAndSwitches
        let noted = state.withLock { state in
            state.recent.elementsFromMostRecent.filter { $0.key.user == session.user && state.registered[$0.value.cacheName] != nil }
                .map { RecordedUse(cacheName: $0.value.cacheName, key: $0.key.key, date: $0.value.date) }
        }
        guard !noted.isEmpty else { return }
        var merged: [Collection: Date] = [:]
        let recorded = (try? store.readCollection(RecordedUse.self, key: nil, switches: switches))?.items ?? []
        for use in recorded + noted {
            let collection = Collection(cacheName: use.cacheName, key: use.key)
            merged[collection] = max(use.date, merged[collection] ?? .distantPast)
        }
        let newest = merged.sorted { $0.value > $1.value }.prefix(Self.capacity)
            .map { RecordedUse(cacheName: $0.key.cacheName, key: $0.key.key, date: $0.value) }
        do {
            _ = try store.save(Array(newest), forKey: nil, expiresAfter: nil, pinned: false, validators: nil, session: session)
        } catch {
            store.reportAll([AppCacheError(wrapping: error, message: "The recent uses of collections could not be recorded.")])
        }
    }
}
