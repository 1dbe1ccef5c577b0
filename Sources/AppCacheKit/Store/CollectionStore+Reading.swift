public import Foundation

extension CollectionStore {
    /// When the current user's collection of `Model` under `key` was cached; `nil` when there is
    /// none (or it has expired, or was written by a model version `Model` cannot read). Reads
    /// the date only (from memory, or the archive's header and modification date).
    func cachedDate<Model: CacheableModel>(of type: Model.Type, forKey key: String?) -> Date? {
        let info = typeInfo(Model.self)
        guard Self.fits(key) else { return nil }
        let now = configuration.now()
        var user: String?
        let entry = checkedEntry { state in
            user = state.user
            return state.memory.owner(of: ArchiveKey(info.cacheNamePart, user: state.user, key: key))
        }
        if let entry { return entry.entry.record.isExpired(at: now) ? nil : entry.entry.cachedDate }
        let archiveKey = ArchiveKey(info.cacheNamePart, user: user, key: key)
        let path = disk.store.layout.archivePath(for: archiveKey)
        renewPresence()
        guard !isRemoved(path), let archive = disk.store.summary(at: path, forKey: archiveKey),
            ReadableVersions(of: Model.self).reads(archive.record.schemaVersion)
        else { return nil }
        // An archive of a model version `Model` cannot read is a miss for every read, so it has
        // no date either (and is stale).
        return archive.record.isExpired(at: now) ? nil : archive.cachedDate
    }

    /// When the collection of `Model` under `key` was cached and whether that is stale; `nil`
    /// when there is none. Reads no items.
    func datedStaleness<Model: CacheableModel>(_ type: Model.Type, forKey key: String?) -> (cachedDate: Date, isStale: Bool)? {
        guard let date = cachedDate(of: type, forKey: key) else { return nil }
        return (date, isStale(Model.self, key: key, cachedAt: date))
    }

    /// Whether the current user's collection of `Model` under `key`, cached at `date`, is
    /// stale: older than the type's threshold, or invalidated since (``invalidate(_:forKey:)``).
    func isStale<Model: CacheableModel>(_ type: Model.Type, key: String?, cachedAt date: Date) -> Bool {
        Staleness.isStale(
            cachedAt: date, now: configuration.now(), threshold: typeInfo(Model.self).threshold,
            latestInvalidation: latestInvalidation(of: Model.self, key: key))
    }

    /// The latest invalidation of the current user's collection of `Model` under `key`, in
    /// milliseconds since 1970; `nil` when none was recorded.
    func latestInvalidation<Model: CacheableModel>(of type: Model.Type, key: String?) -> Int64? {
        let log = currentInvalidations()
        guard !log.records.isEmpty else { return nil }
        let user = state.withLock { $0.user }
        return log.latestInvalidation(of: ArchiveKey(typeInfo(Model.self).cacheNamePart, user: user, key: key))
    }

    /// The invalidations as the disk holds them now: read again only when the disk's change
    /// count moved (an invalidation, here or in another process, moves it).
    func currentInvalidations() -> InvalidationLog {
        let change = disk.changeCount
        if let known = state.withLock({ $0.invalidationsChange == change ? $0.invalidations : nil }) { return known }
        let log = InvalidationLog.read(from: disk.store)
        state.withLock { state in
            state.invalidations = log
            state.invalidationsChange = change
        }
        return log
    }

    /// The memory layer's answer for a model type and key of the current user, counting a hit
    /// or a miss; `nil` also when the entry must first be checked against its archive (another
    /// process or instance changed the disk since it was last checked).
    /// A collection with pending changes (``enqueue(_:)``) is no memory hit either: the changes
    /// are applied on the slow path.
    @usableFromInline
    func memoryHit(_ type: ObjectIdentifier, _ key: String?) -> MemoryHit? {
        let hit = memoryLookup(type, key, unlessPending: true) { memory, key in memory.hit(key) }
        if hit != nil { recordMemoryHit(type, key) }
        return hit
    }

