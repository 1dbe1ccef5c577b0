#if canImport(AppCacheAtomics)
import AppCacheAtomics
#endif
import Foundation

/// Where the cache's events go: the streams of ``AppCache/events``, the counters of
/// ``AppCache/statistics()`` and, when asked, the system log.
///
/// Counting is always on (its sites are on the slow paths: disk reads, fetches, writes; memory
/// hits count in their entries, see ``MemoryEntry/hits``). Delivery costs one atomic load when
/// nobody observes: ``isObserved`` is checked before an event is made.
///
/// Thread safety: `Sendable`; its locks are held only to change a table or to hand an event to
/// the streams, which never block.
final class CacheEventHub: @unchecked Sendable {
    /// The streams' continuations, by id.
    private let observers = Locked<(next: UInt64, continuations: [UInt64: AsyncStream<CacheEvent>.Continuation])>((0, [:]))
    /// How many observers there are (the system log counts as one): read on every hit, without
    /// a lock. Written only under `observers`' lock.
    private let observerCount: UnsafeMutablePointer<UInt64>
    /// The counters, by collection.
    private let counts = Locked<[ArchiveKey: CacheStatistics.Counts]>([:])
    /// The system log, when the configuration asks for it.
    let systemLog: SystemLog?
    /// Told whether anyone observes, under the observers' lock, whenever that may have changed
    /// (the store keeps it beside its memory, see ``StoreState/eventsObserved``).
    private let observedChanged = Locked<(@Sendable (Bool) -> Void)?>(nil)
    /// The cache's clock.
    let now: @Sendable () -> Date
    /// When counting began.
    let since: Date

    /// An event of a collection, as a batch records it (``record(_:)``).
    struct Happened {
        var kind: CacheEvent.Kind
        /// The collection: its names, with their hash made once (the counts are by collection).
        var collection: ArchiveKey
    }

    init(now: @escaping @Sendable () -> Date, systemLog: SystemLog?) {
        self.now = now
        self.systemLog = systemLog
        since = now()
        observerCount = .allocate(capacity: 1)
        observerCount.initialize(to: systemLog == nil ? 0 : 1)
    }

    deinit {
        // Finishing a stream resumes the task waiting on it (a Dispatch call): on a library
        // thread, as this thread may be exiting (see ``LibraryThreads/handOff(_:)``).
        let followed = observers.withLock { Array($0.continuations.values) }
        if !followed.isEmpty {
            LibraryThreads.handOff {
                for continuation in followed { continuation.finish() }
            }
        }
        observerCount.deallocate()
    }

    /// Whether anyone receives events.
    ///
    /// - Complexity: one atomic load.
    @inline(__always)
    var isObserved: Bool {
        #if canImport(AppCacheAtomics)
        appcache_load_acquire(observerCount) != 0
        #else
        observers.withLock { _ in observerCount.pointee != 0 }
        #endif
    }

    /// Sets the observer count; call holding the observers' lock.
    private func setObserverCount(_ count: Int) {
        let value = UInt64(count) + (systemLog == nil ? 0 : 1)
        #if canImport(AppCacheAtomics)
        appcache_store_release(observerCount, value)
        #else
        observerCount.pointee = value
        #endif
    }

    /// Calls `body` with whether anyone observes now and whenever that changes.
    func followObserved(_ body: @escaping @Sendable (Bool) -> Void) {
        observers.withLock { state in
            observedChanged.withLock { $0 = body }
            body(!state.continuations.isEmpty || systemLog != nil)
        }
    }

    /// A new stream of every event from now on, buffering the newest `limit` a slow reader has
    /// not taken.
    func stream(bufferingNewest limit: Int = 4096) -> AsyncStream<CacheEvent> {
        let (stream, continuation) = StreamPair.nonThrowing(of: CacheEvent.self, bufferingPolicy: .bufferingNewest(limit))
        let id = observers.withLock { state -> UInt64 in
            state.next += 1
            state.continuations[state.next] = continuation
            setObserverCount(state.continuations.count)
            observedChanged.withLock { $0 }?(true)
            return state.next
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            self.observers.withLock { state in
                state.continuations[id] = nil
                self.setObserverCount(state.continuations.count)
                self.observedChanged.withLock { $0 }?(!state.continuations.isEmpty || self.systemLog != nil)
            }
        }
        return stream
    }

