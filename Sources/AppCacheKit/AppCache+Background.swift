import Foundation
#if canImport(BackgroundTasks) && (os(iOS) || os(tvOS))
public import BackgroundTasks
#endif

extension AppCache {
    /// Registers the fetch a background refresh runs for the collections of `Model`
    /// (``refreshInBackground(until:usedWithin:maxConcurrentFetches:)``), whatever their key.
    ///
    /// The fetch gets the same ``LoadContext`` a load's fetch gets, with the collection's
    /// ``LoadContext/key``: one fetch serves every key of the type. Register at launch, before
    /// the first load: once a type has a registered fetch, the uses of its collections (the
    /// loads and watches of them) are also recorded in the cache, per user, so that a process
    /// the system launches in the background (where nothing has been loaded yet) knows what the
    /// app used. A second registration for the type replaces the first. Registrations are
    /// shared by the instances of one configuration (which share a store), as senders are.
    ///
    /// ```swift
    /// cache.registerFetch(for: Post.self) { context in
    ///     // The app's own call: items with their validators, or "not modified".
    ///     try await api.posts(feed: context.key, ifNoneMatch: context.validators?.etag)
    /// }
    /// ```
    ///
    /// Loads and watches keep passing their own fetch; this one runs only in background
    /// refreshes. Once a type has one, the cache no longer keeps its loads' and watches' fetches
    /// after they end (they would never run), nor what their closures capture. The registered
    /// fetch itself is kept until replaced: capture the cache, and objects that own it, weakly.
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - fetch: brings the current items of the collection `context.key`, given the cached
    ///     ones and their validators. Runs on a task of its own, once per refresh of a collection.
    /// - Complexity: O(1).
    ///
    /// Thread safety: any thread.
    public func registerFetch<Model: CacheableModel>(
        for type: Model.Type, _ fetch: @escaping @Sendable (LoadContext<Model>) async throws -> FetchResult<Model>
    ) {
        queries.uses.register(BackgroundFetch(Model.self, fetch), cacheName: store.typeInfo(Model.self).cacheName)
    }