    /// The memory layer's answer as a read shows it, with the pending changes applied: the
    /// plain hit when the outbox holds none for the type, else the items the last read showed
    /// (``PendingOverlays``) while neither the collection nor the queue changed since; `nil`
    /// otherwise (the slow path applies the changes, and keeps what it shows).
    @usableFromInline
    func shownHit(_ type: ObjectIdentifier, _ key: String?) -> MemoryHit? {
        let change = disk.changeCount
        var observed: (cacheName: String?, user: String?)?
        let hit = state.withLock { state -> MemoryHit? in
            guard change == state.syncedChange else { return nil }
            let memoryKey = MemoryKey(type: type, key: key, user: state.userSlot)
            if state.eventsObserved { observed = (state.types[type]?.cacheName, state.user) }
            guard state.pending.touches(type, change: change, slot: state.userSlot) else { return state.memory.hit(memoryKey) }
            guard state.pending.isCurrent(change: change, slot: state.userSlot),
                let overlay = state.overlays.shown(for: memoryKey, epoch: state.pending.epoch, change: change),
                state.memory.peek(memoryKey)?.items.isIdentical(to: overlay.base) == true
            else { return nil }
            return state.memory.hit(memoryKey) { MemoryHit($0, showing: overlay.shown) }
        }
        if let observed, hit != nil { events.record(.memoryHit, cacheName: observed.cacheName, key: key, user: observed.user) }
        return hit
    }

    /// Keeps what a read showed of `user`'s collection of `type` under `key` (`shown`, made from
    /// `base` with the queue at `stamp`) for ``shownHit(_:_:)``, if `user` is still current and
    /// memory still holds `base` for it.
    func keepOverlay(
        _ shown: ErasedItems, base: ErasedItems, type: ObjectIdentifier, key: String?, user: String?, stamp: (epoch: UInt64, change: UInt64)
    ) {
        state.withLock { state in
            guard state.user == user else { return }
            let memoryKey = MemoryKey(type: type, key: key, user: state.userSlot)
            guard state.memory.peek(memoryKey)?.items.isIdentical(to: base) == true else { return }
            state.overlays.keep(shown, base: base, for: memoryKey, epoch: stamp.epoch, change: stamp.change)
        }
    }

    /// What `look` finds in the memory layer for a model type and key of the current user,
    /// inside the state lock; `nil` without asking when another process or instance changed
    /// the disk since memory was last checked against it, or, with `unlessPending`, when the
    /// outbox may hold changes to apply to the type (``PendingDigest/touches(_:change:)``).
    @inline(__always)
    func memoryLookup<Answer>(
        _ type: ObjectIdentifier, _ key: String?, unlessPending: Bool = false, _ look: (inout MemoryStore, MemoryKey) -> Answer?
    ) -> Answer? {
        let change = disk.changeCount
        return state.withLock { state in
            guard change == state.syncedChange, !unlessPending || !state.pending.touches(type, change: change, slot: state.userSlot) else { return nil }
            return look(&state.memory, MemoryKey(type: type, key: key, user: state.userSlot))
        }
    }

    /// Whether a memory hit with an expiry may still be returned.
    @usableFromInline
    func isLive(_ hit: MemoryHit) -> Bool {
        !hit.expires || hit.expiry > configuration.now()
    }

    /// The slow path of a read that memory did not answer at once: check the entry against its
    /// archive if another process may have changed it, look once more (another thread may have
    /// stored it meanwhile), then read the archive.
    @usableFromInline
    func loadAfterMiss<Model: CacheableModel>(_ type: Model.Type, key: String?) throws -> StoredCollection<Model>? {
        let id = ObjectIdentifier(Model.self)
        let info = typeInfo(Model.self)
        guard Self.fits(key) else { return nil }
        var context: MissContext?
        let found = checkedEntry { state in
            context = MissContext(user: state.user, slot: state.userSlot, mutations: state.memory.mutations, epoch: state.memory.epoch)
            return MemoryKey(type: id, key: key, user: state.userSlot)
        }
        guard let context else { return nil }
        let archiveKey = ArchiveKey(info.cacheNamePart, user: context.user, key: key)
        if let (memoryKey, entry) = found {
            let hit = MemoryHit(entry)
            guard hit.expires, hit.expiry <= configuration.now() else {
                state.withLock { $0.memory.countHit(memoryKey) }
                recordMemoryHit(id, key)
                return StoredCollection(
                    items: hit.items.items(as: Model.self), cachedDate: hit.cachedDate, isPinned: entry.isPinned, record: entry.record,
                    fromDisk: false)
            }
            // Expired: it goes from memory here, and from disk below.
            state.withLock { $0.memory.remove(memoryKey, generation: entry.generation) }
            if !disk.isReadOnly { try removeArchive(at: entry.path, ifStill: entry.diskIdentity, key: archiveKey) }
            record(.evicted(.expired), archiveKey)
            record(.miss, archiveKey)
            return nil
        }
        let loaded = try load(Model.self, key: key, archiveKey: archiveKey, versions: info.versions, context: context)
        if loaded == nil { record(.miss, archiveKey) }
        return loaded
    }

