import Foundation

/// Which cached collections hold which item ids, for each user and model type that writes by
/// id (``CollectionStore/updateItems(_:ids:alsoKey:session:_:)``) have used: what lets a write
/// by id find the collections holding an item without decoding every collection of the type.
///
/// **Rebuilt, not persisted.** The index is derived from the archives, which stay the only
/// truth: a second file of ids would have to agree with them after kills, purges and other
/// processes' writes, and every write would pay for keeping it so. Here a scope (a user and a
/// type) is built on its first use, by reading the type's collections once; from then on this
/// process's writes keep it exact as they store their items (their ids are taken outside the
/// lock), and each of its own disk batches carries it to the new change count. When another
/// process changed the disk, the scope is checked again: the type's collections are listed (a
/// name filter, then one header each), and only those whose archive is not the one indexed are
/// read again.
///
/// Thread safety: a value inside the store's state lock; nothing in it does I/O or runs the
/// app's code.
struct ItemIndex {
    /// One user's collections of one type.
    struct Scope: Hashable {
        var type: ObjectIdentifier
        var user: String?
    }

    /// What one collection held when it was indexed.
    struct Indexed {
        var ids: Set<AnyHashable>
        /// The archive read or written (`nil`: the items are not on disk yet, or came from
        /// memory).
        var identity: FileVersion?
        /// The scope's write count when this process wrote it (`nil`: read from disk).
        var written: UInt64?
    }

    /// One scope's index.
    struct Collections {
        /// The disk's change count the scope agrees with; `nil` before it was built.
        var validAt: UInt64?
        var byKey: [String?: Indexed] = [:]
        var keysByID: [AnyHashable: Set<String?>] = [:]
        /// Counts this process's writes into the scope.
        var writes: UInt64 = 0

        /// Sets what the collection under `key` holds, keeping ``keysByID`` in step.
        mutating func set(_ key: String?, _ indexed: Indexed?) {
            let old = byKey[key]?.ids ?? []
            let new = indexed?.ids ?? []
            for id in old.subtracting(new) {
                keysByID[id]?.remove(key)
                if keysByID[id]?.isEmpty == true { keysByID[id] = nil }
            }
            for id in new.subtracting(old) { keysByID[id, default: []].insert(key) }
            byKey[key] = indexed
        }

        /// The keys of the collections holding one of `ids`.
        func keys(holding ids: Set<AnyHashable>) -> Set<String?> {
            var keys: Set<String?> = []
            for id in ids { keys.formUnion(keysByID[id] ?? []) }
            return keys
        }
    }

    /// Takes the ids of a collection's items (stored with their type erased).
    typealias IDs = @Sendable (ErasedItems) -> Set<AnyHashable>

    /// The types that have an index, with how to take their items' ids.
    private(set) var types: [ObjectIdentifier: IDs] = [:]
    private(set) var scopes: [Scope: Collections] = [:]
    /// Counts the times every scope was made to be checked again (``requireRecheck()``): a
    /// check that began before the last time does not mark its scope as agreeing.
    private(set) var resets: UInt64 = 0

    /// How writes of `type` take their items' ids; `nil` while the type has no index (writes
    /// then pay nothing).
    func ids(of type: ObjectIdentifier) -> IDs? {
        types.isEmpty ? nil : types[type]
    }

    /// Starts indexing `Model`.
    mutating func track<Model: CacheableModel & Identifiable>(_ type: Model.Type) {
        let id = ObjectIdentifier(Model.self)
        guard types[id] == nil else { return }
        types[id] = { items in Set(items.items(as: Model.self).map { AnyHashable($0.id) }) }
    }

    /// The scope, made empty if it was not there: from now on this process's writes into it
    /// are noted, also while its first build runs.
    mutating func open(_ scope: Scope) -> Collections {
        if let collections = scopes[scope] { return collections }
        scopes[scope] = Collections()
        return scopes[scope]!
    }

    /// The scope as it stands.
    func collections(_ scope: Scope) -> Collections? {
        scopes[scope]
    }

    /// Records this process's write of `user`'s collection of `type` under `key`, holding
    /// `ids` (`identity`: the archive written, when written through); a scope not built yet
    /// is left to its build.
    mutating func noteWrite(type: ObjectIdentifier, user: String?, key: String?, ids: Set<AnyHashable>, identity: FileVersion?) {
        let scope = Scope(type: type, user: user)
        guard scopes[scope] != nil else { return }
        scopes[scope]!.writes &+= 1
        scopes[scope]!.set(key, Indexed(ids: ids, identity: identity, written: scopes[scope]!.writes))
    }

    /// Keeps what a build or check of `scope` found, begun at the scope's write count
    /// `writesBefore` and the index's `resetsBefore` when the disk's change count was
    /// `change`: collections this process wrote since are kept as written.
    mutating func store(_ found: [String?: Indexed], for scope: Scope, change: UInt64, writesBefore: UInt64, resetsBefore: UInt64) {
        var collections = scopes[scope] ?? Collections()
        for key in Set(collections.byKey.keys).union(found.keys) {
            if let written = collections.byKey[key]?.written, written > writesBefore { continue }
            collections.set(key, found[key])
        }
        collections.validAt = resetsBefore == resets ? change : nil
        scopes[scope] = collections
    }

    /// This process's own batch moved the disk's change count from `before` to `after`: scopes
    /// that agreed with the disk before still do (its writes were noted as they were stored).
    mutating func didChange(from before: UInt64, to after: UInt64) {
        guard !scopes.isEmpty else { return }
        for (scope, collections) in scopes where collections.validAt == before {
            scopes[scope]!.validAt = after
        }
    }

    /// Makes every scope be checked against the disk before it is used again: the lock file
    /// was made anew (the root was purged), and with it the change count the scopes agree by.
    mutating func requireRecheck() {
        resets &+= 1
        for scope in scopes.keys { scopes[scope]!.validAt = nil }
    }
}
