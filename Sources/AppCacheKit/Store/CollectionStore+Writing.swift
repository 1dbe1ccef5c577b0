import Foundation

extension CollectionStore {
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
        onlyIf condition: ((StoreState) -> Bool)? = nil, ifArchiveStill archive: ArchiveExpectation? = nil
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
        // Taken outside the lock, for the index of writes by id, once they used the type.
        let itemIDs = info.itemIDs?(ErasedItems(items))

        func entry(for user: String?) -> MemoryEntry {
            let archiveKey = ArchiveKey(info.cacheNamePart, user: user, key: key)
            return MemoryEntry(
                archiveKey: archiveKey, path: disk.store.layout.archivePath(for: archiveKey), record: record,
                items: ErasedItems(items), isDirty: !writeThrough)
        }

        func destination(_ state: StoreState) -> Destination {
            if state.versionRemoval != nil { return .versionRemoved }
            if let condition, !condition(state) { return .conflict }
            guard let session else { return .memory }
            guard session.mayWrite(in: state.sessions) else { return .nowhere }
            return state.user == session.user ? .memory : .diskOnly
        }

        /// Counts the write for updates of the collection, once its items are where readers
        /// find them (in memory, or in place on disk).
        /// `identity`: the archive written, when the items were written through.
        func noteWrite(for user: String?, identity: FileVersion? = nil, _ state: inout StoreState) {
            if let slot = state.sessions.slot(of: user) { state.noteWrite(MemoryKey(type: type, key: key, user: slot)) }
            if let itemIDs { state.itemIndex.noteWrite(type: type, user: user, key: key, ids: itemIDs, identity: identity) }
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
                    let identity = try batch.write(record, forKey: entry.archiveKey, at: entry.path)
                    self.record(.written(bytes: record.payload.count), entry.archiveKey)
                    entry.diskIdentity = identity
                    state.withLock { noteWrite(for: session?.user, identity: identity, &$0) }
                    return true
                case .memory:
                    var entry: MemoryEntry? = entry(for: user)
                    if let archive, batch.facts(of: entry!.path)?.identity != archive.identity { throw WriteConflict() }
                    if writeThrough {
                        let identity = try batch.write(record, forKey: entry!.archiveKey, at: entry!.path)
                        self.record(.written(bytes: record.payload.count), entry!.archiveKey)
                        entry!.diskIdentity = identity
                    }
                    let identity = entry!.diskIdentity
                    spills = state.withLock { state in
                        noteWrite(for: user, identity: identity, &state)
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
        onChange(info.cacheName, key)
        spillInBackground(spills)
        return now
    }

    /// Tells `diagnostics`, once per type, that the binary codec left the type's collections
    /// to JSON. Call with no lock held.
    private func reportStoredAsJSON<Model: CacheableModel>(_ type: Model.Type, because reason: String, key: String?) {
        let first = state.withLock { state in state.typesStoredAsJSON.insert(ObjectIdentifier(Model.self)).inserted }
        guard first else { return }
        diagnose(AppCacheError(
            code: .storedAsJSON,
            message: "\(Model.self).encode(to:) uses its containers in a way the binary codec cannot stream (\(reason)); its collections are stored as JSON.",
            cacheName: Model.cacheName, key: key))
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

    /// How often an update runs `transform` again after the collection changed under it.
    static let maximumUpdateAttempts = 1_000

    /// The read-modify-write of both `updateItems`: optimistic, with no lock held while
    /// `transform` runs. Writes of the collection are counted from before the read, and the
    /// archive file is noted; the result is written through, under the cross-process lock,
    /// only if no write came between in this process and the archive is still that file (no
    /// other process or instance replaced it), checked in the same step that writes it;
    /// otherwise the update starts over.
    func update<Model: CacheableModel>(
        _ type: Model.Type, forKey key: String?, session given: CacheSession?, _ transform: (inout [Model]) throws -> Void
    ) throws -> [Model]? {
        try update(Model.self, forKey: key, session: given) { items, _ in try transform(&items) }?.items
    }

    /// ``update(_:forKey:session:_:)`` whose `transform` also sees, and may change, the cursor
    /// of the collection's next page (`nil`: none).
    ///
    /// An update changes the confirmed items: the pending changes of ``AppCache/enqueue(_:)`` are not in
    /// what `transform` sees, and stay applied on top of what it makes.
    ///
    /// - Parameters:
    ///   - given: the session the update is bound to: it lands in that user's space, current or
    ///     not, and is dropped only when that user's data was removed since; `nil` for the user
    ///     current when it begins.
    ///   - onlyWhileCurrent: whether an update for `given` is dropped once its user is no longer
    ///     the current one (a page a load of the current user asked for).
    ///   - onlyIfCached: whether a collection that is not cached stays so (the update is
    ///     dropped) instead of being made from no items.
    /// - Returns: the items as cached, with their cached date; `nil` when the update was dropped.
    func update<Model: CacheableModel>(
        _ type: Model.Type, forKey key: String?, session given: CacheSession?, onlyWhileCurrent: Bool = false, onlyIfCached: Bool = false,
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
            // Read and write for one user. Without a session, the current one: a switch during
            // the read means reading again. With one, that user's space, current or not; the
            // update is dropped only when that user's data was removed since.
            var switchesSeen = 0
            var conflicts: UInt32 = 0
            for _ in 0..<Self.maximumUpdateAttempts {
                let decided = state.withLock { state -> (target: CacheSession, isCurrent: Bool, switches: UInt64, slot: Int?)? in
                    let target = given ?? state.session
                    guard target.mayWrite(in: state.sessions), !onlyWhileCurrent || state.user == target.user else { return nil }
                    return (target, state.user == target.user, state.sessions.switches, state.sessions.slot(of: target.user))
                }
                guard let (target, isCurrent, switches, slot) = decided else { return nil }
                // A user this process never had has no entries in memory: its key never matches.
                let memoryKey = MemoryKey(type: id, key: key, user: slot ?? -1)
                let writesBefore = state.withLock { $0.beginUpdate(memoryKey) }
                defer { state.withLock { $0.endUpdate(memoryKey) } }
                // The archive as it is before the read: the result is written only if no one,
                // in any process, has replaced it since.
                let archiveKey = ArchiveKey(info.cacheNamePart, user: target.user, key: key)
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
                let cached: StoredCollection<Model>?
                if isCurrent {
                    cached = try readCollection(Model.self, key: key, switches: switches)
                    if cached == nil, state.withLock({ $0.sessions.switches }) != switches {
                        // The user switched during the read: read again, for the session's user
                        // (given) or the new current one.
                        switchesSeen += 1
                        if onlyWhileCurrent || given == nil && switchesSeen >= 3 { return nil }
                        continue
                    }
                } else {
                    cached = try readCollection(Model.self, key: key, ofOtherUser: target.user)
                }
                if cached == nil && onlyIfCached { return nil }
                var items = cached?.items ?? []
                var cursor = cached?.nextPageCursor
                try transform(&items, &cursor)
                let kept = cached.map { (cachedDate: $0.cachedDate, expiry: $0.expiry) }
                do {
                    let stored = try save(
                        items, forKey: key, expiresAfter: nil, pinned: cached?.isPinned ?? false,
                        validators: cached?.validators, nextPageCursor: cursor, session: target, kept: kept,
                        onlyIf: { state in state.updateCounters[memoryKey]?.writes == writesBefore }, ifArchiveStill: archive)
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
                code: .updateContention,
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

    /// What re-dating a collection did.
    enum Redating {
        case redated(Date)
        /// The session's user's data was removed: nothing changed.
        case dropped
        case nothingCached
    }

    /// Re-dates the collection of `Model` under `key` of `session`'s user as cached now, without
    /// rewriting its items: a dirty one in memory carries the new date to its write; an archive
    /// gets a new modification date, its bytes untouched.
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when the archive's date cannot be set.
    func redate<Model: CacheableModel>(_ type: Model.Type, key: String?, session: CacheSession) throws -> Redating {
        let info = typeInfo(Model.self)
        let archiveKey = ArchiveKey(info.cacheNamePart, user: session.user, key: key)
        let now = configuration.now()
        return try withDiskWrites { batch -> Redating in
            let (holds, isCurrent, held) = state.withLock { state -> (Bool, Bool, MemoryEntry?) in
                let isCurrent = state.user == session.user
                let held = isCurrent ? state.memory.owner(of: archiveKey).flatMap { state.memory.peek($0) } : nil
                return (session.mayWrite(in: state.sessions), isCurrent, held)
            }
            guard holds else { return .dropped }
            if let held, held.isDirty {
                state.withLock { state in _ = state.memory.redate(archiveKey, at: now, identity: nil) }
                return .redated(now)
            }
            let path = disk.store.layout.archivePath(for: archiveKey)
            guard let onDisk = batch.facts(of: path),
                let redated = try batch.redate(path, ifStill: onDisk.identity, to: now, key: archiveKey)
            else { return .nothingCached }
            if isCurrent {
                state.withLock { state in
                    // Memory's copy is this very file, re-dated; or another writer replaced the
                    // file, and the next read takes it from disk.
                    if let held, held.diskIdentity == onDisk.identity {
                        state.memory.redate(archiveKey, at: now, identity: redated)
                    } else {
                        state.memory.remove(archiveKey)
                    }
                }
            }
            return .redated(now)
        }
    }
}
