import Foundation

extension CollectionStore {
    /// Removes the current user's collection of `Model` under `key` from memory and disk.
    func removeItems<Model: CacheableModel>(_ type: Model.Type, forKey key: String?) throws {
        let info = typeInfo(Model.self)
        guard Self.fits(key) else { return }
        try withDiskWrites { batch in
            let archiveKey = state.withLock { state in
                let archiveKey = ArchiveKey(info.cacheNamePart, user: state.user, key: key)
                state.memory.remove(archiveKey)
                return archiveKey
            }
            try batch.delete(at: disk.store.layout.archivePath(for: archiveKey), key: archiveKey)
        }
    }

    /// Removes the current user's collections, pinned ones too only when asked.
    func removeAll(includingPinned: Bool) throws {
        guard includingPinned else {
            try removeArchives(ofAllUsers: false) { !$0.isPinned }
            return
        }
        try wipe { [$0.user] }
    }

    /// Removes every user's expired collections, and the trash earlier wipes left.
    func removeExpired() throws {
        let now = configuration.now()
        try removeArchives(ofAllUsers: true, sweeping: true) { $0.isExpired(at: now) }
        // What earlier wipes moved out of view but could not delete then.
        if !disk.isReadOnly { reportAll(disk.store.deleteLeftoverTrash()) }
    }

    /// The current user's collections, in memory and on disk.
    func entries() throws -> [CacheEntry] {
        let (user, slot) = state.withLock { ($0.user, $0.userSlot) }
        let due = settleDueWipes()  // before listing: removed directories are not listed
        // The recorded uses of collections (``RecordedUse``) are the library's own bookkeeping.
        return mergedEntries(memoryUser: slot, paths: try disk.store.archivePaths(user: user), due: due)
            .filter { $0.cacheName != RecordedUse.cacheName }
    }

    /// Every user's collections, in memory and on disk.
    func entriesOfAllUsers() throws -> [CacheEntry] {
        let due = settleDueWipes()
        return mergedEntries(memoryUser: nil, paths: try disk.store.archivePathsOfAllUsers(), due: due)
            .filter { $0.cacheName != RecordedUse.cacheName }
    }

    func setPinned<Model: CacheableModel>(_ pinned: Bool, _ type: Model.Type, key: String?) throws {
        let info = typeInfo(Model.self)
        try Self.checkKey(key, cacheName: info.cacheName)
        let failure = try withDiskWrites { batch -> AppCacheError? in
            let (archiveKey, held) = state.withLock { state -> (ArchiveKey, (key: MemoryKey, entry: MemoryEntry)?) in
                let archiveKey = ArchiveKey(info.cacheNamePart, user: state.user, key: key)
                guard let owner = state.memory.owner(of: archiveKey), let entry = state.memory.peek(owner) else { return (archiveKey, nil) }
                return (archiveKey, (owner, entry))
            }
            let path = disk.store.layout.archivePath(for: archiveKey)
            // What memory holds is newest: write it, pin and all, as a flush would. A clean
            // entry keeps no payload; its items are encoded again.
            if let held, held.entry.hasPayload || held.key.type == ObjectIdentifier(Model.self) {
                var record = held.entry.record
                record.isPinned = pinned
                if !held.entry.hasPayload {
                    let items = held.entry.items.items(as: Model.self)
                    do {
                        let encoded = try configuration.payloadCodec.encode(items)
                        (record.payload, record.codec, record.decodedSize) = (encoded.payload, encoded.codec.headerValue, encoded.decodedSize)
                    } catch {
                        return AppCacheError(
                            code: .encodingFailed, message: "The items could not be encoded again to rewrite their archive; the pin is unchanged.",
                            cacheName: info.cacheName, key: key, underlyingError: error)
                    }
                }
                let identity = try batch.write(record, forKey: archiveKey, at: path)
                state.withLock { state in
                    state.memory.setPinned(pinned, for: archiveKey)
                    state.memory.didWrite(held.key, generation: held.entry.generation, identity: identity, spilled: false)
                }
                return nil
            }
            let notCached = AppCacheError(
                code: .notCached, message: "There is no cached collection to \(pinned ? "pin" : "unpin").",
                cacheName: info.cacheName, key: key)
            switch try disk.store.record(at: path, forKey: archiveKey, versions: ReadableVersions(of: Model.self)) {
            case .missing:
                return notCached
            case .damaged(let problem, _) where problem.code == .schemaMismatch:
                // Of a version this build cannot read: left as it is, for a build that can.
                return notCached
            case .damaged(let problem, _):
                try batch.delete(at: path, key: archiveKey)
                batch.report(AppCacheError(
                    code: problem.code, message: problem.message + " The file was removed.", cacheName: info.cacheName,
                    key: key, path: disk.store.layout.absolutePath(path)))
                return notCached
            case .found(var record, _):
                guard !record.isExpired(at: configuration.now()) else { return notCached }
                record.isPinned = pinned
                let identity = try batch.write(record, forKey: archiveKey, at: path)
                if let held {
                    state.withLock { state in
                        state.memory.setPinned(pinned, for: archiveKey)
                        state.memory.markChecked(held.key, generation: held.entry.generation, epoch: state.memory.epoch, identity: identity)
                    }
                }
                return nil
            }
        }
        if let failure { throw failure }
    }

