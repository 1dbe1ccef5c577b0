import Foundation

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
/// Two layers answer as one. In memory, each collection is held decoded (and encoded too,
/// until written), in exact least-recently-used order within a byte and an entry limit;
/// `cacheItems` stores there and returns (write-back), and a hit costs a dictionary lookup.
/// On disk, each collection is one archive file: a checksummed header, then the encoded
/// items, written to a temporary file and renamed into place, with the moment the items were
/// cached as its modification date. Dirty collections reach disk, on the cache's own thread,
/// after ``Configuration/writeBackDelay`` and when they leave memory; on ``flush()``,
/// backgrounding, termination, a normal exit and `deinit`, before those return. A file that
/// is damaged, foreign, written for another `schemaVersion`, or not a regular file is
/// a miss (the file is removed and the configuration's `diagnostics` hook is told), never a
/// crash, a hang or garbage.
///
/// Several processes (an app and its extensions in one App Group container) and several
/// instances may share one root: their writes take turns through a lock file, and a collection
/// one of them writes is what the others read next, even if they held an older one in memory.
///
/// `AppCache` is `Sendable`: every method may be called from any thread or task at once. One
/// small lock guards the in-memory state and is never held while encoding, decoding or touching
/// files; writes of archives are ordered by a second lock that reads never take.
public final class AppCache: Sendable {
    /// The configuration the cache was opened with.
    public let configuration: Configuration

    /// The disk layer: reads through `disk.store`, every change through a batch.
    let disk: DiskWriter
    /// Problems found while a lock may be held, delivered to `diagnostics` after unlocking.
    let reports: ProblemReports
    let state: Locked<State>
    /// Wakes loads that wait for the network (``RetryPolicy``).
    let network = NetworkSignal()
    /// The app-wide events watches refetch on.
    let refreshTriggers = RefreshTriggerHub()
    let writeBackQueue = DispatchQueue(label: "AppCache.writeBack", qos: .utility)
    let lifecycleSubscriptions = Locked(LifecycleSubscriptions())
    /// The streams of ``updates(of:forKey:)``, told of every change.
    let observers: ChangeObservers
    /// Wakes the observers when another process or instance changes the disk; started by the
    /// first `updates` stream.
    let watcher: ChangeWatcher
    /// The fetches of ``load(_:forKey:policy:retry:fetch:)`` under way, shared by equal loads.
    let flights = FlightTable()
    /// Wakes the sender of queued changes (``enqueue(_:)``).
    let outboxSignal = ChangeSignal()

    struct State {
        /// The current user and the sessions bound to users.
        var sessions: UserSessions
        var memory: MemoryStore
        var types: [ObjectIdentifier: TypeInfo] = [:]
        /// The types whose collections the binary codec left to JSON, told to `diagnostics`.
        var typesStoredAsJSON: Set<ObjectIdentifier> = []
        /// The type looked up last: reads of one type in a row find it without hashing.
        var lastType: (id: ObjectIdentifier, info: TypeInfo)?
        /// When the write-back timer fires next, in uptime nanoseconds (`nil`: not scheduled).
        var writeBackDue: UInt64?
        /// The invalidations as read when the disk's change count was `invalidationsChange`.
        var invalidations = InvalidationLog()
        var invalidationsChange: UInt64?
        /// Set once another app schema version removed this one's directory: every write throws
        /// it from then on (see ``AppCache/noteVersionRemoved(_:)``).
        var versionRemoval: AppCacheError?
        var versionRemovalReported = false
        /// Whether a write of detached (spilled) entries is queued.
        var spillScheduled = false
        /// Removals whose archives are still to leave the disk.
        var dueWipes = DueWipes()
        /// Trash directories a batch's wipes made, deleted when it ends.
        var trashesToDelete: [String] = []
        /// The signed-in user still to be recorded in the root for following extensions
        /// (`.some(nil)`: signed out); `nil` when nothing is to be recorded.
        var signedInUserDue: String??
        /// The coordinator's change count when memory was last known to agree with the disk.
        var syncedChange: UInt64
        /// The current user's queue of changes (``AppCache/enqueue(_:)``) as last read.
        var outbox = OutboxQueue()
        /// The kinds of queued changes this cache knows (registered or enqueued), by name.
        var mutationKinds: [String: MutationKind] = [:]
        /// The sender of queued changes.
        var sending = OutboxSending()
        /// The collections an `updateItems` is working on: how many updates, and how many
        /// writes each has had since (an update stores its result only if none came between).
        var updates: [MemoryKey: (writes: UInt64, updaters: Int)] = [:]

