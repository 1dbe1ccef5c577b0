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
/// Two layers answer as one. In memory, each collection is held encoded and decoded, in exact
/// least-recently-used order within a byte and an entry limit; `cacheItems` stores there and
/// returns (write-back), and a hit costs a dictionary lookup. On disk, each collection is one
/// archive file: a checksummed header, then the encoded items, written to a temporary file and
/// renamed into place, with the moment the items were cached as its modification date. Dirty
/// collections reach disk after ``Configuration/writeBackDelay``, when they leave memory, on
/// ``flush()``, memory warnings, backgrounding, termination and `deinit`. A file that is damaged,
/// foreign or written for another `schemaVersion` is a miss (the file is removed and the
/// configuration's `diagnostics` hook is told), never a crash and never garbage.
///
/// `AppCache` is `Sendable`: every method may be called from any thread or task at once. One
/// small lock guards the in-memory state and is never held while encoding, decoding or touching
/// files; writes of archives are ordered by a second lock that reads never take.
public final class AppCache: Sendable {
    /// The configuration the cache was opened with.
    public let configuration: Configuration

    let store: DiskStore
    let state: Locked<State>
    /// Held while archives are written or removed, so those writes happen in the order their
    /// contents were cached; guards the disk index. Never taken by memory hits, nor inside
    /// `state`. Use ``withDiskWrites(_:)``.
    let diskWrites = Locked(DiskBook())
    /// Disk index changes made without `diskWrites` (reads), for its next batch.
    let indexRecordsOutsideWrites: Locked<[DiskIndex.Record]>
    let writeBackQueue = DispatchQueue(label: "AppCache.writeBack", qos: .utility)
    let lifecycleObservers = Locked<[any NSObjectProtocol]>([])

    struct State {
        var user: String?
        /// `user`, interned: memory keys hold this number rather than the string.
        var userSlot: Int
        var userSlots: [String?: Int]
        var memory: MemoryStore
        var types: [ObjectIdentifier: TypeInfo] = [:]
        var writeBackScheduled = false

        mutating func switchUser(to user: String?) {
            self.user = user
            if let slot = userSlots[user] {
                userSlot = slot
            } else {
                userSlot = userSlots.count
                userSlots[user] = userSlot
            }
        }
    }

    /// What the cache needs to know of a model type, resolved once: `cacheName` may be slow
    /// (the default interpolates the type's name).
    struct TypeInfo {
        var cacheName: String
        var threshold: Duration
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
        precondition(configuration.memoryByteLimit >= 0 && configuration.memoryEntryLimit >= 0, "AppCache memory limits must not be negative")
        self.configuration = configuration
        let diagnostics = configuration.diagnostics
        let outsideRecords = Locked<[DiskIndex.Record]>([])
        indexRecordsOutsideWrites = outsideRecords
        let layout = CacheLayout(rootDirectory: configuration.rootDirectory, schemaVersion: configuration.schemaVersion)
        store = DiskStore(
            layout: layout, fileSystem: FileSystem(faults: configuration.faults),
            report: { problem in diagnostics?(problem) },
            onDiscard: { path in
                if let relative = layout.relativePath(ofAbsolute: path) { outsideRecords.withLock { $0.append(.remove(path: relative)) } }
            })
        state = Locked(State(
            user: configuration.user, userSlot: 0, userSlots: [configuration.user: 0],
            memory: MemoryStore(
                byteLimit: configuration.memoryByteLimit, entryLimit: configuration.memoryEntryLimit,
                tracksReads: configuration.diskByteLimit != nil)))
        try store.openVersion()
        if configuration.flushesAtExit {
            ExitFlush.register(self)
        }
        if configuration.observesApplicationLifecycle {
            observeApplicationLifecycle()
        }
        if configuration.diskByteLimit != nil {
            // Load (or rebuild) the disk index in the background, not on the caller's thread.
            writeBackQueue.async { [weak self] in
                self?.withDiskWrites { book in self?.ensureIndex(&book) }
            }
        }
    }