    /// Removes the archives (of the current user, or all users) whose records `shouldRemove`
    /// picks, and the memory entries it picks; with `sweeping`, also every temporary file.
    private func removeArchives(ofAllUsers: Bool, sweeping: Bool = false, where shouldRemove: (ArchiveRecord) -> Bool) throws {
        try withDiskWrites { batch in
            let (user, doomed) = state.withLock { state in
                let doomed = Set(state.memory.entries(user: ofAllUsers ? nil : state.userSlot)
                    .filter { shouldRemove($0.record) }.map(\.archiveKey))
                for archiveKey in doomed { state.memory.remove(archiveKey) }
                return (state.user, doomed)
            }
            let paths = ofAllUsers ? try disk.store.archivePathsOfAllUsers() : try disk.store.archivePaths(user: user)
            for path in paths {
                guard case .summary(let summary) = disk.store.summary(at: path), disk.store.layout.archivePath(for: summary.archiveKey) == path else {
                    continue
                }
                let archiveKey = summary.archiveKey
                // A collection memory holds is judged by memory, which is newer.
                let inMemory = state.withLock { $0.memory.owner(of: archiveKey) != nil }
                if !inMemory && shouldRemove(summary.record) || doomed.contains(archiveKey) {
                    try batch.delete(at: path, key: archiveKey)
                }
            }
            if sweeping {
                // Every writer holds the lock file while its temporary file exists, and this
                // batch holds it now: whatever temporary file is left is a crash's.
                batch.sweepTemporaryFiles()
            }
        }
    }

    /// - Parameter due: the removals that could not be carried out: their archives are gone
    ///   for every reader.
    private func mergedEntries(memoryUser: Int?, paths: [CachePath], due: DueWipes) -> [CacheEntry] {
        let now = configuration.now()
        // Removed but still on disk (this process's removals, or another's): not listed.
        let removals = disk.coordinator.removals
        let paths = paths.filter { !due.covers($0.directory) && !removals.covers($0.directory) }
        let change = disk.changeCount
        let (memoryEntries, epoch, thresholds) = state.withLock { state in
            state.syncWithDisk(change: change)
            return (
                state.memory.entries(user: memoryUser), state.memory.epoch,
                Dictionary(state.types.values.map { ($0.cacheName, $0.threshold) }, uniquingKeysWith: { first, _ in first }))
        }
        /// The threshold `isStale`, `cachedCollection` and `load` judge by: this cache's override
        /// for the cache name, else the type's own once this cache has used the type; for other
        /// types, the one their writer judged by (recorded with the collection), else the default.
        func threshold(_ cacheName: String, recorded: Duration?) -> Duration {
            configuration.stalenessThresholds[cacheName] ?? thresholds[cacheName] ?? recorded ?? configuration.defaultStalenessThreshold
        }
        let invalidations = currentInvalidations()
        /// Stale by the threshold, or invalidated since it was cached.
        func isStale(_ key: ArchiveKey, cachedAt date: Date, recorded: Duration?) -> Bool {
            Staleness.isStale(
                cachedAt: date, now: now, threshold: threshold(key.cacheName, recorded: recorded),
                latestInvalidation: invalidations.records.isEmpty ? nil : invalidations.latestInvalidation(of: key))
        }
        var listed: [ArchiveKey: (entry: CacheEntry, identity: FileVersion?)] = [:]
        for path in paths {
            guard case .summary(let summary) = disk.store.summary(at: path), disk.store.layout.archivePath(for: summary.archiveKey) == path else {
                continue
            }
            let header = summary.header
            guard !summary.record.isExpired(at: now) else { continue }
            listed[summary.archiveKey] = (CacheEntry(
                user: header.user, cacheName: header.cacheName, key: header.key, bytes: summary.size,
                cachedDate: summary.cachedDate, expiry: header.expiry, isPinned: header.isPinned,
                modelSchemaVersion: Int(clamping: header.schemaVersion),
                isStale: isStale(summary.archiveKey, cachedAt: summary.cachedDate, recorded: header.stalenessThreshold),
                isInMemory: false, isOnDisk: true, isDirty: false), summary.identity)
        }
        for entry in memoryEntries where !entry.record.isExpired(at: now) {
            let archiveKey = entry.archiveKey
            let onDisk = listed[archiveKey]
            // Another process may have changed the archive since memory last checked.
            let facts = onDisk.flatMap { found in found.identity.map { FileFacts(identity: $0, modificationDate: found.entry.cachedDate) } }
            guard entry.agrees(withDisk: facts, epoch: epoch) else { continue }
            listed[archiveKey] = (CacheEntry(
                user: archiveKey.user, cacheName: archiveKey.cacheName, key: archiveKey.key,
                bytes: onDisk?.entry.bytes ?? entry.cost, cachedDate: entry.cachedDate, expiry: entry.expiry,
                isPinned: entry.isPinned, modelSchemaVersion: Int(clamping: entry.record.schemaVersion),
                isStale: isStale(archiveKey, cachedAt: entry.cachedDate, recorded: entry.record.stalenessThreshold),
                isInMemory: true, isOnDisk: onDisk != nil, isDirty: entry.isDirty), onDisk?.identity)
        }
        return listed.values.map(\.entry).sorted { ($0.user ?? "", $0.cacheName, $0.key ?? "") < ($1.user ?? "", $1.cacheName, $1.key ?? "") }
    }
}
