import Foundation

extension AppCache {
    /// Removes the collection of `Model` under `key` for the current user, from memory and
    /// disk. Removing a missing collection is not an error.
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when the archive cannot be removed (the
    ///   memory copy is gone, the archive stays).
    public func removeItems<Model: CacheableModel>(_ type: Model.Type, forKey key: String? = nil) throws {
        try store.removeItems(Model.self, forKey: key)
    }

    /// Removes every collection of the current user (of every type and key), from memory and
    /// disk.
    ///
    /// - Parameter includingPinned: whether pinned collections go too (the default); with
    ///   `false` they stay, in memory and on disk.
    /// - Throws: `permissionDenied` or `ioFailure` when the archives cannot be removed (without
    ///   `includingPinned`; the remaining archives are then unchanged). With `includingPinned`,
    ///   the user's data leaves memory and every read at once and the disk on the cache's
    ///   write-back thread, as with ``removeUser(_:)``: it throws `permissionDenied` only on a
    ///   read-only cache.
    public func removeAll(includingPinned: Bool = true) throws {
        try store.removeAll(includingPinned: includingPinned)
    }

    /// Removes every expired collection that is not pinned, of every user, from memory and
    /// disk, the temporary files of writes a crash cut short, and what earlier wipes moved out
    /// of view but could not delete then (those that still cannot be deleted go to
    /// `diagnostics`). Reads never return expired collections anyway; this reclaims their space.
    ///
    /// Temporary files of other processes' writes under way are never touched: this runs while
    /// holding the lock every writer holds.
    ///
    /// - Complexity: reads the header of every archive of the current version.
    /// - Throws: `permissionDenied` or `ioFailure` when the cache cannot be listed or an
    ///   archive cannot be removed.
    public func removeExpired() throws {
        try store.removeExpired()
    }

    /// Pins the collection of `Model` under `key`: it ignores its time to live until unpinned.
    ///
    /// The pin is kept in the archive's header, so it survives relaunches.
    ///
    /// - Throws: `notCached` when there is no such collection; `permissionDenied`, `noSpace`
    ///   or `ioFailure` when the archive cannot be rewritten.
    public func pin<Model: CacheableModel>(_ type: Model.Type, forKey key: String? = nil) throws {
        try store.setPinned(true, Model.self, key: key)
    }

    /// Unpins the collection of `Model` under `key`: its time to live applies again.
    ///
    /// - Throws: `notCached` when there is no such collection; `permissionDenied`, `noSpace`
    ///   or `ioFailure` when the archive cannot be rewritten.
    public func unpin<Model: CacheableModel>(_ type: Model.Type, forKey key: String? = nil) throws {
        try store.setPinned(false, Model.self, key: key)
    }

    /// The collections of the current user, from memory and disk, without decoding any items,
    /// listed on the caller's thread.
    ///
    /// Lists the user's directory and reads each archive's header, blocking the caller on the
    /// disk meanwhile: from async code, `await` the async form of the same name, which lists
    /// on the library's threads. Archives that cannot be read are left out (a read of them
    /// reports why).
    ///
    /// ```swift
    /// let entries = try await cache.entries()
    /// print("stale:", entries.filter(\.isStale).map(\.cacheName))
    /// ```
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when the cache cannot be listed.
    /// - Complexity: lists the user's directory and reads the header of each archive.
    public func entries() throws -> [CacheEntry] {
        try store.entries()
    }

    /// The collections of the current user, listed on the library's threads: the caller's
    /// task never waits for the disk, and the cooperative pool stays free (see ``entries()-15aed``).
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when the cache cannot be listed.
    public func entries() async throws -> [CacheEntry] {
        try await LibraryThreads.run { [store] in try store.entries() }
    }

    /// The collections of every user, from memory and disk, without decoding any items, listed
    /// on the caller's thread (`await` the async form of the same name from async code).
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when the cache cannot be listed.
    public func entriesOfAllUsers() throws -> [CacheEntry] {
        try store.entriesOfAllUsers()
    }

    /// The collections of every user, listed on the library's threads.
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when the cache cannot be listed.
    public func entriesOfAllUsers() async throws -> [CacheEntry] {
        try await LibraryThreads.run { [store] in try store.entriesOfAllUsers() }
    }

    /// The current user's collections, listed on the library's threads: `await entries()`, by
    /// its earlier spelling.
    ///
    /// - Throws: what ``entries()-15aed`` throws.
    @available(*, deprecated, message: "Use `await entries()`: the sync and async forms share their name.")
    public func listEntries() async throws -> [CacheEntry] {
        try await LibraryThreads.run { [store] in try store.entries() }
    }

    /// Every user's collections, listed on the library's threads: `await entriesOfAllUsers()`,
    /// by its earlier spelling.
    ///
    /// - Throws: what ``entriesOfAllUsers()-7yion`` throws.
    @available(*, deprecated, message: "Use `await entriesOfAllUsers()`: the sync and async forms share their name.")
    public func listEntriesOfAllUsers() async throws -> [CacheEntry] {
        try await LibraryThreads.run { [store] in try store.entriesOfAllUsers() }
    }

    /// Writes every dirty collection to disk.
    ///
    /// After it returns, everything cached before the call is on disk, unless it throws, and
    /// every removal asked for before it (``removeUser(_:)``, ``signOut(removingData:)``, ...)
    /// has left the disk, or has been reported to `diagnostics` as failing. Each
    /// archive gets the moment its items were cached as its modification date, not the moment
    /// of the flush. Collections stay in memory, now clean.
    ///
    /// - Throws: the first write error (`noSpace`, `permissionDenied`, `notADirectory`,
    ///   `ioFailure`, `busy`), its message counting the collections that failed. Those stay
    ///   dirty in memory for the next flush; the others are written. `versionRemoved` when
    ///   another app schema version removed this one's directory: nothing can be written, and
    ///   memory was emptied.
    /// - Complexity: O(n) in the entries held, plus one file write per dirty collection.
    public func flush() throws {
        queries.uses.finishRecording()
        try store.flush()
    }

    /// Empties memory as the system asks: clean collections leave memory at once; dirty ones
    /// are written on the cache's write-back thread (the caller does not wait for the disk),
    /// then leave it.
    ///
    /// Reads go on working throughout (from memory until a collection's archive is in place,
    /// from disk after). A collection that cannot be written stays in memory, dirty, and the
    /// error goes to the `diagnostics` hook; the next write-back and every flush try again. On
    /// iOS, tvOS and visionOS the cache calls this itself on memory warnings.
    public func didReceiveMemoryWarning() {
        store.didReceiveMemoryWarning()
    }

    /// What the memory layer holds and how it has served so far.
    public var memoryStatistics: MemoryStatistics {
        store.memoryStatistics
    }

    /// The bytes the archives of the current app schema version take on disk, of every user
    /// and every process sharing the root.
    ///
    /// What is on disk: each archive file's size, and each user's pack of small archives
    /// whole, records replaced or removed and not yet compacted away included, which is what
    /// the disk budget (``Configuration/diskByteLimit``) holds within. The disk index's
    /// journal and the lock file are not counted.
    ///
    /// Kept by a disk index rather than measured: the first call reads the index's journal (or,
    /// when it is missing or damaged, rebuilds it from the archives' headers, reading each
    /// once); later calls read only what other processes appended since. A method, not a
    /// property: it waits for writes under way, in this process and others (the lock file),
    /// and carries out removals still due first. From async code, `await` the async form.
    ///
    /// - Throws: `busy` when the lock file stays held past ``Configuration/lockTimeout``;
    ///   `permissionDenied` for a read-only cache; `ioFailure` when the index cannot be read.
    public func bytesOnDisk() throws -> Int {
        try store.bytesOnDisk()
    }

    /// The bytes the archives take on disk, measured on the library's threads (see
    /// ``bytesOnDisk()-9srlz``).
    ///
    /// - Throws: what ``bytesOnDisk()-9srlz`` throws.
    public func bytesOnDisk() async throws -> Int {
        try await LibraryThreads.run { [store] in try store.bytesOnDisk() }
    }

    /// The bytes the archives take on disk; `0` when they cannot be measured: ``bytesOnDisk()-9srlz``,
    /// by its earlier spelling, a property that may wait on the lock file.
    @available(*, deprecated, message: "Use `bytesOnDisk()`, a method that says it may wait and throws when it cannot measure.")
    public var diskUsage: Int {
        (try? store.bytesOnDisk()) ?? 0
    }
}