    /// The current user's collection of `Model` under `key` with what the store knows of it
    /// (validators, pin, expiry, next page), from memory or disk, without pending changes;
    /// `nil` when there is none, or when the user switched since `switches` was taken.
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when an archive exists but cannot be read.
    func readCollection<Model: CacheableModel>(_ type: Model.Type, key: String?, switches: UInt64) throws -> StoredCollection<Model>? {
        let info = typeInfo(Model.self)
        var found: StoredCollection<Model>?
        if let hit = memoryHit(ObjectIdentifier(Model.self), key), !hit.expires || isLive(hit) {
            let held = state.withLock { state -> (isPinned: Bool, record: ArchiveRecord)? in
                guard let owner = state.memory.owner(of: ArchiveKey(info.cacheNamePart, user: state.user, key: key)),
                    let entry = state.memory.peek(owner)
                else { return nil }
                return (entry.isPinned, entry.record)
            }
            let items = hit.items.items(as: Model.self)
            found = held.map { StoredCollection(items: items, cachedDate: hit.cachedDate, isPinned: $0.isPinned, record: $0.record, fromDisk: false) }
                ?? StoredCollection(items: items, cachedDate: hit.cachedDate, fromDisk: false, isPinned: false)
        } else {
            found = try loadAfterMiss(Model.self, key: key)
        }
        guard let found, state.withLock({ $0.sessions.switches }) == switches else { return nil }
        return found
    }

    /// The collection of `Model` under `key` of `user`, who is not the current user: what
    /// memory still holds of it (an entry the switch left, dirty ones waiting for the
    /// write-back included), otherwise its archive, read and decoded without entering memory.
    /// Without pending changes; `nil` when there is none or the archive cannot be read (a
    /// damaged one is left for the user's own reads to judge).
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when an archive exists but cannot be read.
    func readCollection<Model: CacheableModel>(_ type: Model.Type, key: String?, ofOtherUser user: String?) throws -> StoredCollection<Model>? {
        guard Self.fits(key) else { return nil }
        let info = typeInfo(Model.self)
        let archiveKey = ArchiveKey(info.cacheNamePart, user: user, key: key)
        let now = configuration.now()
        let held = state.withLock { state -> MemoryEntry? in
            guard let owner = state.memory.owner(of: archiveKey), owner.type == ObjectIdentifier(Model.self) else { return nil }
            return state.memory.peek(owner)
        }
        if let held {
            guard !held.record.isExpired(at: now) else { return nil }
            return StoredCollection(
                items: held.items.items(as: Model.self), cachedDate: held.cachedDate, isPinned: held.isPinned, record: held.record,
                fromDisk: false, generation: held.itemsGeneration)
        }
        let path = disk.store.layout.archivePath(for: archiveKey)
        renewPresence()
        guard !isRemoved(path) else { return nil }
        let read = try disk.store.read(at: path, forKey: archiveKey, versions: ReadableVersions(of: Model.self), change: disk.changeCount) {
            record, payload in
            ReadArchive(record: record, decoded: decode(Model.self, payload, of: record), payloadSize: payload.count)
        }
        reports.deliver(to: diagnose)
        guard case .found(let found, let identity) = read else { return nil }
        let items: ErasedItems
        switch found.decoded {
        case .items(let decoded), .upgraded(let decoded): items = decoded
        case .expired, .unknownCodec, .failed, .conversionFailed: return nil
        }
        return StoredCollection(
            items: items.items(as: Model.self), cachedDate: found.record.cachedDate, isPinned: found.record.isPinned, record: found.record,
            fromDisk: true, generation: identity.value | 1 << 63)
    }

