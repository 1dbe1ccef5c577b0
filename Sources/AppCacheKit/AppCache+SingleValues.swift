import Foundation

extension AppCache {
    /// Caches one model value under `key`: a profile, an article's detail, anything that is not
    /// a list.
    ///
    /// Stored as a collection of one, so it has the same staleness, expiry, users, versioning
    /// and pinning as any collection: ``isStale(_:forKey:)``, ``cachedDate(of:forKey:)`` and
    /// ``removeItems(_:forKey:)`` work on it as they are.
    ///
    /// ```swift
    /// try cache.cacheItem(profile, forKey: "me")
    /// if let me = try cache.cachedItem(Profile.self, forKey: "me") { show(me) }
    /// ```
    ///
    /// - Parameters:
    ///   - item: the value to cache.
    ///   - key: which value of the type; `nil` for its default one.
    ///   - timeToLive: how long it may be returned at all; `nil` for no limit.
    /// - Throws: what ``cacheItems(_:forKey:expiresAfter:)`` throws.
    public func cacheItem<Model: CacheableModel>(_ item: Model, forKey key: String? = nil, expiresAfter timeToLive: Duration? = nil) throws {
        try cacheItems([item], forKey: key, expiresAfter: timeToLive)
    }

    /// The value ``cacheItem(_:forKey:expiresAfter:)`` cached under `key`; `nil` when there is
    /// none, or when the collection under `key` holds other than exactly one item (it was
    /// cached as a list).
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when an archive exists but cannot be read.
    public func cachedItem<Model: CacheableModel>(_ type: Model.Type, forKey key: String? = nil) throws -> Model? {
        guard let items = try getCachedItems(Model.self, forKey: key), items.count == 1 else { return nil }
        return items[0]
    }

    /// Reads, changes and caches the collection of `Model` under `key` in one step that no other
    /// write of the collection in this process can interleave with: appending a page, editing
    /// one item.
    ///
    /// `transform` gets the cached items (`[]` when none, expired or unreadable as `Model`) and
    /// changes them in place; the result is cached for the user who was current when the call
    /// began (dropped if that user's data was removed meanwhile).
    ///
    /// A local edit is not a refresh: the collection keeps its cached date (so a stale feed
    /// stays stale, and its next refresh is still due), its validators (so that refresh can
    /// still be answered "not modified"), its pin and its expiry. Only items from outside,
    /// ``cacheItems(_:forKey:expiresAfter:)`` or a fetch, date a collection anew. A collection
    /// that did not exist is dated now.
    ///
    /// ```swift
    /// try cache.updateItems(Post.self, forKey: "top") { posts in
    ///     posts.append(contentsOf: nextPage)
    /// }
    /// ```
    ///
    /// No lock is held while `transform` runs, so it may call any other method of the cache.
    /// If the collection changed while it ran (another thread's write or update, or another
    /// process's or instance's sharing the root), its result is not stored: `transform` runs
    /// again on the new items. The result is written to disk at once, under the lock every
    /// process sharing the root takes, whatever ``Configuration/writeBackDelay`` says: that is
    /// what makes the update atomic across processes (an app and its widget appending to one
    /// collection at the same moment keep both changes). It changes the confirmed items: changes
    /// queued with ``enqueue(_:)`` are not in what `transform` sees, and stay applied on top of
    /// what it makes. Keep it free of side effects
    /// other than changing the items. A nested `updateItems` of the same collection from inside
    /// `transform` throws `nestedUpdate` rather than wait for itself; of another collection, it
    /// works.
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - transform: changes the items; runs on the caller's thread, once, or again after a
    ///     concurrent change.
    /// - Returns: the items as cached.
    /// - Throws: what `transform` throws (nothing is cached then); `nestedUpdate` when called
    ///   from inside a `transform` of the same collection, or when other writers kept changing
    ///   the collection through \(maximumUpdateAttempts) attempts; what
    ///   ``getCachedItems(_:forKey:)`` throws; the write errors of a write-through
    ///   ``cacheItems(_:forKey:expiresAfter:)`` (`permissionDenied` on a read-only cache, `busy`,
    ///   `noSpace`, ...), with the collection unchanged.
    @discardableResult
    public func updateItems<Model: CacheableModel>(
        _ type: Model.Type, forKey key: String? = nil, _ transform: (inout [Model]) throws -> Void
    ) throws -> [Model] {
        // With no session, the user current when the call begins; never dropped but by a wipe
        // that lands between the read and the write.
        try update(Model.self, forKey: key, session: nil, transform) ?? []
    }

    /// Reads, changes and caches the collection of `Model` under `key` of `session`'s user, as
    /// ``updateItems(_:forKey:_:)`` does, or does nothing when that user is no longer current
    /// or their data was removed since the session was taken.
    ///
    /// For work that began for a user and ends later: a page fetched for alice is appended to
    /// alice's feed, never to bob's after a login, and not at all after a logout.
    ///
    /// ```swift
    /// let session = cache.session
    /// let page = try await api.posts()
    /// try cache.updateItems(Post.self, forKey: "top", for: session) { $0.append(contentsOf: page) }
    /// ```
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - session: the user the update belongs to, taken from ``session`` when the work began.
    ///   - transform: changes the items; not called when the update is dropped.
    /// - Returns: the items as cached; `nil` when the update was dropped.
    /// - Throws: what ``updateItems(_:forKey:_:)`` throws.
    @discardableResult
    public func updateItems<Model: CacheableModel>(
        _ type: Model.Type, forKey key: String? = nil, for session: CacheSession, _ transform: (inout [Model]) throws -> Void
    ) throws -> [Model]? {
        try update(Model.self, forKey: key, session: session, transform)
    }