    deinit {
        ExitFlush.unregister(ObjectIdentifier(self))
        for observer in lifecycleObservers.withLock({ $0 }) {
            NotificationCenter.default.removeObserver(observer)
        }
        reportAll(writeDirtyEntries())
    }

    /// The user whose collections the cache reads and writes; `nil` for the shared space.
    public var user: String? {
        state.withLock { $0.user }
    }

    /// Caches `items` as the collection of `Model` under `key`, replacing what was there.
    ///
    /// The items are encoded once and kept in memory with the moment of the call, which
    /// becomes the collection's cached date and, once written, its archive's modification
    /// date. When this pushes memory over a limit, the least recently used collections leave
    /// it, written to disk first if they are dirty (on this thread, without holding the lock).
    ///
    /// - Parameters:
    ///   - items: the collection to cache; an empty one is cached as empty, not removed.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - timeToLive: how long the items may be returned at all, from now; `nil` (the default)
    ///     for no limit. Unlike staleness this is a hard limit: once it has passed, reads miss
    ///     and the collection is removed where it is found, unless it is pinned. It is stored
    ///     in the archive header, not in a file date.
    /// - Throws: `encodingFailed` when the items cannot be encoded. With a `writeBackDelay` of
    ///   `.zero`, also `permissionDenied`, `noSpace`, `notADirectory` or `ioFailure` when the
    ///   archive cannot be written. In every case what was cached before stays as it was.
    ///   (With write-back, a failed write is reported to `diagnostics` and retried by the next
    ///   flush; the items stay in memory.)
    public func cacheItems<Model: CacheableModel>(
        _ items: [Model], forKey key: String? = nil, expiresAfter timeToLive: Duration? = nil
    ) throws {
        let info = typeInfo(Model.self)
        let codec = PayloadCodec.json
        let payload: Data
        do {
            payload = try codec.encode(items)
        } catch {
            throw AppCacheError(
                code: .encodingFailed,
                message: "The items could not be encoded; nothing was cached.",
                cacheName: info.cacheName, key: key, underlyingError: error)
        }
        let now = configuration.now()
        let record = ArchiveRecord(
            payload: payload, codec: codec.rawValue, schemaVersion: Int64(Model.schemaVersion),
            cachedDate: now, expiry: timeToLive.map { now.addingTimeInterval(Self.seconds($0)) })
        let type = ObjectIdentifier(Model.self)
        let writeThrough = configuration.writeBackDelay == .zero

        func entry(for user: String?) -> MemoryEntry {
            MemoryEntry(
                archiveKey: ArchiveKey(user: user, cacheName: info.cacheName, key: key), record: record,
                items: ItemsBox(items), isDirty: !writeThrough)
        }

        let spills: [MemoryKey]
        if writeThrough {
            spills = try withDiskWrites { book in
                let (user, slot) = state.withLock { ($0.user, $0.userSlot) }
                let entry = entry(for: user)
                try writeArchive(record, forKey: entry.archiveKey, &book)
                return state.withLock { $0.memory.store(entry, for: MemoryKey(type: type, key: key, user: slot)) }
            }
        } else {
            spills = state.withLock { state in
                state.memory.store(entry(for: state.user), for: MemoryKey(type: type, key: key, user: state.userSlot))
            }
            scheduleWriteBack()
        }
        reportAll(spill(spills))
    }

    /// The cached collection of `Model` under `key`, or `nil` when there is none.
    ///
    /// Stale items are returned too; ask ``isStale(_:forKey:)`` or use
    /// ``cachedCollection(_:forKey:)`` to get both in one read. From memory this costs a
    /// dictionary lookup; from disk, a read and a decode, after which the collection is in
    /// memory too.
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when an archive exists but cannot be read.
    ///   A damaged or outdated archive is not an error but a miss.
    @inlinable
    public func getCachedItems<Model: CacheableModel>(_ type: Model.Type, forKey key: String? = nil) throws -> [Model]? {
        // The hit path is inlined into the caller and specialised for `Model`: a lock, a hash
        // lookup and an unchecked cast, with no generic metadata lookups.
        if let hit = memoryHit(ObjectIdentifier(Model.self), key), !hit.expires || isLive(hit) {
            return unsafeDowncast(hit.items, to: ItemsBox<Model>.self).items
        }
        return try loadAfterMiss(Model.self, key: key)?.items
    }