    /// Counts what `kind` counts for the collection and, when observed, delivers the event.
    func record(_ kind: CacheEvent.Kind, cacheName: String?, key: String?, user: String?) {
        if let cacheName {
            record(kind, for: ArchiveKey(user: user, cacheName: cacheName, key: key))
            return
        }
        guard isObserved else { return }
        deliver(CacheEvent(kind, cacheName: nil, key: key, user: user, date: now()))
    }

    /// ``record(_:cacheName:key:user:)`` of an event of one collection, by the key the caller
    /// holds (hashed once, when it was made).
    func record(_ kind: CacheEvent.Kind, for collection: ArchiveKey) {
        if Self.counts(kind) {
            counts.withLock { _ = Self.count(kind, in: &$0[collection, default: .init()]) }
        }
        guard isObserved else { return }
        deliver(CacheEvent(kind, cacheName: collection.cacheName, key: collection.key, user: collection.user, date: now()))
    }

    /// ``record(_:for:)`` of two events of one collection, in order: counted under one lock
    /// and one look-up of the collection's counters (a disk hit's decode and hit).
    func record(_ first: CacheEvent.Kind, _ second: CacheEvent.Kind, for collection: ArchiveKey) {
        if Self.counts(first) || Self.counts(second) {
            func count(_ counts: inout CacheStatistics.Counts) {
                Self.count(first, in: &counts)
                Self.count(second, in: &counts)
            }
            counts.withLock { count(&$0[collection, default: .init()]) }
        }
        guard isObserved else { return }
        let date = now()
        deliver(CacheEvent(first, cacheName: collection.cacheName, key: collection.key, user: collection.user, date: date))
        deliver(CacheEvent(second, cacheName: collection.cacheName, key: collection.key, user: collection.user, date: date))
    }

    /// ``record(_:cacheName:key:user:)`` for many events at once: counted under one lock
    /// (a flush of a thousand collections takes it once, not a thousand times).
    func record(_ events: [Happened]) {
        guard !events.isEmpty else { return }
        counts.withLock { counts in
            for event in events where Self.counts(event.kind) {
                Self.count(event.kind, in: &counts[event.collection, default: .init()])
            }
        }
        guard isObserved else { return }
        for event in events {
            let collection = event.collection
            deliver(CacheEvent(event.kind, cacheName: collection.cacheName, key: collection.key, user: collection.user, date: now()))
        }
    }

    /// Delivers `event` to every stream and the system log.
    func deliver(_ event: CacheEvent) {
        systemLog?.log(event)
        observers.withLock { state in
            // Yielding never blocks nor runs the reader: it buffers and resumes it elsewhere.
            for continuation in state.continuations.values { continuation.yield(event) }
        }
    }

    /// The counters so far, with the memory hits the store counts (by collection).
    func statistics(memoryHits: [ArchiveKey: Int]) -> CacheStatistics {
        var table = counts.withLock { $0 }
        for (name, hits) in memoryHits { table[name, default: .init()].memoryHits += hits }
        let collections = table.map { CacheStatistics.Collection(cacheName: $0.key.cacheName, key: $0.key.key, user: $0.key.user, counts: $0.value) }
            .sorted { ($0.cacheName, $0.user ?? "", $0.key ?? "") < ($1.cacheName, $1.user ?? "", $1.key ?? "") }
        return CacheStatistics(since: since, collections: collections)
    }

    /// Whether an event of `kind` adds to its collection's counts: what ``count(_:in:)`` does
    /// with it (tried on scratch counts, so the two cannot disagree).
    private static func counts(_ kind: CacheEvent.Kind) -> Bool {
        var scratch = CacheStatistics.Counts()
        return count(kind, in: &scratch)
    }

    /// Adds what an event of `kind` counts to its collection's `counts` (a function rather
    /// than a closure per event: a closure capturing the event's figures is an allocation).
    ///
    /// - Returns: whether it counted anything.
    @discardableResult
    private static func count(_ kind: CacheEvent.Kind, in counts: inout CacheStatistics.Counts) -> Bool {
        switch kind {
        case .diskHit(let bytes):
            counts.diskHits += 1
            counts.bytesRead += bytes
        case .miss: counts.misses += 1
        case .decoded(let duration):
            counts.decodes += 1
            counts.decodeTime += duration
        case .fetchStarted: counts.fetches += 1
        case .fetchNotModified: counts.notModified += 1
        case .fetchFailed: counts.fetchFailures += 1
        case .written(let bytes): counts.bytesWritten += bytes
        default: return false
        }
        return true
    }
}