        /// Starts following writes of `key` for an update; returns the count to compare with.
        mutating func beginUpdate(_ key: MemoryKey) -> UInt64 {
            updates[key, default: (0, 0)].updaters += 1
            return updates[key]!.writes
        }

        /// Stops following writes of `key` for one update.
        mutating func endUpdate(_ key: MemoryKey) {
            guard let counters = updates[key] else { return }
            if counters.updaters <= 1 { updates[key] = nil } else { updates[key]!.updaters -= 1 }
        }

        /// Counts a write of `key` for the updates working on it.
        mutating func noteWrite(_ key: MemoryKey) {
            if !updates.isEmpty, updates[key] != nil { updates[key]!.writes &+= 1 }
        }

        /// The current user; `nil` for the shared space.
        var user: String? { sessions.user }
        /// The current user's number in memory keys.
        var userSlot: Int { sessions.slot }
        /// The current user, as a session for writes bound to them.
        var session: CacheSession { sessions.current }

        /// The root's shared record of removals (``PendingRemovals``), once the disk is open.
        var removals: PendingRemovals?
        /// How many removals of the shared record memory has taken into account.
        var seenRemovals: UInt64 = 0
        /// The numbers of this cache's own removals in the shared record (it dropped their
        /// users' entries itself, and what it holds of them since is newer).
        var ownRemovals: Set<UInt64> = []

        /// Takes note of the coordinator's change count: a count someone else moved on means
        /// every entry must be checked against its archive before it is served again, and the
        /// entries of users another process removed go, dirty ones too.
        mutating func observe(change: UInt64) {
            guard change != syncedChange else { return }
            memory.invalidateAll()
            syncedChange = change
            forgetRemovedUsers()
        }

        /// Drops what memory holds of users whose data another process removed since this cache
        /// last looked: dirty entries written back after the removal would bring removed data
        /// back. Removals it can no longer tell apart (more than the shared record holds) drop
        /// every user's.
        private mutating func forgetRemovedUsers() {
            guard let removals else { return }
            let recorded = removals.recordedCount
            guard recorded != seenRemovals else { return }
            defer {
                seenRemovals = recorded
                ownRemovals = ownRemovals.filter { $0 >= recorded }
            }
            guard let entries = removals.recorded(since: seenRemovals) else {
                memory.removeEverything()
                return
            }
            var hashes: Set<UInt64> = []
            for (number, entry) in zip(seenRemovals..., entries) where !ownRemovals.contains(number) {
                switch entry {
                case .directory(let hash): hashes.insert(hash)
                case .allUsers, .unknown:
                    memory.removeEverything()
                    return
                }
            }
            guard !hashes.isEmpty else { return }
            for user in sessions.knownUsers where hashes.contains(PendingRemovals.hash(of: CacheLayout.userDirectoryName(user))) {
                if let slot = sessions.slot(of: user) { memory.removeAll(user: slot) }
            }
        }
    }

    /// What the cache needs to know of a model type, resolved once: `cacheName` may be slow
    /// (the default interpolates the type's name).
    struct TypeInfo {
        /// The type's cache name, ready to make its archive keys.
        var cacheNamePart: ArchiveKey.CacheNamePart
        var threshold: Duration

        var cacheName: String { cacheNamePart.cacheName }
    }

