import Foundation

#if canImport(Network)
import Network
#endif

extension QueryClient {
    /// The stream of a watch (see ``AppCache/watch(_:forKey:policy:refresh:retry:fetch:)``).
    ///
    /// - Parameter target: the session the watch is bound to; `nil` for whoever is current.
    func watch<Model: CacheableModel>(
        _ type: Model.Type, forKey key: String?, policy: LoadPolicy, refresh: RefreshTriggers, retry: RetryPolicy,
        for target: CacheSession?, fetch: @escaping @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>
    ) -> AsyncThrowingStream<LoadedItems<Model>, any Error> {
        let (stream, continuation) = StreamPair.throwing(of: LoadedItems<Model>.self)
        let stop = startWatch(
            Model.self, key: key, policy: policy, fetchesFirst: true, refresh: refresh, retry: retry, for: target, fetch: fetch,
            yield: { loaded in if let loaded { continuation.yield(loaded) } },
            finish: { error in continuation.finish(throwing: error) })
        continuation.onTermination = { _ in stop() }
        return stream
    }

    /// Runs a watch (see ``watch(_:forKey:policy:refresh:retry:fetch:)``) on a task of its own.
    ///
    /// - Parameters:
    ///   - target: the session the watch is bound to; `nil` for whoever is current.
    ///   - fetchesFirst: whether the first look may fetch as `policy` says (`false`: only
    ///     triggers and invalidations fetch, a ``CachedQuery`` whose `refresh()` loads).
    ///   - yield: each new value; `nil` when the collection went (removed, expired, a switch to
    ///     a user who has none).
    ///   - finish: the end, with the error that ended it.
    /// - Returns: what stops the watch.
    func startWatch<Model: CacheableModel>(
        _ type: Model.Type, key: String?, policy: LoadPolicy, fetchesFirst: Bool, refresh: RefreshTriggers, retry: RetryPolicy,
        for target: CacheSession? = nil,
        fetch: @escaping @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>,
        yield: @escaping @Sendable (LoadedItems<Model>?) -> Void, finish: @escaping @Sendable ((any Error)?) -> Void
    ) -> @Sendable () -> Void {
        // Called from inside a fetch: not from inside this collection's own (it would wait for
        // itself). The fetches this watch starts carry what the caller's fetch carries.
        let scope = FetchScope.current.get()
        if !scope.isEmpty, let refusal = nestedLoadRefusal(Model.self, key: key, session: target, in: scope, operation: "watch") {
            finish(refusal)
            return {}
        }
        noteUse(Model.self, key: key, for: target, fetch: fetch)
        let refresh = store.configuration.followsRefreshTriggers ? refresh : .none
        let signal = ChangeSignal()
        let observer = observers.add(cacheName: store.typeInfo(Model.self).cacheName, key: key, signal: signal)
        let trigger = refreshTriggers.register(refresh, signal: signal)
        watcher.start()
        if refresh.onReconnect { startPathMonitorIfNeeded() }
        let timers = store.configuration.timers
        let task = FollowLoop.start(
            holding: self, signal: signal, timers: timers,
            state: {
                var watch = WatchState<Model>(policy: policy, every: refresh.every, now: timers.uptime)
                watch.fetchesFirst = fetchesFirst
                watch.target = target
                watch.scope = scope
                return watch
            },
            step: { client, watch in
                let timeout = try await client.step(&watch, key: key, retry: retry, trigger: trigger, fetch: fetch, yield: yield)
                guard watch.again else { return .wait(timeout) }
                watch.again = false
                return .again
            },
            finish: finish)
        return { [weak self] in
            task.cancel()
            self?.observers.remove(observer)
            self?.refreshTriggers.remove(trigger)
        }
    }