    /// The cached collection of `Model` under `key` with its cached date, age and staleness,
    /// all from one read; `nil` when there is none.
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when an archive exists but cannot be read.
    public func cachedCollection<Model: CacheableModel>(
        _ type: Model.Type, forKey key: String? = nil
    ) throws -> CachedCollection<Model>? {
        let items: [Model]
        let cachedDate: Date
        if let hit = memoryHit(ObjectIdentifier(Model.self), key), !hit.expires || isLive(hit) {
            items = unsafeDowncast(hit.items, to: ItemsBox<Model>.self).items
            cachedDate = hit.cachedDate
        } else {
            guard let loaded = try loadAfterMiss(Model.self, key: key) else { return nil }
            (items, cachedDate) = loaded
        }
        let age = Self.age(of: cachedDate, now: configuration.now())
        return CachedCollection(
            items: items, cachedDate: cachedDate, age: age,
            isStale: Self.isStale(age: age, threshold: typeInfo(Model.self).threshold))
    }

    /// Whether the collection of `Model` under `key` is missing or older than the type's
    /// staleness threshold.
    ///
    /// A collection dated further in the future than the threshold (the clock was moved back)
    /// counts as stale too. Reads the cached date only (from memory, or the archive's
    /// modification date), never the items.
    public func isStale<Model: CacheableModel>(_ type: Model.Type, forKey key: String? = nil) -> Bool {
        guard let date = cachedDate(of: type, forKey: key) else { return true }
        return Self.isStale(age: Self.age(of: date, now: configuration.now()), threshold: typeInfo(Model.self).threshold)
    }

    /// When the collection of `Model` under `key` was cached; `nil` when there is none (or it
    /// has expired).
    ///
    /// Reads the date only (from memory, or the archive's header and modification date), never
    /// the items.
    public func cachedDate<Model: CacheableModel>(of type: Model.Type, forKey key: String? = nil) -> Date? {
        let info = typeInfo(Model.self)
        let now = configuration.now()
        let (found, user) = state.withLock { state -> ((date: Date, isExpired: Bool)?, String?) in
            let archiveKey = ArchiveKey(user: state.user, cacheName: info.cacheName, key: key)
            let entry = state.memory.owner(of: archiveKey).flatMap { state.memory.peek($0) }
            return (entry.map { ($0.cachedDate, $0.record.isExpired(at: now)) }, state.user)
        }
        if let found { return found.isExpired ? nil : found.date }
        guard let archive = store.summary(forKey: ArchiveKey(user: user, cacheName: info.cacheName, key: key)) else {
            return nil
        }
        return archive.record.isExpired(at: now) ? nil : archive.record.cachedDate
    }