    /// Opens the cache: checks the configuration, creates the root and the version directory,
    /// wipes the data of every app schema version other than the configuration's and finishes
    /// any wipe an earlier run left unfinished.
    ///
    /// Opening lists only the root directory, so it takes the same time however many archives
    /// the cache holds. Trash an earlier wipe could not delete is deleted now, or, if it still
    /// cannot be, reported to `diagnostics` and left for later: it never stops the cache from
    /// opening.
    ///
    /// A root this process cannot write (a read-only volume, a directory of another user)
    /// opens read-only, as SQLite opens a read-only database: reads serve the archives there;
    /// write-through writes, flushes and removals throw `permissionDenied`; dirty collections
    /// stay in memory. `diagnostics` is told once.
    ///
    /// - Throws: `invalidConfiguration` for an empty `schemaVersion` or a negative limit or
    ///   delay; `invalidUser` for an empty user id; `notADirectory` when the root is a file;
    ///   `permissionDenied` or `ioFailure` when the root or the version directory cannot be
    ///   made or opened; `versionWipeFailed` when another version's directory cannot be moved
    ///   out of view (the cache refuses to open rather than mix versions).
    public init(configuration: Configuration) throws {
        try configuration.validate()
        self.configuration = configuration
        let reports = ProblemReports()
        self.reports = reports
        let layout = CacheLayout(rootDirectory: configuration.rootDirectory, schemaVersion: configuration.schemaVersion)
        let store = try DiskStore.open(
            layout: layout, packLimit: configuration.packLimit, faults: configuration.effectiveFaults, protection: FileProtection(configuration.fileProtection),
            onDamage: { path, what in
                reports.add(AppCacheError(code: .corruptArchive, message: "The cache found \(what).", path: path))
            },
            onProblem: reports.add)
        // The state exists before the writer, whose batches tell it what they found.
        let state = Locked(State(
            sessions: UserSessions(user: configuration.user),
            memory: MemoryStore(
                byteLimit: configuration.memoryByteLimit, entryLimit: configuration.memoryEntryLimit,
                tracksReads: configuration.diskByteLimit != nil),
            syncedChange: 0))
        self.state = state
        let disk = try DiskWriter(
            store: store, diskByteLimit: configuration.diskByteLimit, isAppExtension: configuration.isAppExtension,
            lockTimeout: configuration.lockTimeout,
            gate: SuspensionGate(startActivity: configuration.backgroundActivity), hooks: Self.hooks(state))
        self.disk = disk
        let change = disk.changeCount
        state.withLock { state in
            state.syncedChange = change
            state.memory.tracksReads = disk.hasBudget
            state.removals = disk.coordinator.removals
            state.seenRemovals = disk.coordinator.removals.recordedCount
        }
        let observers = ChangeObservers()
        self.observers = observers
        let following = WeakCache()
        watcher = ChangeWatcher(coordinator: disk.coordinator) {
            observers.notifyAll()
            following.cache?.followSignedInUser()
        }
        if configuration.followsSignedInUser, case .some(let recorded) = SignedInUserRecord.read(from: store),
            (try? Configuration.checkUser(recorded)) != nil {
            state.withLock { $0.sessions.switchUser(to: recorded) }
        }
        if disk.isReadOnly {
            // As SQLite opens a read-only database: the intact archives are served, nothing is
            // changed on disk.
            reports.add(AppCacheError(
                code: .permissionDenied,
                message: "The cache directory cannot be written: the cache is read-only. Archives are read; writes, flushes and removals throw permissionDenied.",
                path: layout.versionPath))
        }
        if configuration.flushesAtExit {
            ExitFlush.register(self)
        }
        if configuration.followsSignedInUser {
            following.cache = self
            watcher.start()
        }
        if configuration.observesApplicationLifecycle {
            observeApplicationLifecycle()
        }
        if disk.hasBudget && !disk.isReadOnly {
            // Load the disk index in the background, not on the caller's thread.
            writeBackQueue.async { [weak self] in
                _ = try? self?.withDiskWrites { batch in batch.loadIndex() }
            }
        }
        reports.deliver(to: configuration.diagnostics)
    }

    deinit {
        watcher.stop()
        stopSending()
        lifecycleSubscriptions.withLock { $0.cancel() }
        reportAll(writeDirtyEntries())
        // Only now: an exit under way waits for registered caches being deinitialised.
        ExitFlush.unregister(ObjectIdentifier(self))
    }

    /// The user whose collections the cache reads and writes; `nil` for the shared space.
    public var user: String? {
        state.withLock { $0.user }
    }

    /// The current user, as a session: take it when work for the user begins, and bind the
    /// write at its end to it with ``cacheItems(_:forKey:expiresAfter:pinned:for:)``.
    public var session: CacheSession {
        state.withLock { $0.session }
    }

