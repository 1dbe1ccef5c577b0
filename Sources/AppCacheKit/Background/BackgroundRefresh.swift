import Foundation

/// One background refresh (``AppCache/refreshInBackground(until:usedWithin:maxConcurrentFetches:)``),
/// in four steps that all end before the deadline:
///
/// 1. **Refetch**: the current user's stale collections that were used within the window and
///    have a fetch (see ``CollectionUses``), most recently used first, at most
///    `maxConcurrentFetches` at a time, each through the query client as a load (single
///    flight, validators, storing, observers) with no retry. No fetch starts once
///    ``margin`` before the deadline has come; those running then are cancelled, and what they
///    would have brought is not stored.
/// 2. **Send**: the sender of queued changes goes through the queue at once, beside the
///    fetches; the refresh waits for it to have nothing more it can send, until the same moment.
/// 3. **Flush**: dirty collections are written, stopping between two archives at
///    ``flushMargin`` before the deadline.
/// 4. **Trim**: memory is emptied as on a memory warning, but a collection still dirty (a flush
///    cut short) is not written behind the caller's back: it waits in memory for the next
///    write-back.
///
/// It stops early, as at the deadline, when the calling task is cancelled (a
/// `BGAppRefreshTask`'s expiration) or the system closed the cache's disk for suspension
/// (``SuspensionGate``): no batch of its own holds the lock file once it has returned.
struct BackgroundRefresh {
    let store: CollectionStore
    let queries: QueryClient
    let outbox: Outbox

    /// No fetch starts, and the sender is no longer waited for, this long before the deadline:
    /// the time flushing and trimming take, and the return.
    static let margin: Duration = .milliseconds(100)
    /// A flush writes no archive this long before the deadline.
    static let flushMargin: Duration = .milliseconds(25)
    /// How often the wait for the sender looks again.
    static let pollInterval: Duration = .milliseconds(10)

    /// A collection to refetch.
    struct Candidate: Sendable {
        var collection: BackgroundRefreshReport.Collection
        var lastUse: Date
        var fetch: BackgroundFetch
    }

    func run(until deadline: ContinuousClock.Instant, usedWithin window: Duration, maxConcurrentFetches width: Int) async -> BackgroundRefreshReport {
        let clock = ContinuousClock()
        let start = clock.now
        let stopAt = deadline - Self.margin
        let gate = store.disk.gate
        var report = BackgroundRefreshReport()
        @Sendable func mayGoOn() -> Bool { !Task.isCancelled && !gate.isClosed && clock.now < stopAt }

        let drain = mayGoOn() ? outbox.beginDrain() : nil
        let candidates = mayGoOn() ? await candidates(usedWithin: window) : []
        await refetch(candidates, width: width, stopAt: stopAt, mayGoOn: mayGoOn, into: &report)

        var senderIdle = true
        if let drain {
            while !outbox.drainProgress(drain).isIdle, mayGoOn() {
                try? await Task.sleep(for: min(Self.pollInterval, max(stopAt - clock.now, .zero)))
            }
            (senderIdle, report.sentMutations) = outbox.drainProgress(drain)
        }
        let outbox = outbox
        report.pendingMutations = await LibraryThreads.run { outbox.current().changes.count }

        if !gate.isClosed, clock.now < deadline - Self.flushMargin {
            let store = store
            let failures = await LibraryThreads.run {
                store.writeDirtyEntries(until: { gate.isClosed || clock.now >= deadline - Self.flushMargin })
            }
            // Collections left for the next flush (time was up) are no problem to report.
            store.reportAll(failures.filter { $0.code != .busy })
        }
        let (trimmed, dirty) = store.state.withLock { state -> (Int, Int) in
            let before = state.memory.entryCount
            // Dirty entries are detached, not written: no batch starts behind the caller's back.
            _ = state.memory.evictAll()
            return (before - state.memory.entryCount, state.memory.dirtyCount)
        }
        report.trimmedEntries = trimmed
        report.isFlushed = dirty == 0
        report.finishedInTime = report.cancelled.isEmpty && report.skipped.isEmpty && senderIdle && report.isFlushed
            && clock.now < deadline
        report.elapsed = clock.now - start
        return report
    }

    /// The current user's stale collections used within `window` that have a fetch, most
    /// recently used first.
    func candidates(usedWithin window: Duration) async -> [Candidate] {
        let (store, uses) = (store, queries.uses)
        let found = await LibraryThreads.run { () -> [Candidate] in
            let (session, switches) = store.sessionAndSwitches
            let entries: [CacheEntry]
            do {
                entries = try store.entries()
            } catch {
                store.reportAll([AppCacheError(wrapping: error, message: "A background refresh could not list the collections.")])
                return []
            }
            let known = uses.uses(of: session, switches: switches, store: store)
            let now = store.configuration.now()
            return entries.compactMap { entry -> Candidate? in
                guard entry.isStale, let use = known[.init(cacheName: entry.cacheName, key: entry.key)],
                    now.timeIntervalSince(use.date) <= window.timeInterval
                else { return nil }
                return Candidate(collection: .init(cacheName: entry.cacheName, key: entry.key), lastUse: use.date, fetch: use.fetch)
            }
        }
        return found.sorted { $0.lastUse > $1.lastUse }
    }

    /// Refetches `candidates` in order, `width` at a time, until `stopAt`.
    private func refetch(
        _ candidates: [Candidate], width: Int, stopAt: ContinuousClock.Instant, mayGoOn: @escaping @Sendable () -> Bool,
        into report: inout BackgroundRefreshReport
    ) async {
        guard !candidates.isEmpty else { return }
        enum Event: Sendable {
            case answered(Int, BackgroundFetch.Outcome)
            case timeUp
        }
        let queries = queries
        var outcomes: [Int: BackgroundFetch.Outcome] = [:]
        var next = 0
        await withTaskGroup(of: Event.self) { group in
            // The watch: time up, or the disk closed for suspension (looked at now and then).
            group.addTask {
                while mayGoOn() {
                    try? await Task.sleep(for: min(.milliseconds(50), max(stopAt - .now, .milliseconds(1))))
                }
                return .timeUp
            }
            var running = 0
            while running < width, next < candidates.count, mayGoOn() {
                let (index, candidate) = (next, candidates[next])
                group.addTask { .answered(index, await candidate.fetch.refresh(queries, candidate.collection.key)) }
                (next, running) = (next + 1, running + 1)
            }
            var isOver = running == 0
            if isOver { group.cancelAll() }
            while let event = await group.next() {
                switch event {
                case .timeUp:
                    // Time is up: the fetches still running are cancelled.
                    if !isOver { isOver = true; group.cancelAll() }
                case .answered(let index, let outcome):
                    outcomes[index] = outcome
                    running -= 1
                    if !isOver, next < candidates.count, mayGoOn() {
                        let (index, candidate) = (next, candidates[next])
                        group.addTask { .answered(index, await candidate.fetch.refresh(queries, candidate.collection.key)) }
                        (next, running) = (next + 1, running + 1)
                    } else if !isOver, running == 0 {
                        isOver = true
                        group.cancelAll()
                    }
                }
            }
        }
        for (index, candidate) in candidates.enumerated() {
            let collection = candidate.collection
            switch outcomes[index] {
            case nil: report.skipped.append(collection)
            case .refreshed: report.refreshed.append(collection)
            case .notModified: report.notModified.append(collection)
            case .failed(let error): report.failed.append(.init(collection: collection, error: error))
            case .cancelled: report.cancelled.append(collection)
            case .unneeded: break
            }
        }
    }
}
