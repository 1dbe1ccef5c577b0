import Foundation

extension QueryClient {
    /// The items of `Model` under `key` now and after every change (see
    /// ``AppCache/updates(_:forKey:)``).
    func updates<Model: CacheableModel>(_ type: Model.Type, forKey key: String?) -> AsyncStream<[Model]?> {
        following(store.typeInfo(Model.self).cacheName, key: key, state: { UpdatesState<Model>() }) { client, signal, seen, yield in
            let now = (fires: signal.fireCount, change: client.store.disk.changeCount)
            let expired = seen.last?.expiry.map { $0 <= client.store.configuration.now() } ?? false
            if seen.last == nil || now != seen.marks || expired {
                seen.marks = now
                let value = await LibraryThreads.run { client.readObserved(Model.self, key: key) }
                if let value, value.differs(from: seen.last) { yield(value.items) }
                seen.last = value ?? seen.last
                client.observers.didLook()
            }
            // Only an expiry needs a timer; other changes wake the stream.
            return .wait(seen.last?.expiry.map { .seconds(max($0.timeIntervalSince(client.store.configuration.now()), 0) + 0.001) })
        }
    }

    /// The current user's pending changes now and after every change of the queue (see
    /// ``AppCache/pendingMutationUpdates()``).
    func pendingMutationUpdates() -> AsyncStream<[PendingMutation]> {
        following(Outbox.observerName, key: nil, state: { [PendingMutation]?.none }) { client, _, last, yield in
            let value = await LibraryThreads.run { client.outbox.pendingMutations }
            if value != last { yield(value) }
            last = value
            return .wait(nil)
        }
    }

    /// A stream of the newest value only, made by `step` on a ``FollowLoop`` woken by the
    /// changes observers hear of `cacheName` and `key` (and by other processes, through the
    /// watcher); it ends when its consumer does, or when the cache goes.
    private func following<Value: Sendable, State>(
        _ cacheName: String, key: String?, state: @escaping @Sendable () -> State,
        step: @escaping @Sendable (QueryClient, ChangeSignal, inout State, (Value) -> Void) async -> FollowLoop.Next
    ) -> AsyncStream<Value> {
        let (stream, continuation) = StreamPair.nonThrowing(of: Value.self, bufferingPolicy: .bufferingNewest(1))
        let signal = ChangeSignal()
        let identifier = observers.add(cacheName: cacheName, key: key, signal: signal)
        watcher.start()
        let task = FollowLoop.start(holding: self, signal: signal, timers: store.configuration.timers, state: state) { client, state in
            await step(client, signal, &state) { continuation.yield($0) }
        } finish: { _ in
            continuation.finish()
        }
        continuation.onTermination = { [weak self] _ in
            task.cancel()
            self?.observers.remove(identifier)
        }
        return stream
    }

    /// What a stream of ``updates(_:forKey:)`` knows between its steps: the value it gave last,
    /// and the signal's and the disk's counts when it looked.
    struct UpdatesState<Model: CacheableModel> {
        var last: Observed<Model>?
        var marks = (fires: UInt64(0), change: UInt64.max)
    }

    /// What an observer last saw of a collection.
    struct Observed<Model: CacheableModel> {
        var items: [Model]?
        /// The generation of the store that put the items in memory, when memory holds them:
        /// every store makes a new one, never reused, and re-dating the items keeps it, so the
        /// same generation means the same items.
        var generation: UInt64?
        /// When the items expire; `nil` for never.
        var expiry: Date?
        /// When they were cached, and whether memory held them (`false`: read from disk).
        var cachedDate: Date?
        var fromMemory = false
        /// The pending changes (``AppCache/enqueue(_:)``) applied to the items, in order.
        var pending: [UUID] = []

        func differs(from other: Observed?) -> Bool {
            guard let other else { return true }
            if items == nil && other.items == nil { return false }
            guard let generation, let otherGeneration = other.generation else { return true }
            return generation != otherGeneration || pending != other.pending
        }
    }

    /// The collection as an observer sees it, its pending changes applied; `nil` when it cannot
    /// be read now (the reason went to `diagnostics`).
    ///
    /// - Parameter target: for a watch bound to a session, whose user's collection it follows
    ///   (confirmed items, for a user who is not current); `nil` for the current user's.
    func readObserved<Model: CacheableModel>(_ type: Model.Type, key: String?, for target: CacheSession? = nil) -> Observed<Model>? {
        if let target {
            let standing = store.standing(of: target)
            // The session's user's data was removed: there is nothing of theirs to show.
            guard standing.mayWrite else { return Observed(items: nil) }
            if !standing.isCurrent {
                do {
                    guard let found = try store.readCollection(Model.self, key: key, ofOtherUser: target.user) else { return Observed(items: nil) }
                    return Observed(
                        items: found.items, generation: found.generation, expiry: found.expiry, cachedDate: found.cachedDate,
                        fromMemory: !found.fromDisk)
                } catch {
                    store.reportAll([AppCacheError(wrapping: error)])
                    return nil
                }
            }
        }
        // A collection that cannot be read now (reported) ends the read as one not cached does:
        // with nothing to apply the queue to, and nothing to read again.
        var isUnreadable = false
        var confirmed: Observed<Model>?
        let read = outbox.readingWithPending(Model.self, key: key) { () -> [Model]? in
            confirmed = readObservedConfirmed(Model.self, key: key)
            isUnreadable = confirmed == nil
            return confirmed?.items
        }
        if isUnreadable { return nil }
        guard let read, var observed = confirmed else { return Observed(items: nil) }
        (observed.items, observed.pending) = (read.items, read.applied)
        return observed
    }

    /// The confirmed collection as an observer sees it, without pending changes.
    private func readObservedConfirmed<Model: CacheableModel>(_ type: Model.Type, key: String?) -> Observed<Model>? {
        func fromMemory() -> Observed<Model>? {
            let found = store.memoryLookup(ObjectIdentifier(Model.self), key) { memory, key in
                memory.hit(key) { entry in (MemoryHit(entry), entry.itemsGeneration) }
            }
            guard let (hit, generation) = found, !hit.expires || store.isLive(hit) else { return nil }
            return Observed(
                items: hit.items.items(as: Model.self), generation: generation, expiry: hit.expires ? hit.expiry : nil,
                cachedDate: hit.cachedDate, fromMemory: true)
        }
        if let value = fromMemory() { return value }
        do {
            guard let loaded = try store.loadAfterMiss(Model.self, key: key) else { return Observed(items: nil) }
            if var value = fromMemory() {
                value.fromMemory = !loaded.fromDisk
                return value
            }
            return Observed(items: loaded.items, expiry: loaded.expiry, cachedDate: loaded.cachedDate)
        } catch {
            store.reportAll([AppCacheError(wrapping: error)])
            return nil
        }
    }
}