    /// Caches `items` as the collection of `Model` under `key`, replacing what was there.
    ///
    /// The items are encoded once and kept in memory with the moment of the call, which
    /// becomes the collection's cached date and, once written, its archive's modification
    /// date. When this pushes memory over a limit, the least recently used collections leave
    /// it; dirty ones are written to disk on the cache's write-back thread (this call does not
    /// wait for the disk) and answer reads until they are. With a `writeBackDelay` of `.zero`
    /// the items are written through, on this thread.
    ///
    /// - Parameters:
    ///   - items: the collection to cache; an empty one is cached as empty, not removed.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - timeToLive: how long the items may be returned at all, from now; `nil` (the default)
    ///     for no limit. Unlike staleness this is a hard limit: once it has passed, reads miss
    ///     and the collection is removed where it is found, unless it is pinned. It is stored
    ///     in the archive header, not in a file date.
    /// - Throws: `encodingFailed` when the items cannot be encoded (their `encode(to:)` throws,
    ///   or they nest more than 512 levels deep, deeper than a read takes back); `invalidKey`
    ///   for a key longer than 64 KiB. With a `writeBackDelay` of `.zero`, also `permissionDenied`,
    ///   `noSpace`, `notADirectory` or `ioFailure` when the archive cannot be written. In every
    ///   case what was cached before stays as it was. (With write-back, a failed write is
    ///   reported to `diagnostics` and retried by the next flush; the items stay in memory.)
    public func cacheItems<Model: CacheableModel>(
        _ items: [Model], forKey key: String? = nil, expiresAfter timeToLive: Duration? = nil
    ) throws {
        try save(items, forKey: key, expiresAfter: timeToLive, pinned: false, validators: nil, session: nil)
    }

    /// Caches `items` as the collection of `Model` under `key`, pinned or not, in one write.
    ///
    /// The same as ``cacheItems(_:forKey:expiresAfter:)`` followed by ``pin(_:forKey:)``, without
    /// writing the archive twice: a pinned collection ignores its time to live and is the last
    /// to leave a full disk.
    ///
    /// - Parameters:
    ///   - items: the collection to cache.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - timeToLive: how long the items may be returned at all once unpinned; `nil` for no limit.
    ///   - pinned: whether the collection is pinned.
    /// - Throws: what ``cacheItems(_:forKey:expiresAfter:)`` throws.
    public func cacheItems<Model: CacheableModel>(
        _ items: [Model], forKey key: String? = nil, expiresAfter timeToLive: Duration? = nil, pinned: Bool
    ) throws {
        try save(items, forKey: key, expiresAfter: timeToLive, pinned: pinned, validators: nil, session: nil)
    }

    /// Caches `items` for the user of `session`, or drops them if that user's data was removed
    /// since the session was taken: the write of a model layer that started work for a user.
    ///
    /// A refresh that began for alice lands in alice's space even if bob signed in meanwhile,
    /// and nowhere if alice signed out with ``signOut(removingData:)``, was removed with
    /// ``removeUser(_:)`` or ``removeAllUsers()``, or had ``removeAll(includingPinned:)`` called
    /// with pinned ones (its default):
    /// a logout never comes back as cached data. For the current user the write is the same as
    /// ``cacheItems(_:forKey:expiresAfter:pinned:)``; for another user the archive is written to
    /// that user's directory at once, without entering memory.
    ///
    /// ```swift
    /// let session = cache.session               // before the work starts
    /// let posts = try await api.posts()
    /// try cache.cacheItems(posts, forKey: "top", for: session)
    /// ```
    ///
    /// - Parameters:
    ///   - items: the collection to cache.
    ///   - key: which collection of the type; `nil` for its default collection.
    ///   - timeToLive: how long the items may be returned at all; `nil` for no limit.
    ///   - pinned: whether the collection is pinned.
    ///   - session: the user the write belongs to, taken from ``session`` when the work began.
    /// - Returns: `true` when the items were cached, `false` when they were dropped.
    /// - Throws: what ``cacheItems(_:forKey:expiresAfter:)`` throws.
    @discardableResult
    public func cacheItems<Model: CacheableModel>(
        _ items: [Model], forKey key: String? = nil, expiresAfter timeToLive: Duration? = nil, pinned: Bool = false,
        for session: CacheSession
    ) throws -> Bool {
        try save(items, forKey: key, expiresAfter: timeToLive, pinned: pinned, validators: nil, session: session) != nil
    }

    // MARK: - Internal