    /// A collection a read found after missing memory at first.
    @usableFromInline
    struct StoredCollection<Model: CacheableModel>: Sendable {
        @usableFromInline var items: [Model]
        @usableFromInline var cachedDate: Date
        /// Whether it was read from its archive (`false`: memory had it after all).
        var fromDisk: Bool
        var validators: CacheValidators?
        var isPinned: Bool
        var expiry: Date? = nil
        var nextPageCursor: String? = nil
        /// Tells one version of the items from another, for a stream that follows another
        /// user's collection: memory's items generation, or (top bit set) the archive file's
        /// version; `nil` when not told.
        var generation: UInt64? = nil
    }

    /// What a read made of an archive's checked payload. Not generic, so that a read costs no
    /// generic type look-ups.
    enum Decoded {
        /// Past its expiry: not decoded.
        case expired
        /// Written with a codec this build does not know.
        case unknownCodec(UInt16)
        /// The payload did not decode as the type (or, for an older version, as its upgrade's
        /// old shape).
        case failed(any Error)
        /// An upgrade's conversion threw.
        case conversionFailed(any Error)
        /// The items, of the model type the read asked for.
        case items(ErasedItems)
        /// The items, converted from an older version by the type's upgrade.
        case upgraded(ErasedItems)
    }

    /// An archive a read found: its record (without the payload), what its payload decoded
    /// to, and the payload's size.
    struct ReadArchive {
        var record: ArchiveRecord
        var decoded: Decoded
        var payloadSize: Int
    }

    /// The items in `payload`, unless `record` has expired or names a codec this build does
    /// not know; those of an older version converted by the type's upgrade from it.
    func decode<Model: CacheableModel>(_ type: Model.Type, _ payload: UnsafeRawBufferPointer, of record: ArchiveRecord) -> Decoded {
        if record.isExpired(at: configuration.now()) { return .expired }
        guard let codec = PayloadCodec(headerValue: record.codec) else { return .unknownCodec(record.codec) }
        if record.schemaVersion != Int64(Model.schemaVersion),
            let upgrade = Model.upgrades.first(where: { Int64($0.version) == record.schemaVersion })
        {
            do {
                return .upgraded(ErasedItems(try upgrade.decodeAndConvert(codec, payload)))
            } catch ModelUpgrade<Model>.UpgradeFailure.decoding(let error) {
                return .failed(error)
            } catch ModelUpgrade<Model>.UpgradeFailure.conversion(let error) {
                return .conversionFailed(error)
            } catch {
                return .conversionFailed(error)
            }
        }
        do {
            return .items(ErasedItems(try codec.decodeItems(Model.self, fromBytes: payload)))
        } catch {
            return .failed(error)
        }
    }

    /// Who and when a read missed memory.
    struct MissContext {
        var user: String?
        var slot: Int
        var mutations: UInt64
        var epoch: UInt32
    }

    /// The memory entry `find` names (looked up inside the state lock), if memory holds it and
    /// it agrees with the disk.
    ///
    /// An entry not checked since another process or instance changed the disk is checked now,
    /// outside the lock, against its archive file (``MemoryEntry/agrees(withDisk:epoch:)``); an
    /// entry that does not agree leaves memory.
    func checkedEntry(_ find: (inout StoreState) -> MemoryKey?) -> (key: MemoryKey, entry: MemoryEntry)? {
        let change = disk.changeCount
        let found = state.withLock { state -> (key: MemoryKey, entry: MemoryEntry, epoch: UInt32)? in
            state.syncWithDisk(change: change)
            guard let key = find(&state), let entry = state.memory.peek(key) else { return nil }
            return (key, entry, state.memory.epoch)
        }
        guard let found else { return nil }
        if found.entry.epoch == found.epoch { return (found.key, found.entry) }
        let onDisk = disk.store.facts(of: found.entry.path)
        let agrees = found.entry.agrees(withDisk: onDisk, epoch: found.epoch)
        return state.withLock { state in
            if agrees {
                state.memory.markChecked(found.key, generation: found.entry.generation, epoch: found.epoch, identity: onDisk?.identity)
                return (found.key, found.entry)
            }
            state.memory.remove(found.key, generation: found.entry.generation)
            return nil
        }
    }

