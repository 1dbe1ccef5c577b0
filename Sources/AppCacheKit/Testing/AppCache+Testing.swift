public import Foundation

extension AppCache.Configuration {
    /// A configuration for an app's tests and previews: the cache behaves as in the app, but
    /// follows `clock`, writes through, fetches once and refetches only when asked.
    ///
    /// - ``clock``: `clock`; cached dates, staleness, expiry and invalidation read it, and the
    ///   cache's own waits (retry and send backoff, polling, write-back) end when it is
    ///   advanced past them: a test ages a collection with ``CacheClock/advance(by:)``, never
    ///   by sleeping or by touching files.
    /// - ``writeBackDelay`` `.zero`: every write is on disk when the call returns.
    /// - ``retriesFailedFetches`` `false`: a failed fetch shows at once.
    /// - ``followsRefreshTriggers`` `false`: no fetch on the app's activation, a reconnect or a
    ///   polling interval; invalidations and explicit refreshes still fetch.
    /// - ``flushesAtExit`` `false`, and ``fileProtection`` `nil`.
    ///
    /// ```swift
    /// let clock = CacheClock()
    /// let cache = try AppCache(configuration: .testing(rootDirectory: url, clock: clock))
    /// try cache.cacheItems([Post(id: 1, title: "Hello")], forKey: "top")
    /// ```
    ///
    /// - Parameters:
    ///   - rootDirectory: a directory of the test's own (a fresh temporary one per test).
    ///   - schemaVersion: the cache schema version.
    ///   - user: the user to open with; `nil` for the shared space.
    ///   - clock: the clock the test moves.
    /// - Returns: the configuration; change any of it before opening the cache.
    public static func testing(
        rootDirectory: URL, schemaVersion: String = "1", user: String? = nil, clock: CacheClock = CacheClock()
    ) -> AppCache.Configuration {
        var configuration = AppCache.Configuration(rootDirectory: rootDirectory, schemaVersion: schemaVersion, user: user)
        configuration.clock = clock
        configuration.writeBackDelay = .zero
        configuration.retriesFailedFetches = false
        configuration.followsRefreshTriggers = false
        configuration.flushesAtExit = false
        configuration.fileProtection = nil
        return configuration
    }
}

extension AppCache.Configuration {
    /// A configuration whose caches keep everything in memory, for an app's tests and SwiftUI
    /// previews: no file is made, read or removed, and the cache behaves otherwise exactly as
    /// on disk (the same layout, packs, journal, outbox and rules, in a tree of files held in
    /// memory), with the ``testing(rootDirectory:schemaVersion:user:clock:)`` preset.
    ///
    /// Every call makes a new, empty store. Every cache opened with this configuration (or a
    /// copy of it) shares that store, as caches opened on one root share a directory: a test
    /// stands for a relaunch by opening a second cache with the same configuration after
    /// dropping the first. The store lives as long as a copy of the configuration or a cache
    /// opened with one, and is freed after the last.
    ///
    /// ```swift
    /// let clock = CacheClock()
    /// let configuration = AppCache.Configuration.inMemory(clock: clock)
    /// let cache = try AppCache(configuration: configuration)
    /// try cache.cacheItems([Post(id: 1, title: "Hello")], forKey: "top")
    /// clock.advance(by: .seconds(3600))   // now stale
    /// ```
    ///
    /// Changing ``AppCache/Configuration/rootDirectory`` afterwards makes it a configuration on
    /// disk again (``AppCache/Configuration/isInMemory`` is then `false`).
    ///
    /// - Parameters:
    ///   - schemaVersion: the cache schema version.
    ///   - user: the user to open with; `nil` for the shared space.
    ///   - clock: the clock the test moves.
    /// - Returns: the configuration; change any of it before opening a cache.
    /// - Complexity: O(1); the store grows with what is cached.
    /// - Thread safety: the store may be used from any thread, as a directory is.
    public static func inMemory(schemaVersion: String = "1", user: String? = nil, clock: CacheClock = CacheClock()) -> AppCache.Configuration {
        let volume = MemoryVolume()
        var configuration = testing(
            rootDirectory: URL(filePath: volume.rootPath, directoryHint: .isDirectory), schemaVersion: schemaVersion, user: user, clock: clock)
        configuration.memoryVolume = volume
        return configuration
    }
}

extension AppCache {
    /// Returns once the work this cache started in the background has finished: writes and
    /// spills queued for the write-back thread, removals and settling batches, and a send of a
    /// queued change that is out.
    ///
    /// What a test awaits before it looks at the disk or at what a sender did, instead of
    /// sleeping. Work that only a later moment starts (a write-back a delay away, a retry after
    /// a backoff) is not under way: advance the test's ``CacheClock`` first.
    ///
    /// ```swift
    /// try cache.enqueue(Like(postID: 1, isLiked: true))
    /// await cache.idle()                 // the send that went out has ended
    /// ```
    ///
    /// Thread safety: any task; does not block a thread while it waits.
    public func idle() async {
        let store = store
        let uses = queries.uses
        await LibraryThreads.run {
            uses.finishRecording()
            store.waitForBackgroundWork()
        }
        while outbox.state.withLock({ $0.sending.isSending }) {
            try? await Task.sleep(for: .milliseconds(1))
        }
        await LibraryThreads.run { store.waitForBackgroundWork() }
    }

    /// A cache for a SwiftUI preview or a test, opened with ``Configuration/inMemory(schemaVersion:user:clock:)``
    /// (no file is made) and filled by `fill`.
    ///
    /// ```swift
    /// let previewCache = try AppCache.preview { try $0.cacheItems([Post(id: 1, title: "Hello")], forKey: "top") }
    /// show(try previewCache.getCachedItems(Post.self, forKey: "top") ?? [])
    /// ```
    ///
    /// - Parameters:
    ///   - user: the user to open with; `nil` for the shared space.
    ///   - clock: the clock the cache follows.
    ///   - fill: caches the fixtures; runs once, before this returns.
    /// - Returns: the filled cache.
    /// - Throws: what opening the cache or `fill` throws.
    public static func preview(
        user: String? = nil, clock: CacheClock = CacheClock(), _ fill: (AppCache) throws -> Void = { _ in }
    ) throws -> AppCache {
        let cache = try AppCache(configuration: .inMemory(user: user, clock: clock))
        try fill(cache)
        return cache
    }
}