    /// Caches `items` as every public write does: encoded once, kept in memory for the current
    /// user (written through with a `writeBackDelay` of zero), or written straight to disk for
    /// a session's user who is no longer current; dropped when `session`'s user was removed.
    ///
    /// - Returns: the items' cached date; `nil` when they were dropped.
    /// - Parameters:
    ///   - nextPageCursor: the cursor of the collection's next page (a page a fetch brought);
    ///     `nil` for none.
    ///   - kept: the cached date and expiry to keep (a local edit, which is not a refresh);
    ///     `nil` dates the items now and takes the expiry from `timeToLive`.
    ///   - condition: checked inside the state lock just before the items replace what memory
    ///     holds; when it says `false`, nothing is stored and ``WriteConflict`` is thrown.
    ///   - archive: when given, the items are written through, under the cross-process lock,
    ///     only if the archive on disk is still the file the caller read (`nil` identity: still
    ///     none); otherwise ``WriteConflict`` is thrown. What makes an update atomic across
    ///     processes.
    @discardableResult
    func save<Model: CacheableModel>(
        _ items: [Model], forKey key: String?, expiresAfter timeToLive: Duration?, pinned: Bool,
        validators: CacheValidators?, nextPageCursor: String? = nil, session: CacheSession?, kept: (cachedDate: Date, expiry: Date?)? = nil,
        onlyIf condition: ((State) -> Bool)? = nil, ifArchiveStill archive: ArchiveExpectation? = nil
    ) throws -> Date? {
        let info = typeInfo(Model.self)
        try Self.checkKey(key, cacheName: info.cacheName)
        let encoded: (payload: Data, codec: PayloadCodec, decodedSize: Int, refusal: String?)
        do {
            encoded = try configuration.payloadCodec.encode(items)
        } catch {
            throw AppCacheError(
                code: .encodingFailed,
                message: "The items could not be encoded; nothing was cached.",
                cacheName: info.cacheName, key: key, underlyingError: error)
        }
        if let refusal = encoded.refusal { reportStoredAsJSON(Model.self, because: refusal, key: key) }
        let now = kept?.cachedDate ?? configuration.now()
        var record = ArchiveRecord(
            payload: encoded.payload, codec: encoded.codec.headerValue, schemaVersion: Int64(Model.schemaVersion),
            cachedDate: now, expiry: kept.map(\.expiry) ?? timeToLive.map { now.addingTimeInterval($0.timeInterval) },
            stalenessThreshold: info.threshold, decodedSize: encoded.decodedSize)
        record.isPinned = pinned
        record.validators = validators
        record.nextPageCursor = nextPageCursor
        let type = ObjectIdentifier(Model.self)
        let writeThrough = configuration.writeBackDelay == .zero || archive != nil

        func entry(for user: String?) -> MemoryEntry {
            let archiveKey = ArchiveKey(info.cacheNamePart, user: user, key: key)
            return MemoryEntry(
                archiveKey: archiveKey, path: disk.store.layout.archivePath(for: archiveKey), record: record,
                items: ErasedItems(items), isDirty: !writeThrough)
        }

        func destination(_ state: State) -> Destination {
            if state.versionRemoval != nil { return .versionRemoved }
            if let condition, !condition(state) { return .conflict }
            guard let session else { return .memory }
            guard state.sessions.holds(session) else { return .nowhere }
            return state.user == session.user ? .memory : .diskOnly
        }

        /// Counts the write for updates of the collection, once its items are where readers
        /// find them (in memory, or in place on disk).
        func noteWrite(for user: String?, _ state: inout State) {
            if let slot = state.sessions.slot(of: user) { state.noteWrite(MemoryKey(type: type, key: key, user: slot)) }
        }

        var spills: [MemoryKey] = []
        /// Decides and writes under the disk lock: write-through, or a session's user who is
        /// no longer current.
        func writeUnderDiskLock() throws -> Bool {
            try withDiskWrites { batch -> Bool in
                // A removal that came since the batch began goes first: these items are newer.
                let (user, slot, target, due) = state.withLock { ($0.user, $0.userSlot, destination($0), $0.dueWipes) }
                performDueWipes(&batch, due)
                switch target {
                case .versionRemoved:
                    throw state.withLock { $0.versionRemoval }!
                case .conflict:
                    throw WriteConflict()
                case .nowhere:
                    return false
                case .diskOnly:
                    var entry = entry(for: session?.user)
                    if let archive, batch.facts(of: entry.path)?.identity != archive.identity { throw WriteConflict() }
                    // A dirty copy waiting in memory for that user is older than these items.
                    state.withLock { $0.memory.remove(entry.archiveKey) }
                    entry.diskIdentity = try batch.write(record, forKey: entry.archiveKey, at: entry.path)
                    state.withLock { noteWrite(for: session?.user, &$0) }
                    return true
                case .memory:
                    var entry: MemoryEntry? = entry(for: user)
                    if let archive, batch.facts(of: entry!.path)?.identity != archive.identity { throw WriteConflict() }
                    if writeThrough {
                        let identity = try batch.write(record, forKey: entry!.archiveKey, at: entry!.path)
                        entry!.diskIdentity = identity
                    }
                    spills = state.withLock { state in
                        noteWrite(for: user, &state)
                        return state.memory.store(entry.moveOut()!, for: MemoryKey(type: type, key: key, user: slot))
                    }
                    if !writeThrough { scheduleWriteBack() }
                    return true
                }
            }
        }

        if writeThrough {
            guard try writeUnderDiskLock() else { return nil }
        } else {
            let user = state.withLock { $0.user }
            var prepared: MemoryEntry? = entry(for: user)
            let target = state.withLock { state -> Destination in
                let target = destination(state)
                if target == .memory {
                    noteWrite(for: state.user, &state)
                    // The user may have switched while the path was computed: store for the current one.
                    let entry = state.user == user ? prepared.moveOut()! : entry(for: state.user)
                    spills = state.memory.store(entry, for: MemoryKey(type: type, key: key, user: state.userSlot))
                }
                return target
            }
            switch target {
            case .versionRemoved: throw state.withLock { $0.versionRemoval }!
            case .conflict: throw WriteConflict()
            case .nowhere: return nil
            case .diskOnly: guard try writeUnderDiskLock() else { return nil }
            case .memory: scheduleWriteBack()
            }
        }
        observers.notify(cacheName: info.cacheName, key: key)
        spillInBackground(spills)
        return now
    }

