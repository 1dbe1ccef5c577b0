import Foundation

extension AppCache {
    /// The collection of `Model` under `key` of the current user, now and after every change.
    ///
    /// The stream yields the current items at once (`nil` when none), then the items after every
    /// change to that collection: ``cacheItems(_:forKey:expiresAfter:)`` (and loads, updates and
    /// single-item writes), removals, expiry (when the time to live passes, with no call needed),
    /// wipes, and user switches (then the new user's items, or `nil`). Rapid changes may
    /// coalesce into one value, but a value never follows a newer one. Changes written by
    /// another process or instance sharing the root are yielded as soon as they reach its disk:
    /// the writer wakes this process (a futex on the lock file's shared counter on Linux, a
    /// Darwin notification on Apple platforms), and no timer runs while nothing changes.
    ///
    /// ```swift
    /// for await posts in cache.updates(of: Post.self, forKey: "top") {
    ///     render(posts ?? [])
    /// }
    /// ```
    ///
    /// Reads run on a task of the stream's own, off the caller's executor. Ending the
    /// consuming task ends the stream and frees what it held. The stream does not keep the
    /// cache alive: keep a reference to the cache for as long as you follow it (an app's cache
    /// lives as long as the app); the stream finishes when the cache goes away.
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - key: which collection of the type; `nil` for its default collection.
    /// - Returns: a stream of the collection's items, newest last.
    public func updates<Model: CacheableModel>(of type: Model.Type, forKey key: String? = nil) -> AsyncStream<[Model]?> {
        let (stream, continuation) = StreamPair.nonThrowing(of: [Model]?.self, bufferingPolicy: .bufferingNewest(1))
        let signal = ChangeSignal()
        let identifier = observers.add(cacheName: typeInfo(Model.self).cacheName, key: key, signal: signal)
        watcher.start()
        let task = Task.detached { [weak self] in
            var last: Observed<Model>?
            var seen = (fires: UInt64(0), change: UInt64.max)
            var timeout: Duration?
            while !Task.isCancelled {
                do {
                    guard let self else { break }
                    let now = (fires: signal.fireCount, change: disk.changeCount)
                    let expired = last?.expiry.map { $0 <= configuration.now() } ?? false
                    if last == nil || now != seen || expired {
                        seen = now
                        let value = await LibraryThreads.run { [self] in observe(Model.self, key: key) }
                        if let value, value.differs(from: last) { continuation.yield(value.items) }
                        last = value ?? last
                        observers.didLook()
                    }
                    // Only an expiry needs a timer; other changes wake the stream.
                    timeout = last?.expiry.map { .seconds(max($0.timeIntervalSince(configuration.now()), 0) + 0.001) }
                }
                await signal.wait(timeout: timeout)
            }
            continuation.finish()
        }
        continuation.onTermination = { [weak self] _ in
            task.cancel()
            self?.observers.remove(identifier)
        }
        return stream
    }

    // MARK: - Internal

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
    func observe<Model: CacheableModel>(_ type: Model.Type, key: String?) -> Observed<Model>? {
        guard var observed = observeConfirmed(Model.self, key: key) else { return nil }
        if let items = observed.items {
            (observed.items, observed.pending) = applyingPending(items, of: Model.self, key: key)
        }
        return observed
    }

    /// The confirmed collection as an observer sees it, without pending changes.
    private func observeConfirmed<Model: CacheableModel>(_ type: Model.Type, key: String?) -> Observed<Model>? {
        func fromMemory() -> Observed<Model>? {
            let found = memoryLookup(ObjectIdentifier(Model.self), key) { memory, key in
                memory.hit(key) { entry in (MemoryHit(entry), entry.itemsGeneration) }
            }
            guard let (hit, generation) = found, !hit.expires || isLive(hit) else { return nil }
            return Observed(
                items: hit.items.items(as: Model.self), generation: generation, expiry: hit.expires ? hit.expiry : nil,
                cachedDate: hit.cachedDate, fromMemory: true)
        }
        if let value = fromMemory() { return value }
        do {
            guard let loaded = try loadAfterMiss(Model.self, key: key) else { return Observed(items: nil) }
            if var value = fromMemory() {
                value.fromMemory = !loaded.fromDisk
                return value
            }
            return Observed(items: loaded.items, expiry: loaded.expiry, cachedDate: loaded.cachedDate)
        } catch {
            reportAll([(error as? AppCacheError) ?? AppCacheError(code: .ioFailure, message: "\(error)")])
            return nil
        }
    }
}