    /// What a watch knows between its steps.
    struct WatchState<Model: CacheableModel> {
        let policy: LoadPolicy
        let every: Duration?
        /// What was yielded last.
        var last: Observed<Model>?
        /// What `fetchFirst`'s first look found, held back until its fetch fails.
        var held: Observed<Model>?
        var isFirst = true
        /// When polling counts from: the start, then the end of every fetch.
        var pollFrom: Duration
        /// The cached date of the items the last fetch stored: the look that finds them says
        /// they came from the fetch.
        var fetchedDate: Date?
        /// Whether to step again at once (an invalidation came during the flight).
        var again = false
        /// Whether the first look may fetch as `policy` says.
        var fetchesFirst = true
        /// When this watch last started a fetch, in milliseconds since 1970 (as invalidations
        /// are recorded).
        var lastFetchStart: Int64?
        /// The session the watch is bound to (its user's collection, current or not); `nil` for
        /// whoever is current.
        var target: CacheSession?
        /// The collections whose fetches the watch was started from (``FetchScope``).
        var scope: Set<FetchScope.Collection> = []

        init(policy: LoadPolicy, every: Duration?, now: Duration) {
            self.policy = policy
            self.every = every
            pollFrom = now
        }
    }

    /// One step of a watch: look at the collection (yield it if it changed), then fetch if a
    /// trigger says so.
    ///
    /// - Returns: how long to wait for the next event at most (`nil`: no timer).
    func step<Model: CacheableModel>(
        _ watch: inout WatchState<Model>, key: String?, retry: RetryPolicy, trigger: UInt64,
        fetch: @escaping @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>,
        yield: (LoadedItems<Model>?) -> Void
    ) async throws -> Duration? {
        func answer(_ observed: Observed<Model>, source: LoadedItems<Model>.Source? = nil, refreshError: (any Error)? = nil) -> LoadedItems<Model>? {
            guard let items = observed.items, let cachedDate = observed.cachedDate else { return nil }
            let from: LoadedItems<Model>.Source = source ?? (cachedDate == watch.fetchedDate ? .fetch : observed.fromMemory ? .memory : .disk)
            return LoadedItems(
                items: items, cachedDate: cachedDate, isStale: store.isStale(Model.self, key: key, cachedAt: cachedDate), source: from,
                refreshError: refreshError, hasPendingMutations: !observed.pending.isEmpty)
        }

        // 1. Look.
        let target = watch.target
        if let observed = await LibraryThreads.run({ [self] in readObserved(Model.self, key: key, for: target) }), observed.differs(from: watch.last) {
            if watch.isFirst && watch.fetchesFirst && watch.policy == .fetchFirst {
                watch.held = observed
            } else {
                if let loaded = answer(observed) {
                    yield(loaded)
                } else if watch.last?.items != nil {
                    yield(nil)  // the collection went
                }
                watch.last = observed
            }
        }
        observers.didLook()

        // 2. Decide.
        let marks = refreshTriggers.take(trigger)
        let shown = watch.last ?? watch.held
        let cachedDate = shown?.items == nil ? nil : shown?.cachedDate
        let stale = cachedDate.map { store.isStale(Model.self, key: key, cachedAt: $0) } ?? true
        var shouldFetch: Bool
        if watch.isFirst && !watch.fetchesFirst {
            shouldFetch = false
        } else if watch.isFirst {
            switch watch.policy {
            case .staleWhileRevalidate: shouldFetch = stale
            case .cacheFirst: shouldFetch = cachedDate == nil
            case .fetchFirst: shouldFetch = true
            }
        } else {
            // Invalidated since it was cached, and since this watch last fetched (a fetch in the
            // very moment of the invalidation answered it already).
            let latest = store.latestInvalidation(of: Model.self, key: key)
            let invalidated = latest.map { latest in
                cachedDate.map { Staleness.invalidates(latest, cachedAt: $0) } ?? false && watch.lastFetchStart.map { latest > $0 } ?? true
            } ?? false
            shouldFetch = invalidated || ((marks.foreground || marks.reconnect) && stale)
        }
        let polling = watch.every.map { _ in !refreshTriggers.isInBackground } ?? false
        if let every = watch.every, polling, store.configuration.timers.uptime - watch.pollFrom >= every { shouldFetch = true }
        watch.isFirst = false

        // 3. Fetch.
        if shouldFetch {
            let startedAt = store.configuration.now()
            watch.lastFetchStart = Milliseconds.moment(startedAt)
            let (current, switches) = store.sessionAndSwitches
            let session = target ?? current
            let scope = watch.scope
            let cached = try await LibraryThreads.run { [self] in try readForLoad(Model.self, key: key, switches: switches, for: target) }
            let outcome = await flights.join(
                FlightTable.Key(session: session, type: ObjectIdentifier(Model.self), key: key), as: Model.self
            ) { [self] in
                await performFetch(
                    Model.self, key: key, session: session, validators: cached?.stored.validators, isPinned: cached?.stored.isPinned ?? false,
                    retry: retry, scope: scope
                ) { validators in
                    try await fetch(LoadContext(cachedItems: cached?.loaded.items, validators: validators, key: key))
                }
            }
            watch.pollFrom = store.configuration.timers.uptime
            switch outcome {
            case .items(_, let date):
                // Stored: the store woke this watch, whose next look yields the items.
                watch.fetchedDate = date
            case .notModified(let date):
                if var current = watch.last ?? watch.held, let items = current.items {
                    current.cachedDate = date
                    yield(LoadedItems(
                        items: items, cachedDate: date, isStale: false, source: .notModified, hasPendingMutations: !current.pending.isEmpty))
                    watch.last = current
                }
            case .failed(let error):
                guard let shown = watch.last ?? watch.held, let loaded = answer(shown, refreshError: error) else { throw error }
                yield(loaded)
                watch.last = shown
            case .dropped, .cancelled:
                break
            }
            watch.held = nil
            // Invalidated while the flight was under way: what it brought may predate the reason.
            if case .items = outcome, isInvalidated(Model.self, key: key, since: startedAt) { watch.again = true }
        }

        // 4. How long to wait: until the items expire, or the next poll.
        var timeout = watch.last?.expiry.map { Duration.seconds(max($0.timeIntervalSince(store.configuration.now()), 0) + 0.001) }
        if let every = watch.every, polling {
            let remaining = max(every - (store.configuration.timers.uptime - watch.pollFrom), .milliseconds(1))
            timeout = min(timeout ?? remaining, remaining)
        }
        return timeout
    }