    /// Tells `diagnostics`, once per type, that the binary codec left the type's collections
    /// to JSON. Call with no lock held.
    private func reportStoredAsJSON<Model: CacheableModel>(_ type: Model.Type, because reason: String, key: String?) {
        let first = state.withLock { state in state.typesStoredAsJSON.insert(ObjectIdentifier(Model.self)).inserted }
        guard first else { return }
        configuration.diagnostics?(AppCacheError(
            code: .storedAsJSON,
            message: "\(Model.self).encode(to:) uses its containers in a way the binary codec cannot stream (\(reason)); its collections are stored as JSON.",
            cacheName: Model.cacheName, key: key))
    }

    func typeInfo<Model: CacheableModel>(_ type: Model.Type) -> TypeInfo {
        let id = ObjectIdentifier(Model.self)
        let known = state.withLock { state -> TypeInfo? in
            if let last = state.lastType, last.id == id { return last.info }
            guard let info = state.types[id] else { return nil }
            state.lastType = (id, info)
            return info
        }
        if let known { return known }
        // Resolved outside the lock: `cacheName` is the app's code.
        let cacheName = Model.cacheName
        precondition(!cacheName.isEmpty, "CacheableModel.cacheName of \(Model.self) must not be empty")
        precondition(cacheName.utf8.count <= ArchiveHeader.maximumNameLength, "CacheableModel.cacheName of \(Model.self) is too long")
        let info = TypeInfo(cacheNamePart: ArchiveKey.CacheNamePart(cacheName: cacheName), threshold: configuration.stalenessThreshold(for: Model.self))
        state.withLock { $0.types[id] = info }
        return info
    }

    /// Throws `invalidKey` for a key no archive header can hold.
    static func checkKey(_ key: String?, cacheName: String) throws {
        guard let key, key.utf8.count > ArchiveHeader.maximumNameLength else { return }
        throw AppCacheError(
            code: .invalidKey,
            message: "The key is \(key.utf8.count) bytes long; an archive holds keys of up to \(ArchiveHeader.maximumNameLength) bytes.",
            cacheName: cacheName)
    }

    /// Delivers the queued problems, then `problems`, to `diagnostics`. Call with no lock held.
    func reportAll(_ problems: [AppCacheError]) {
        reports.deliver(to: configuration.diagnostics)
        for problem in problems {
            // A removed version is told once: every later write fails the same way.
            if problem.code == .versionRemoved, state.withLock({ state in
                defer { state.versionRemovalReported = true }
                return state.versionRemovalReported
            }) { continue }
            configuration.diagnostics?(problem)
        }
    }

    /// Where a write goes, decided inside the state lock; `conflict` when its condition failed,
    /// `versionRemoved` when another app schema version removed this one's directory.
    enum Destination { case memory, diskOnly, nowhere, conflict, versionRemoved }

    /// Thrown by ``save(_:forKey:expiresAfter:pinned:validators:session:kept:onlyIf:ifArchiveStill:)``
    /// when its condition failed: the collection changed since the caller read it.
    struct WriteConflict: Error {}

    /// Which archive file a read-modify-write read (`nil`: there was none).
    struct ArchiveExpectation {
        var identity: FileVersion?
    }
}