    /// Removes the collection of `Model` under `key` for the current user, from memory and
    /// disk. Removing a missing collection is not an error.
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when the archive cannot be removed (the
    ///   memory copy is gone, the archive stays).
    public func removeItems<Model: CacheableModel>(_ type: Model.Type, forKey key: String? = nil) throws {
        let info = typeInfo(Model.self)
        try withDiskWrites { book in
            let archiveKey = state.withLock { state in
                let archiveKey = ArchiveKey(user: state.user, cacheName: info.cacheName, key: key)
                state.memory.remove(archiveKey)
                return archiveKey
            }
            try deleteArchive(forKey: archiveKey, &book)
        }
    }

    /// Removes every collection of the current user (of every type and key), from memory and
    /// disk.
    ///
    /// - Parameter includingPinned: whether pinned collections go too (the default); with
    ///   `false` they stay, in memory and on disk.
    /// - Throws: `permissionDenied` or `ioFailure` when the archives cannot be removed; with
    ///   `includingPinned` the user's directory leaves view in one step, so then nothing changed.
    public func removeAll(includingPinned: Bool = true) throws {
        guard includingPinned else {
            try removeArchives(ofAllUsers: false) { !$0.isPinned }
            return
        }
        try wipe { $0.user }
    }

    /// Removes every expired collection that is not pinned, of every user, from memory and
    /// disk, and the temporary files of writes a crash cut short. Reads never return expired
    /// collections anyway; this reclaims their space.
    ///
    /// - Complexity: reads the header of every archive of the current version.
    /// - Throws: `permissionDenied` or `ioFailure` when the cache cannot be listed or an
    ///   archive cannot be removed.
    public func removeExpired() throws {
        let now = configuration.now()
        try removeArchives(ofAllUsers: true) { $0.isExpired(at: now) }
        // The same visit clears what writes cut short by a crash left behind.
        withDiskWrites { _ in _ = store.sweepTemporaryFiles() }
    }

    /// Removes all of `user`'s data, from memory and disk: the logout wipe. `nil` is the shared
    /// space. The current user stays the current user.
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when the user's directory cannot be moved
    ///   out of view; their archives are then unchanged.
    public func removeUser(_ user: String?) throws {
        try wipe { _ in user }
    }

    /// Removes the data of every user and of the shared space, from memory and disk.
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when the version's directory cannot be
    ///   moved out of view; the archives are then unchanged.
    public func removeAllUsers() throws {
        let leftover = try withDiskWrites { book in
            state.withLock { state in
                for slot in state.userSlots.values { state.memory.removeAll(user: slot) }
            }
            let leftover = try store.removeAllUsers()
            book.records.append(.removeAll(prefix: ""))
            return leftover
        }
        reportAll(leftover.map { [$0] } ?? [])
    }

    /// Pins the collection of `Model` under `key`: it ignores its time to live until unpinned.
    ///
    /// The pin is kept in the archive's header, so it survives relaunches.
    ///
    /// - Throws: `notCached` when there is no such collection; `permissionDenied`, `noSpace`
    ///   or `ioFailure` when the archive cannot be rewritten.
    public func pin<Model: CacheableModel>(_ type: Model.Type, forKey key: String? = nil) throws {
        try setPinned(true, Model.self, key: key)
    }

    /// Unpins the collection of `Model` under `key`: its time to live applies again.
    ///
    /// - Throws: `notCached` when there is no such collection; `permissionDenied`, `noSpace`
    ///   or `ioFailure` when the archive cannot be rewritten.
    public func unpin<Model: CacheableModel>(_ type: Model.Type, forKey key: String? = nil) throws {
        try setPinned(false, Model.self, key: key)
    }

    /// The collections of the current user, from memory and disk, without decoding any items.
    ///
    /// Archives that cannot be read are left out (a read of them reports why).
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when the cache cannot be listed.
    public func entries() throws -> [CacheEntry] {
        let (user, slot) = state.withLock { ($0.user, $0.userSlot) }
        return try listEntries(memoryUser: slot, paths: store.archivePaths(user: user))
    }

    /// The collections of every user, from memory and disk, without decoding any items.
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when the cache cannot be listed.
    public func entriesOfAllUsers() throws -> [CacheEntry] {
        try listEntries(memoryUser: nil, paths: store.archivePathsOfAllUsers())
    }

    /// Makes `user` the current user: from now on reads and writes see only that user's
    /// collections; `nil` signs out to the shared space.
    ///
    /// The previous user's dirty collections are written to their own directory and all of
    /// their collections leave memory, so nothing of theirs is served, or kept in memory, for
    /// the next user. Their data stays on disk.
    ///
    /// - Throws: the first write error (`noSpace`, `permissionDenied`, ...) when some of the
    ///   previous user's collections could not be written. The switch has happened all the
    ///   same; those collections stay in memory, invisible to the new user, until a flush
    ///   writes them.
    public func switchUser(to user: String?) throws {
        let previous = state.withLock { state -> Int? in
            guard state.user != user else { return nil }
            let previous = state.userSlot
            state.switchUser(to: user)
            return previous
        }
        guard let previous else { return }
        let keys = state.withLock { $0.memory.evictAll(user: previous) }
        let failures = spill(keys)
        if let first = failures.first {
            throw AppCacheError(
                code: first.code,
                message: "Switched user, but \(failures.count) of the previous user's collections could not be written; they stay in memory until the next flush.",
                cacheName: first.cacheName, key: first.key, path: first.path, underlyingError: first)
        }
    }

    // MARK: - Internal

    /// Removes every collection of one user, from memory and disk; `resolveUser` names the user
    /// inside the lock (the current one, or a given one).
    private func wipe(_ resolveUser: (State) -> String?) throws {
        let leftover = try withDiskWrites { book in
            let user = state.withLock { state in
                let user = resolveUser(state)
                if let slot = state.userSlots[user] { state.memory.removeAll(user: slot) }
                return user
            }
            let leftover = try store.removeAll(user: user)
            book.records.append(.removeAll(prefix: CacheLayout.userDirectoryName(user) + "/"))
            return leftover
        }
        reportAll(leftover.map { [$0] } ?? [])
    }

    private func setPinned<Model: CacheableModel>(_ pinned: Bool, _ type: Model.Type, key: String?) throws {
        let info = typeInfo(Model.self)
        let failure = try withDiskWrites { book -> AppCacheError? in
            let (archiveKey, entry) = state.withLock { state -> (ArchiveKey, (key: MemoryKey, entry: MemoryEntry)?) in
                let archiveKey = ArchiveKey(user: state.user, cacheName: info.cacheName, key: key)
                guard state.memory.setPinned(pinned, for: archiveKey), let owner = state.memory.owner(of: archiveKey),
                    let entry = state.memory.peek(owner)
                else { return (archiveKey, nil) }
                return (archiveKey, (owner, entry))
            }
            if let entry {
                // Write the entry now, pin and all, as a flush would.
                try writeArchive(entry.entry.record, forKey: archiveKey, &book)
                state.withLock { $0.memory.didWrite(entry.key, generation: entry.entry.generation, spilled: false) }
                return nil
            }
            guard var record = try store.value(forKey: archiveKey, schemaVersion: Int64(Model.schemaVersion)),
                !record.isExpired(at: configuration.now())
            else {
                return AppCacheError(
                    code: .notCached, message: "There is no cached collection to \(pinned ? "pin" : "unpin").",
                    cacheName: info.cacheName, key: key)
            }
            record.isPinned = pinned
            try writeArchive(record, forKey: archiveKey, &book)
            return nil
        }
        if let failure { throw failure }
    }

    /// Removes the archives (of the current user, or all users) whose records `shouldRemove`
    /// picks, and the memory entries it picks.
    private func removeArchives(ofAllUsers: Bool, where shouldRemove: (ArchiveRecord) -> Bool) throws {
        try withDiskWrites { book in
            let (user, doomed) = state.withLock { state in
                let doomed = Set(state.memory.entries(user: ofAllUsers ? nil : state.userSlot)
                    .filter { shouldRemove($0.record) }.map(\.archiveKey))
                for archiveKey in doomed { state.memory.remove(archiveKey) }
                return (state.user, doomed)
            }
            let paths = ofAllUsers ? try store.archivePathsOfAllUsers() : try store.archivePaths(user: user)
            for path in paths {
                guard let summary = store.summary(atPath: path) else { continue }
                let archiveKey = ArchiveKey(user: summary.header.user, cacheName: summary.header.cacheName, key: summary.header.key)
                // A collection memory holds is judged by memory, which is newer.
                let inMemory = state.withLock { $0.memory.owner(of: archiveKey) != nil }
                if !inMemory && shouldRemove(summary.record) || doomed.contains(archiveKey) {
                    try store.removeFile(atPath: path)
                    if let relative = store.layout.relativePath(ofAbsolute: path) { book.records.append(.remove(path: relative)) }
                }
            }
        }
    }

    private func listEntries(memoryUser: Int?, paths: [String]) -> [CacheEntry] {
        let now = configuration.now()
        let (memoryEntries, thresholds) = state.withLock { state in
            (state.memory.entries(user: memoryUser), Dictionary(state.types.values.map { ($0.cacheName, $0.threshold) }, uniquingKeysWith: { first, _ in first }))
        }
        func threshold(_ cacheName: String) -> Duration {
            configuration.stalenessThresholds[cacheName] ?? thresholds[cacheName] ?? configuration.defaultStalenessThreshold
        }
        var listed: [ArchiveKey: CacheEntry] = [:]
        for path in paths {
            guard let summary = store.summary(atPath: path) else { continue }
            let header = summary.header
            let record = summary.record
            guard !record.isExpired(at: now) else { continue }
            listed[ArchiveKey(user: header.user, cacheName: header.cacheName, key: header.key)] = CacheEntry(
                user: header.user, cacheName: header.cacheName, key: header.key, bytes: summary.size,
                cachedDate: summary.cachedDate, expiry: header.expiry, isPinned: header.isPinned,
                modelSchemaVersion: Int(header.schemaVersion),
                isStale: Self.isStale(age: Self.age(of: summary.cachedDate, now: now), threshold: threshold(header.cacheName)),
                isInMemory: false, isOnDisk: true, isDirty: false)
        }
        for entry in memoryEntries where !entry.record.isExpired(at: now) {
            let archiveKey = entry.archiveKey
            listed[archiveKey] = CacheEntry(
                user: archiveKey.user, cacheName: archiveKey.cacheName, key: archiveKey.key,
                bytes: listed[archiveKey]?.bytes ?? entry.cost, cachedDate: entry.cachedDate, expiry: entry.expiry,
                isPinned: entry.isPinned, modelSchemaVersion: Int(entry.record.schemaVersion),
                isStale: Self.isStale(age: Self.age(of: entry.cachedDate, now: now), threshold: threshold(archiveKey.cacheName)),
                isInMemory: true, isOnDisk: listed[archiveKey] != nil, isDirty: entry.isDirty)
        }
        return listed.values.sorted { ($0.user ?? "", $0.cacheName, $0.key ?? "") < ($1.user ?? "", $1.cacheName, $1.key ?? "") }
    }

    /// The memory layer's answer for a model type and key of the current user, counting a hit
    /// or a miss.
    @usableFromInline
    func memoryHit(_ type: ObjectIdentifier, _ key: String?) -> MemoryHit? {
        state.withLock { state in
            state.memory.hit(MemoryKey(type: type, key: key, user: state.userSlot))
        }
    }

    /// The slow path of a read that memory did not answer: look once more (another thread may
    /// have stored it meanwhile), then read the archive.
    @usableFromInline
    func loadAfterMiss<Model: CacheableModel>(_ type: Model.Type, key: String?) throws -> (items: [Model], cachedDate: Date)? {
        let id = ObjectIdentifier(Model.self)
        let now = configuration.now()
        let info = typeInfo(Model.self)
        let lookup = state.withLock { state -> Result<MemoryHit, MissContext> in
            if let hit = state.memory.peekHit(MemoryKey(type: id, key: key, user: state.userSlot)) {
                guard hit.expires, hit.expiry <= now else { return .success(hit) }
                // Expired: it goes from memory here, and from disk below.
                state.memory.remove(ArchiveKey(user: state.user, cacheName: info.cacheName, key: key))
                return .failure(MissContext(user: state.user, slot: state.userSlot, mutations: state.memory.mutations, expired: true))
            }
            return .failure(MissContext(user: state.user, slot: state.userSlot, mutations: state.memory.mutations, expired: false))
        }
        switch lookup {
        case .success(let hit):
            return (unsafeDowncast(hit.items, to: ItemsBox<Model>.self).items, hit.cachedDate)
        case .failure(let context) where context.expired:
            try withDiskWrites { book in
                try deleteArchive(forKey: ArchiveKey(user: context.user, cacheName: info.cacheName, key: key), &book)
            }
            return nil
        case .failure(let context):
            return try load(Model.self, key: key, user: context.user, slot: context.slot, mutations: context.mutations)
        }
    }

    /// Whether a memory hit with an expiry may still be returned.
    @usableFromInline
    func isLive(_ hit: MemoryHit) -> Bool {
        !hit.expires || hit.expiry > configuration.now()
    }

    /// Who and when a read missed memory.
    struct MissContext: Error {
        var user: String?
        var slot: Int
        var mutations: UInt64
        /// Memory held the collection, expired, and has dropped it.
        var expired: Bool
    }

    func typeInfo<Model: CacheableModel>(_ type: Model.Type) -> TypeInfo {
        let id = ObjectIdentifier(Model.self)
        if let info = state.withLock({ $0.types[id] }) { return info }
        // Resolved outside the lock: `cacheName` is the app's code.
        let cacheName = Model.cacheName
        precondition(!cacheName.isEmpty, "CacheableModel.cacheName of \(Model.self) must not be empty")
        let info = TypeInfo(cacheName: cacheName, threshold: configuration.stalenessThreshold(for: Model.self))
        state.withLock { $0.types[id] = info }
        return info
    }

    /// Reads a collection memory did not have from disk and keeps it in memory, clean.
    private func load<Model: CacheableModel>(
        _ type: Model.Type, key: String?, user: String?, slot: Int, mutations: UInt64
    ) throws -> (items: [Model], cachedDate: Date)? {
        let info = typeInfo(Model.self)
        let archiveKey = ArchiveKey(user: user, cacheName: info.cacheName, key: key)
        // Another model type sharing the cache name may hold this archive in memory: write it
        // out and let the disk rules (schema version, decoding) judge it, as they would
        // without memory.
        let conflict = state.withLock { state -> [MemoryKey]? in
            guard let owner = state.memory.owner(of: archiveKey), owner.type != ObjectIdentifier(Model.self) else { return nil }
            return [state.memory.evict(owner)].compactMap { $0 }
        }
        if let conflict {
            let failures = spill(conflict)
            guard failures.isEmpty else {
                reportAll(failures)
                return nil
            }
        }
        let mutationsBeforeRead = conflict == nil ? mutations : state.withLock { $0.memory.mutations }
        guard let record = try store.value(forKey: archiveKey, schemaVersion: Int64(Model.schemaVersion)) else {
            return nil
        }
        if record.isExpired(at: configuration.now()) {
            try withDiskWrites { book in
                // Unless a newer collection was stored meanwhile, the expired archive goes.
                if state.withLock({ $0.memory.owner(of: archiveKey) }) == nil {
                    try deleteArchive(forKey: archiveKey, &book)
                }
            }
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
        recordOutsideWrites(.touch(path: store.layout.relativePath(for: archiveKey)))
        let entry = MemoryEntry(archiveKey: archiveKey, record: record, items: ItemsBox(items), isDirty: false)
        let spills = state.withLock {
            $0.memory.storeLoaded(entry, for: MemoryKey(type: ObjectIdentifier(Model.self), key: key, user: slot), ifUnchangedSince: mutationsBeforeRead)
        }
        reportAll(spill(spills))
        return (items, record.cachedDate)
    }

    func reportAll(_ problems: [AppCacheError]) {
        for problem in problems {
            configuration.diagnostics?(problem)
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func age(of cachedDate: Date, now: Date) -> Duration {
        .seconds(now.timeIntervalSince(cachedDate))
    }

    static func isStale(age: Duration, threshold: Duration) -> Bool {
        age > threshold || age < .zero - threshold
    }
}