    /// Reads a collection memory did not have from disk and keeps it in memory, clean.
    private func load<Model: CacheableModel>(
        _ type: Model.Type, key: String?, archiveKey: ArchiveKey, versions: ReadableVersions, context: MissContext
    ) throws -> StoredCollection<Model>? {
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
        let mutationsBeforeRead = conflict == nil ? context.mutations : state.withLock { $0.memory.mutations }
        let path = disk.store.layout.archivePath(for: archiveKey)
        renewPresence()
        guard !isRemoved(path) else { return nil }
        // The payload is decoded where it was read, in the read's own buffer.
        var decodeTime: Duration?
        let read = try disk.store.read(at: path, forKey: archiveKey, versions: versions, change: disk.changeCount) {
            record, payload in
            let interval = events.systemLog?.begin("decode", archiveKey.cacheName)
            let started = ContinuousClock.now
            let decoded = decode(Model.self, payload, of: record)
            decodeTime = ContinuousClock.now - started
            if let interval { events.systemLog?.end(interval) }
            return ReadArchive(record: record, decoded: decoded, payloadSize: payload.count)
        }
        // A decode that gave items is counted with the disk hit at the end (one look-up of the
        // collection's counters, not two).
        var decodedItems = false
        if case .found(let found, _) = read, case .items = found.decoded { decodedItems = true }
        if let decodeTime, !decodedItems { record(.decoded(duration: decodeTime), archiveKey) }
        // What the read met on the way (damage skipped in a pack, a planted file) is told now.
        reports.deliver(to: diagnose)
        var record: ArchiveRecord
        let items: ErasedItems
        let identity: FileVersion
        let payloadSize: Int
        var upgraded = false
        switch read {
        case .missing:
            return nil
        case .damaged(let problem, let identity):
            if problem.code == .schemaMismatch, problem.isNewer(than: versions) {
                // A newer build's (a downgraded app, or a newer one sharing the root): left
                // for it, never decoded, never removed.
                return nil
            }
            if problem.code == .schemaMismatch, problem.isPinned {
                keepUnreadable(
                    path, key: archiveKey, code: .schemaMismatch,
                    message: problem.message + " It is pinned: the file stays, to be read once \(Model.self) declares an upgrade from it.")
                return nil
            }
            discard(path, ifStill: identity, key: archiveKey, code: problem.code, message: problem.message)
            return nil
        case .found(let found, let foundIdentity):
            identity = foundIdentity
            switch found.decoded {
            case .expired:
                if !disk.isReadOnly { try removeArchive(at: path, ifStill: identity, key: archiveKey) }
                self.record(.evicted(.expired), archiveKey)
                return nil
            case .unknownCodec(let number):
                discard(
                    path, ifStill: identity, key: archiveKey, code: .corruptArchive,
                    message: "The archive was written with payload codec \(number), which this build cannot read.")
                return nil
            case .failed(let error):
                let version = found.record.schemaVersion
                let shape = version == versions.current
                    ? "\(Model.self) (schema version \(version))"
                    : "the old shape \(Model.self)'s upgrade from schema version \(version) decodes"
                let message = "The archive does not decode as \(shape): \(DecodingProblem.describe(error)). "
                    + (version == versions.current
                        ? "Was the model changed without a schemaVersion bump? Bump it and declare an upgrade (ModelUpgrade), or give new properties defaults in init(from:)."
                        : "")
                unreadable(path, ifStill: identity, key: archiveKey, isPinned: found.record.isPinned, code: .modelMismatch, message: message, cause: error)
                return nil
            case .conversionFailed(let error):
                unreadable(
                    path, ifStill: identity, key: archiveKey, isPinned: found.record.isPinned, code: .decodingFailed,
                    message: "\(Model.self)'s upgrade from schema version \(found.record.schemaVersion) threw: \(error).", cause: error)
                return nil
            case .items(let decoded):
                (record, items, payloadSize) = (found.record, decoded, found.payloadSize)
            case .upgraded(let decoded):
                (record, items, payloadSize) = (found.record, decoded, found.payloadSize)
                upgraded = true
            }
        }
        if upgraded {
            self.record(.diskHit(bytes: payloadSize), archiveKey)
            return storeUpgraded(
                items.items(as: Model.self), of: record, key: key, archiveKey: archiveKey, path: path, identity: identity, context: context,
                mutationsBeforeRead: mutationsBeforeRead)
        }
        recordUse(of: path)
        if record.decodedSize == nil {
            // An archive of format 1 does not say what its items take in memory: measure it as
            // a write would, so the memory limit counts it truly.
            record.decodedSize = (try? BinaryPayloadEncoder.encode(items.items(as: Model.self)))?.decodedSize
        }
        let loaded = StoredCollection(
            items: items.items(as: Model.self), cachedDate: record.cachedDate, isPinned: record.isPinned, record: record, fromDisk: true)
        var entry: MemoryEntry? = MemoryEntry(
            archiveKey: archiveKey, path: path, record: record, items: items, isDirty: false, diskIdentity: identity,
            encodedSize: payloadSize)
        entry?.epoch = context.epoch
        let spills = state.withLock {
            $0.memory.storeLoaded(
                entry.moveOut()!, for: MemoryKey(type: ObjectIdentifier(Model.self), key: key, user: context.slot),
                ifUnchangedSince: mutationsBeforeRead)
        }
        spillInBackground(spills)
        if let decodeTime {
            events.record(.decoded(duration: decodeTime), .diskHit(bytes: payloadSize), for: archiveKey)
        } else {
            self.record(.diskHit(bytes: payloadSize), archiveKey)
        }
        return loaded
    }