    /// Refreshes what the user used recently and puts the cache in order, in the time the system
    /// gives a background task, and returns before `deadline` with what it did.
    ///
    /// Made for a `BGAppRefreshTask` (see `handle(_:within:)` on iOS and tvOS), and for any
    /// background time an app gets:
    ///
    /// 1. **Refetches** the current user's collections that are stale, were used within
    ///    `window`, and have a fetch: the one registered for their type with
    ///    ``registerFetch(for:_:)``, else the one the last load or watch of the collection in this
    ///    process passed. "Used" means a load or a watch (``CachedQuery``, `CachedItems`) of the
    ///    collection began, by the cache's clock: in this process (the 256 most recently used
    ///    collections are remembered), or, for types with a registered fetch, in an earlier one
    ///    (the cache records those uses). A read such as ``getCachedItems(_:forKey:)`` is no use,
    ///    and neither is a background refresh's own fetch, so a collection nobody looks at
    ///    stops being refreshed once its last use is older than `window`.
    ///    Most recently used first, at most `maxConcurrentFetches` at once, each fetched as
    ///    ``load(_:forKey:policy:retry:fetch:)-(_,_,_,_,(LoadContext<Model>)->FetchResult<Model>)``
    ///    fetches: one flight with any load of it under way, validators passed, the result stored
    ///    and observers told; without retries. Fresh collections are not fetched.
    /// 2. **Sends** the queued changes (``enqueue(_:)``) at once, beside the fetches, and waits
    ///    until the sender has nothing more it can send (a failed send is not retried now).
    /// 3. **Flushes** dirty collections to disk.
    /// 4. **Trims** memory as ``didReceiveMemoryWarning()`` does.
    ///
    /// **The deadline.** No fetch starts once the deadline is 100 ms away; fetches still
    /// running then are cancelled (their results are not stored: the cached items stay as
    /// they were) and listed as ``BackgroundRefreshReport/cancelled``, those not started as
    /// ``BackgroundRefreshReport/skipped``. It returns before the deadline even if the server
    /// never answers; only a disk batch waiting for another process's lock
    /// (``Configuration/lockTimeout``) can hold it longer. The flush stops between two archives
    /// 25 ms before the deadline; collections it did not write stay in memory (dirty, for the
    /// next write-back), and ``BackgroundRefreshReport/isFlushed`` says so.
    ///
    /// **Suspension.** It stops early, as at the deadline, when the calling task is cancelled
    /// (the task's expiration handler) or the system is about to suspend the app (the end of
    /// the cache's background activity; see ``applicationDidEnterBackground()``): no batch of
    /// its own holds the cache's lock file after it returns, so returning and then completing
    /// the task is safe.
    ///
    /// ```swift
    /// import BackgroundTasks
    ///
    /// BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.refresh", using: nil) { task in
    ///     let work = Task {
    ///         let report = await cache.refreshInBackground(until: .now + .seconds(25))
    ///         task.setTaskCompleted(success: report.finishedInTime)
    ///     }
    ///     task.expirationHandler = { work.cancel() }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - deadline: when it must have returned.
    ///   - window: how recently a collection must have been used to be refetched (by default a
    ///     day).
    ///   - maxConcurrentFetches: how many fetches run at once, at least 1 (by default 4).
    /// - Returns: what it refreshed, sent, flushed and trimmed, and whether all of it was done
    ///   in time.
    /// - Complexity: lists the user's collections (reading each archive's header), then one
    ///   fetch per qualifying collection.
    ///
    /// Thread safety: any task; two refreshes at once share the fetches of the collections
    /// both refetch.
    public func refreshInBackground(
        until deadline: ContinuousClock.Instant,
        usedWithin window: Duration = .seconds(86_400),
        maxConcurrentFetches: Int = 4
    ) async -> BackgroundRefreshReport {
        precondition(maxConcurrentFetches >= 1, "maxConcurrentFetches must be at least 1")
        precondition(window >= .zero, "the window of recent use must not be negative")
        return await BackgroundRefresh(store: store, queries: queries, outbox: outbox)
            .run(until: deadline, usedWithin: window, maxConcurrentFetches: maxConcurrentFetches)
    }
}

#if canImport(BackgroundTasks) && (os(iOS) || os(tvOS))
extension AppCache {
    /// Runs a background refresh (``refreshInBackground(until:usedWithin:maxConcurrentFetches:)``)
    /// for a `BGAppRefreshTask`: until `timeLimit` from now, stopped early by the task's
    /// expiration, then completes the task, successful when everything was done in time.
    ///
    /// ```swift
    /// import BackgroundTasks
    ///
    /// BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.refresh", using: nil) { task in
    ///     cache.handle(task as! BGAppRefreshTask)
    /// }
    /// ```
    ///
    /// Not available in app extensions, which have no background tasks.
    ///
    /// - Parameters:
    ///   - task: the task the system launched.
    ///   - timeLimit: how long the refresh may take at most; the system gives about 30 s.
    ///
    /// Thread safety: any thread; returns at once.
    @available(iOSApplicationExtension, unavailable)
    @available(tvOSApplicationExtension, unavailable)
    public func handle(_ task: BGAppRefreshTask, within timeLimit: Duration = .seconds(25)) {
        let box = RefreshTaskBox(task: task)
        let deadline = ContinuousClock.Instant.now + timeLimit
        let work = Task { [self] in
            let report = await refreshInBackground(until: deadline)
            box.task.setTaskCompleted(success: report.finishedInTime)
        }
        task.expirationHandler = { work.cancel() }
    }
}

/// A `BGAppRefreshTask` handed to the refresh's task: the system's object, whose methods may be
/// called from any thread.
private struct RefreshTaskBox: @unchecked Sendable {
    let task: BGAppRefreshTask
}
#endif