    /// Whether an invalidation of the current user's collection of `Model` under `key` was
    /// recorded after `moment` (one in the same millisecond counts as answered).
    func isInvalidated<Model: CacheableModel>(_ type: Model.Type, key: String?, since moment: Date) -> Bool {
        store.latestInvalidation(of: Model.self, key: key).map { $0 > Milliseconds.moment(moment) } ?? false
    }

    /// Starts the system's network path monitor once (Apple platforms): the network coming
    /// back does what ``AppCache/networkDidBecomeAvailable()`` does.
    func startPathMonitorIfNeeded() {
        #if canImport(Network)
        guard refreshTriggers.claimPathMonitor() else { return }
        let box = PathMonitorBox()
        let previous = Locked<NWPath.Status?>(nil)
        box.monitor.pathUpdateHandler = { [weak self] path in
            let before = previous.withLock { last -> NWPath.Status? in
                defer { last = path.status }
                return last
            }
            if path.status == .satisfied, let before, before != .satisfied { self?.networkDidBecomeAvailable() }
        }
        box.monitor.start(queue: DispatchQueue(label: "AppCache.networkPath", qos: .utility))
        pathMonitors.withLock { $0.append { box.monitor.cancel() } }
        #endif
    }
}

#if canImport(Network)
/// Holds the path monitor for the cache's life (older SDKs do not mark it `Sendable`).
final class PathMonitorBox: @unchecked Sendable {
    let monitor = NWPathMonitor()
}
#endif
