import Foundation

/// A cache of `Codable` model collections that an app's model layer can lean on: per-user,
/// schema-versioned, with staleness judged from when the items were cached.
///
/// ```swift
/// let cache = try AppCache(configuration: .init(schemaVersion: "2.1", user: "alice"))
/// try cache.cacheItems(menu)                                  // [MenuItem]
/// if let cached = try cache.getCachedItems(MenuItem.self) { show(cached) }
/// if cache.isStale(MenuItem.self) { refresh() }
/// ```
///
/// Two layers answer as one. In memory, each collection is held decoded (and encoded too,
/// until written), in exact least-recently-used order within a byte and an entry limit;
/// `cacheItems` stores there and returns (write-back), and a hit costs a dictionary lookup.
/// On disk, each collection is one archive file: a checksummed header, then the encoded
/// items, written to a temporary file and renamed into place, with the moment the items were
/// cached as its modification date. Dirty collections reach disk, on the cache's own thread,
/// after ``Configuration/writeBackDelay`` and when they leave memory; on ``flush()``,
/// backgrounding, termination, a normal exit and `deinit`, before those return. A file that
/// is damaged, foreign, written for another `schemaVersion`, or not a regular file is
/// a miss (the file is removed and the configuration's `diagnostics` hook is told), never a
/// crash, a hang or garbage.
///
/// Several processes (an app and its extensions in one App Group container) and several
/// instances may share one root: their writes take turns through a lock file, and a collection
/// one of them writes is what the others read next, even if they held an older one in memory.
/// Instances in one process with the same store settings (root, schema version, user, memory
/// limits, write-back delay, disk budget, codec, thresholds) are one cache in effect: they
/// share one store, outbox and query client, so what one accepted (a write, a switch of user,
/// a removal) the others read at once, from the same memory; each instance's `diagnostics` is
/// told of every problem. The current user is theirs together: an instance opened while
/// another has switched away from the configured user starts on the user the other switched
/// to. Instances whose store settings differ keep their own, kept coherent with the others as
/// two processes are.
///
/// `AppCache` is `Sendable`: every method may be called from any thread or task at once. One
/// small lock guards the in-memory state and is never held while encoding, decoding or touching
/// files; writes of archives are ordered by a second lock that reads never take.
public final class AppCache: Sendable {
    /// The configuration the cache was opened with.
    public let configuration: Configuration

    /// The store, outbox and query client this instance uses, shared with the other instances
    /// on the same root with the same store settings (see ``CacheServices``).
    let services: CacheServices
    /// Collections in memory and on disk: reads, writes, listing, removals and users.
    @usableFromInline let store: CollectionStore
    /// The offline changes of ``enqueue(_:)`` and their sender.
    let outbox: Outbox
    /// Loads, watches, pages and the streams that follow changes.
    let queries: QueryClient
    /// The platform's notifications the cache follows (``Configuration/observesApplicationLifecycle``).
    let lifecycleSubscriptions = Locked(LifecycleSubscriptions())

    /// Opens the cache: checks the configuration, creates the root and the version directory,
    /// wipes the data of every app schema version other than the configuration's and finishes
    /// any wipe an earlier run left unfinished.
    ///
    /// Opening lists only the root directory, so it takes the same time however many archives
    /// the cache holds. Trash an earlier wipe could not delete is deleted now, or, if it still
    /// cannot be, reported to `diagnostics` and left for later: it never stops the cache from
    /// opening.
    ///
    /// A root this process cannot write (a read-only volume, a directory of another user)
    /// opens read-only, as SQLite opens a read-only database: reads serve the archives there;
    /// write-through writes, flushes and removals throw `permissionDenied`; dirty collections
    /// stay in memory. `diagnostics` is told once.
    ///
    /// - Throws: `invalidConfiguration` for an empty `schemaVersion` or a negative limit or
    ///   delay; `invalidUser` for an empty user id; `notADirectory` when the root is a file;
    ///   `permissionDenied` or `ioFailure` when the root or the version directory cannot be
    ///   made or opened; `versionWipeFailed` when another version's directory cannot be moved
    ///   out of view (the cache refuses to open rather than mix versions).
    public init(configuration: Configuration) throws {
        try configuration.validate()
        self.configuration = configuration
        let services = try CacheServices.open(configuration: configuration)
        self.services = services
        store = services.store
        outbox = services.outbox
        queries = services.queries
        services.diagnostics.add(ObjectIdentifier(self), configuration.diagnostics)
        if configuration.flushesAtExit {
            ExitFlush.register(self)
        }
        if configuration.observesApplicationLifecycle {
            observeApplicationLifecycle()
        }
        store.reportAll([])
    }

    // No dispatch call here or in what it runs on Linux (the dispatch sources it cancels exist
    // on Apple platforms only), and no task cancelled or resumed (that enqueues it through
    // Dispatch): the last reference may go in a thread's exit (held by a `Thread`'s closure),
    // after libdispatch freed its data of the thread, and a dispatch call then makes the exit
    // free that memory twice (see ``JobsInFlight``). What the services stop that involves a
    // task (the sender, the streams that follow events and collections) is stopped on a
    // library thread (``LibraryThreads/handOff(_:)``).
    deinit {
        lifecycleSubscriptions.withLock { $0.cancel() }
        queries.uses.finishRecording()
        // Nothing dirty, and the root gone (purged, or deleted by its owner): nothing to write,
        // and no batch to make the root again for.
        if store.memoryStatistics.dirtyEntries > 0 || store.disk.store.fileSystem.directoriesAreCurrent() {
            store.reportAll(store.writeDirtyEntries())
        }
        services.diagnostics.remove(ObjectIdentifier(self))
        // Only now: an exit under way waits for registered caches being deinitialised.
        ExitFlush.unregister(ObjectIdentifier(self))
    }

    /// The user whose collections the cache reads and writes; `nil` for the shared space.
    public var user: String? {
        store.user
    }

    /// The current user, as a session: take it when work for the user begins, and bind the
    /// write at its end to it with ``cacheItems(_:forKey:expiresAfter:pinned:for:)``.
    public var session: CacheSession {
        store.session
    }
}
