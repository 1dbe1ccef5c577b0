import Foundation

extension CollectionStore {
    /// Changes items by id in every collection of `Model` of the session's user that holds
    /// one of `ids`, and in the one under `alsoKey` (when given) if it is cached: each a
    /// read-modify-write of ``update(_:forKey:session:onlyWhileCurrent:onlyIfCached:_:)``,
    /// atomic across processes, that keeps the collection's cached date, validators, cursor,
    /// pin and expiry. A collection that turns out not to hold the ids is not written.
    ///
    /// - Parameters:
    ///   - given: the session whose user's collections change, current or not; `nil` for the
    ///     current user.
    ///   - transform: changes one collection's items; told the collection's key.
    /// - Returns: the keys of the collections written, sorted (`nil` key first).
    /// - Complexity: O(k) index look-ups and k updates for k collections holding the ids, once
    ///   the index of the type agrees with the disk; checking it after another process's
    ///   change lists the type's collections and reads those whose archive changed.
    func updateItems<Model: CacheableModel & Identifiable>(
        _ type: Model.Type, ids: Set<Model.ID>, alsoKey: String?, session given: CacheSession?,
        _ transform: (inout [Model], _ key: String?) throws -> Void
    ) throws -> [String?] {
        let target = given ?? session
        var keys = try keys(of: Model.self, holding: Set(ids.map { AnyHashable($0) }), user: target.user)
        if let alsoKey { keys.insert(alsoKey) }
        var written: [String?] = []
        for key in keys.sorted(by: { ($0 ?? "", $0 == nil ? 0 : 1) < ($1 ?? "", $1 == nil ? 0 : 1) }) {
            do {
                let stored = try update(Model.self, forKey: key, session: target, onlyIfCached: true) { items, _ in
                    guard key == alsoKey || items.contains(where: { ids.contains($0.id) }) else { throw Unchanged() }
                    try transform(&items, key)
                }
                if stored != nil { written.append(key) }
            } catch is Unchanged {
                continue
            }
        }
        return written
    }

    /// Thrown by a transform that found nothing to change: the update writes nothing.
    private struct Unchanged: Error {}

    /// The keys of `user`'s collections of `Model` that hold one of `ids`, from the type's
    /// ``ItemIndex``: built on its first use, checked again when another process changed the
    /// disk since it last agreed with it.
    func keys<Model: CacheableModel & Identifiable>(of type: Model.Type, holding ids: Set<AnyHashable>, user: String?) throws -> Set<String?> {
        let scope = ItemIndex.Scope(type: ObjectIdentifier(Model.self), user: user)
        let change = disk.changeCount
        let (known, resets) = state.withLock { state -> (ItemIndex.Collections, UInt64) in
            if state.itemIndex.ids(of: scope.type) == nil {
                state.itemIndex.track(Model.self)
                state.types[scope.type]?.itemIDs = state.itemIndex.ids(of: scope.type)
                state.lastType = nil
            }
            return (state.itemIndex.open(scope), state.itemIndex.resets)
        }
        if known.validAt == change { return known.keys(holding: ids) }
        let found = try indexedCollections(of: Model.self, user: user, known: known.byKey)
        return state.withLock { state in
            state.itemIndex.store(found, for: scope, change: change, writesBefore: known.writes, resetsBefore: resets)
            return state.itemIndex.collections(scope)?.keys(holding: ids) ?? []
        }
    }

    /// The ids every collection of `Model` of `user` holds, in memory and on disk: those whose
    /// archive is the one `known` was read from are taken from it, the others read.
    private func indexedCollections<Model: CacheableModel & Identifiable>(
        of type: Model.Type, user: String?, known: [String?: ItemIndex.Indexed]
    ) throws -> [String?: ItemIndex.Indexed] {
        let info = typeInfo(Model.self)
        let typeID = ObjectIdentifier(Model.self)
        let now = configuration.now()
        func ids(_ items: [Model]) -> Set<AnyHashable> { Set(items.map { AnyHashable($0.id) }) }
        // What memory holds of the type for the user: a dirty entry is newer than the disk; a
        // clean one is as good as its archive, if that is still the file on disk.
        let held = state.withLock { state -> [String?: MemoryEntry] in
            var held: [String?: MemoryEntry] = [:]
            for entry in state.memory.entries(user: nil) {
                let archiveKey = entry.archiveKey
                guard archiveKey.user == user, archiveKey.cacheName == info.cacheName, state.memory.owner(of: archiveKey)?.type == typeID
                else { continue }
                held[archiveKey.key] = entry
            }
            return held
        }
        let due = settleDueWipes()
        let removals = disk.coordinator.removals
        let prefix = ArchiveFileName.commonPrefix(cacheName: info.cacheName)
        var found: [String?: ItemIndex.Indexed] = [:]
        for path in try disk.store.archivePaths(user: user)
        where path.name.hasPrefix(prefix) && !due.covers(path.directory) && !removals.covers(path.directory) {
            guard case .summary(let summary) = disk.store.summary(at: path), summary.header.cacheName == info.cacheName,
                summary.header.user == user, disk.store.layout.archivePath(for: summary.archiveKey) == path
            else { continue }
            let key = summary.header.key
            if let entry = held[key], entry.isDirty || entry.diskIdentity == summary.identity {
                found[key] = ItemIndex.Indexed(ids: ids(entry.items.items(as: Model.self)), identity: summary.identity)
            } else if let indexed = known[key], indexed.identity == summary.identity {
                found[key] = indexed
            } else if !summary.record.isExpired(at: now), let items = try readArchive(Model.self, at: path, key: summary.archiveKey) {
                found[key] = ItemIndex.Indexed(ids: ids(items), identity: summary.identity)
            }
        }
        for (key, entry) in held where found[key] == nil && entry.isDirty {
            found[key] = ItemIndex.Indexed(ids: ids(entry.items.items(as: Model.self)), identity: nil)
        }
        return found
    }

    /// The items of the archive at `path`, read and decoded without entering memory; `nil`
    /// when it is gone, expired or unreadable (a read of its own judges a damaged one).
    private func readArchive<Model: CacheableModel>(_ type: Model.Type, at path: CachePath, key archiveKey: ArchiveKey) throws -> [Model]? {
        let read = try disk.store.read(at: path, forKey: archiveKey, versions: ReadableVersions(of: Model.self), change: disk.changeCount) {
            record, payload in
            ReadArchive(record: record, decoded: decode(Model.self, payload, of: record), payloadSize: payload.count)
        }
        reports.deliver(to: diagnose)
        guard case .found(let found, _) = read else { return nil }
        switch found.decoded {
        case .items(let decoded), .upgraded(let decoded): return decoded.items(as: Model.self)
        case .expired, .unknownCodec, .failed, .conversionFailed: return nil
        }
    }
}