    /// A collection an upgrade converted: kept in memory as a dirty entry in the current
    /// version, with the original cached date, expiry, validators and pin (an upgrade is not a
    /// refresh), so that the next write-back, flush or spill writes it over the old archive
    /// (at once with write-through); the conversion runs once. A newer archive another writer
    /// put there meanwhile wins (``MemoryEntry/agrees(withDisk:epoch:)``).
    private func storeUpgraded<Model: CacheableModel>(
        _ items: [Model], of old: ArchiveRecord, key: String?, archiveKey: ArchiveKey, path: CachePath, identity: FileVersion,
        context: MissContext, mutationsBeforeRead: UInt64
    ) -> StoredCollection<Model> {
        recordUse(of: path)
        self.record(.upgraded(fromSchemaVersion: String(old.schemaVersion)), archiveKey)
        let loaded = StoredCollection(items: items, cachedDate: old.cachedDate, isPinned: old.isPinned, record: old, fromDisk: true)
        guard !disk.isReadOnly, let encoded = try? configuration.payloadCodec.encode(items) else { return loaded }
        var record = ArchiveRecord(
            payload: encoded.payload, codec: encoded.codec.headerValue, schemaVersion: Int64(Model.schemaVersion),
            cachedDate: old.cachedDate, expiry: old.expiry, stalenessThreshold: typeInfo(Model.self).threshold,
            decodedSize: encoded.decodedSize)
        record.isPinned = old.isPinned
        record.validators = old.validators
        record.nextPageCursor = old.nextPageCursor
        let entry = MemoryEntry(
            archiveKey: archiveKey, path: path, record: record, items: ErasedItems(items), isDirty: true, diskIdentity: identity)
        let memoryKey = MemoryKey(type: ObjectIdentifier(Model.self), key: key, user: context.slot)
        let spills = state.withLock { state -> [MemoryKey]? in
            // Another write since the read started holds newer items: they stand.
            guard state.memory.mutations == mutationsBeforeRead else { return nil }
            return state.memory.store(entry, for: memoryKey)
        }
        guard let spills else { return loaded }
        spillInBackground(spills)
        if configuration.writeBackDelay == .zero {
            writeBack.queue.async { [weak self] in
                guard let self else { return }
                reportAll(writeDirtyEntries())
            }
        } else {
            scheduleWriteBack()
        }
        return loaded
    }

    /// A file a read cannot decode: removed (see ``discard(_:ifStill:key:code:message:cause:)``)
    /// unless pinned or the cache is read-only, when it stays (``keepUnreadable(_:key:code:message:cause:)``).
    private func unreadable(
        _ path: CachePath, ifStill identity: FileVersion, key: ArchiveKey, isPinned: Bool, code: AppCacheError.Code, message: String,
        cause: any Error
    ) {
        if isPinned {
            keepUnreadable(
                path, key: key, code: code,
                message: message + " It is pinned: the file stays, to be read again once the model decodes it or declares an upgrade.",
                cause: cause)
        } else if disk.isReadOnly {
            // It stays too: every read would say the same again.
            keepUnreadable(path, key: key, code: code, message: message + " The cache is read-only: the file stays.", cause: cause)
        } else {
            discard(path, ifStill: identity, key: key, code: code, message: message, cause: cause)
        }
    }