    /// How often an update runs `transform` again after the collection changed under it.
    static let maximumUpdateAttempts = 1_000

    /// The read-modify-write of both `updateItems`: optimistic, with no lock held while
    /// `transform` runs. Writes of the collection are counted from before the read, and the
    /// archive file is noted; the result is written through, under the cross-process lock,
    /// only if no write came between in this process and the archive is still that file (no
    /// other process or instance replaced it), checked in the same step that writes it;
    /// otherwise the update starts over.
    private func update<Model: CacheableModel>(
        _ type: Model.Type, forKey key: String?, session given: CacheSession?, _ transform: (inout [Model]) throws -> Void
    ) throws -> [Model]? {
        try update(Model.self, forKey: key, session: given) { items, _ in try transform(&items) }?.items
    }

    /// ``update(_:forKey:session:_:)`` whose `transform` also sees, and may change, the cursor
    /// of the collection's next page (`nil`: none).
    ///
    /// An update changes the confirmed items: the pending changes of ``enqueue(_:)`` are not in
    /// what `transform` sees, and stay applied on top of what it makes.
    ///
    /// - Parameter onlyIfCached: whether a collection that is not cached stays so (the update is
    ///   dropped) instead of being made from no items.
    /// - Returns: the items as cached, with their cached date; `nil` when the update was dropped.
    func update<Model: CacheableModel>(
        _ type: Model.Type, forKey key: String?, session given: CacheSession?, onlyIfCached: Bool = false,
        _ transform: (inout [Model], _ nextPageCursor: inout String?) throws -> Void
    ) throws -> (items: [Model], cachedDate: Date)? {
        let info = typeInfo(Model.self)
        let id = ObjectIdentifier(Model.self)
        let updateKey = UpdateKey(type: id, key: key)
        guard !Self.updatesUnderWay.get().contains(updateKey) else {
            throw AppCacheError(
                code: .nestedUpdate,
                message: "updateItems was called from inside an updateItems of the same collection; the inner update would undo the outer one, so it was refused.",
                cacheName: info.cacheName, key: key)
        }
        return try Self.updatesUnderWay.withValue(Self.updatesUnderWay.get().union([updateKey])) { () throws -> (items: [Model], cachedDate: Date)? in
            // Read and write for one user: a switch during the read means reading again (or,
            // for a given session, dropping the update).
            var switchesSeen = 0
            var conflicts: UInt32 = 0
            for _ in 0..<Self.maximumUpdateAttempts {
                let (current, switches, slot) = state.withLock { ($0.session, $0.sessions.switches, $0.userSlot) }
                if let given, given != current { return nil }
                let memoryKey = MemoryKey(type: id, key: key, user: slot)
                let writesBefore = state.withLock { $0.beginUpdate(memoryKey) }
                defer { state.withLock { $0.endUpdate(memoryKey) } }
                // The archive as it is before the read: the result is written only if no one,
                // in any process, has replaced it since.
                let archiveKey = ArchiveKey(info.cacheNamePart, user: current.user, key: key)
                let path = disk.store.layout.archivePath(for: archiveKey)
                let archive = ArchiveExpectation(identity: disk.store.facts(of: path)?.identity)
                // The items read must be that archive's: a clean copy in memory of another file
                // (another process replaced it, and the change count it moves at the end of
                // its batch does not say so yet) would be changed and written over the other
                // process's items. It leaves memory; the read takes the disk's.
                state.withLock { state in
                    guard let owner = state.memory.owner(of: archiveKey), let entry = state.memory.peek(owner),
                        !entry.isDirty, entry.diskIdentity != archive.identity
                    else { return }
                    state.memory.remove(archiveKey)
                }
                let cached = try readForLoad(Model.self, key: key, switches: switches, applyingPending: false)
                if cached == nil, state.withLock({ $0.sessions.switches }) != switches {
                    switchesSeen += 1
                    if given != nil || switchesSeen >= 3 { return nil }
                    continue
                }
                if cached == nil && onlyIfCached { return nil }
                var items = cached?.loaded.items ?? []
                var cursor = cached?.nextPageCursor
                try transform(&items, &cursor)
                let kept = cached.map { (cachedDate: $0.loaded.cachedDate, expiry: $0.expiry) }
                do {
                    let stored = try save(
                        items, forKey: key, expiresAfter: nil, pinned: cached?.isPinned ?? false,
                        validators: cached?.validators, nextPageCursor: cursor, session: current, kept: kept,
                        onlyIf: { state in state.updates[memoryKey]?.writes == writesBefore }, ifArchiveStill: archive)
                    return stored.map { (items, $0) }
                } catch is WriteConflict {
                    // Another writer won the race: wait a random moment, longer after each
                    // loss, so that many updaters of one collection take turns rather than
                    // keep undoing each other.
                    conflicts += 1
                    usleep(UInt32.random(in: 0...min(4_000, 25 << min(conflicts, 8))))
                    continue
                }
            }
            throw AppCacheError(
                code: .nestedUpdate,
                message: "The collection kept changing while updateItems ran; the update was given up after \(Self.maximumUpdateAttempts) attempts.",
                cacheName: info.cacheName, key: key)
        }
    }

    /// The collections whose `updateItems` is running on this thread or task: a nested update
    /// of one of them is refused rather than left to undo the outer one.
    static let updatesUnderWay = TaskLocal<Set<UpdateKey>>(wrappedValue: [])

    /// Which collection an update works on.
    struct UpdateKey: Hashable, Sendable {
        var type: ObjectIdentifier
        var key: String?
    }
}