    /// Leaves a pinned file a read cannot decode in place, tells `diagnostics` once per
    /// process (every read of it misses, and would say the same again) and records why for the
    /// inspector (``ModelMismatchLog``), on the write-back thread.
    private func keepUnreadable(_ path: CachePath, key: ArchiveKey, code: AppCacheError.Code, message: String, cause: (any Error)? = nil) {
        let absolute = disk.store.layout.absolutePath(path)
        guard ModelMismatchReports.isNews(absolute, code: code) else { return }
        reportAll([AppCacheError(code: code, message: message, cacheName: key.cacheName, key: key.key, path: absolute, underlyingError: cause)])
        guard !disk.isReadOnly, let summary = disk.store.summary(at: path, forKey: key) else { return }
        let entry = ModelMismatchLog.Entry(
            archive: path, size: summary.size, cachedMilliseconds: Milliseconds.nearest(summary.cachedDate),
            reason: "\(code): \(message)")
        writeBack.queue.async { [weak self] in
            guard let self else { return }
            do {
                try withDiskWrites { batch in try ModelMismatchLog.record(entry, in: &batch) }
            } catch {
                reportAll([AppCacheError(wrapping: error)])
            }
        }
    }

    /// Removes a file a read found untrustworthy, unless another writer replaced it meanwhile,
    /// and tells `diagnostics` why.
    func discard(
        _ path: CachePath, ifStill identity: FileVersion?, key: ArchiveKey, code: AppCacheError.Code, message: String,
        cause: (any Error)? = nil
    ) {
        var text = message
        do {
            if disk.isReadOnly {
                text += " The cache is read-only: the file stays."
            } else {
                try removeArchive(at: path, ifStill: identity, key: key)
                text += " The file was removed."
            }
        } catch {
            text += " Removing the file failed too: \((error as? AppCacheError)?.message ?? "\(error)")"
        }
        reportAll([AppCacheError(
            code: code, message: text, cacheName: key.cacheName, key: key.key, path: disk.store.layout.absolutePath(path),
            underlyingError: cause)])
    }

    /// Removes the archive at `path` in a batch of its own, if it is still the file `identity`
    /// (`nil`: still no regular file, such as a FIFO); a newer archive another writer put there
    /// stays.
    func removeArchive(at path: CachePath, ifStill identity: FileVersion?, key: ArchiveKey) throws {
        try withDiskWrites { batch in try batch.delete(at: path, ifStill: identity, key: key) }
    }

    /// Notes a read of an archive as a use, for the disk budget; written to the journal with
    /// the next batch, or in a batch of its own, on the write-back queue, once enough gathered.
    private func recordUse(of path: CachePath) {
        if disk.noteUse(of: path) { settleInBackground() }
    }

    /// Records the invalidation of the current user's collections that `cacheName` (`nil`:
    /// every type) and `keys` cover, as of now.
    func invalidate(cacheName: String?, keys: InvalidationLog.KeyMatch) throws {
        let user = user
        let record = InvalidationLog.Record(
            userDirectory: CacheLayout.userDirectoryName(user), cacheName: cacheName, key: keys,
            milliseconds: Milliseconds.moment(configuration.now()))
        try withDiskWrites { batch in try InvalidationLog.record(record, in: &batch) }
        let key: String? = switch keys {
        case .exactly(let key): key
        case .prefix(let prefix): prefix + "*"
        case .defaultCollection, .any: nil
        }
        events.record(.invalidated, cacheName: cacheName, key: key, user: user)
    }
}

extension CollectionStore.StoredCollection {
    /// The items with what `record` says of them (validators, expiry, next page); the
    /// cached date and pin as the holder keeps them (a memory entry keeps its own).
    init(
        items: [Model], cachedDate: Date, isPinned: Bool, record: ArchiveRecord, fromDisk: Bool, generation: UInt64? = nil
    ) {
        self.items = items
        self.cachedDate = cachedDate
        self.fromDisk = fromDisk
        self.validators = record.validators
        self.isPinned = isPinned
        self.expiry = record.expiry
        self.nextPageCursor = record.nextPageCursor
        self.generation = generation
    }
}
