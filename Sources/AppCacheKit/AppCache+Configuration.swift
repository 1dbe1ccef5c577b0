public import Foundation

extension AppCache {
    /// Where and how an ``AppCache`` stores its collections. Set once, before the cache opens.
    ///
    /// ```swift
    /// var configuration = AppCache.Configuration(schemaVersion: "2.1", user: "alice")
    /// configuration.defaultStalenessThreshold = .seconds(600)
    /// configuration.setStalenessThreshold(.seconds(60), for: MenuItem.self)
    /// configuration.diagnostics = { problem in logger.warning("\(problem)") }
    /// let cache = try AppCache(configuration: configuration)
    /// try cache.cacheItems(menu)
    /// ```
    public struct Configuration: Sendable {
        /// The directory the cache owns. Defaults to ``defaultRootDirectory``.
        ///
        /// Several instances may share one root, in one process or in an app and its extensions,
        /// as long as they open it with the same `schemaVersion`: their writes take turns through
        /// the lock file and each reads what the others wrote. An instance that opens the root
        /// with another `schemaVersion` wipes the data of the first, as an app update does, so
        /// an app and its extensions ship one version. One disk budget holds per root, the
        /// app's (see ``diskByteLimit``). See <doc:SharingWithAppExtensions>.
        public var rootDirectory: URL

        /// The schema version the app bundles, naming a version directory under the root.
        /// Opening the cache wipes the data of every other version, for all users.
        public var schemaVersion: String

        /// The user whose data the cache opens with; `nil` for the shared, signed-out space.
        public var user: String?

        /// How old cached items may get before they are stale, for types that do not say.
        /// Defaults to one hour.
        public var defaultStalenessThreshold: Duration = .seconds(3600)

        /// Staleness thresholds by cache name, overriding a type's own threshold and the default.
        public var stalenessThresholds: [String: Duration] = [:]

        /// Called with every problem the cache recovers from on its own: a damaged, foreign or
        /// outdated archive that was treated as a miss and removed (`corruptArchive`,
        /// `schemaMismatch`, `decodingFailed`), or a clean-up that could not finish.
        ///
        /// Called on the thread that met the problem, with no lock held; it must not block.
        public var diagnostics: (@Sendable (AppCacheError) -> Void)?

        /// The most memory the memory layer's collections take before it writes out (if dirty)
        /// and drops its least recently used ones. Defaults to ``defaultMemoryByteLimit``, sized
        /// from the device.
        ///
        /// A collection counts the memory its decoded items take (estimated when they are
        /// encoded, and recorded in the archive), plus its encoded bytes while it waits to be
        /// written. Filled to the limit, the process's resident memory grows by about the limit
        /// (1.02x to 1.09x, measured with `AppCacheBenchmarks resident-per-limit`). A single
        /// collection larger than the limit goes straight to disk.
        public var memoryByteLimit: Int = Configuration.defaultMemoryByteLimit

        /// The default ``memoryByteLimit``, from the device: in an app, 1/256 of its physical
        /// memory, at least 16 MiB and at most 64 MiB (16 MiB on a 4 GB phone, 24 MiB on 6 GB,
        /// 32 MiB on 8 GB); in an app extension, 4 MiB.
        ///
        /// Why: a real feed must fit. A Mastodon client's 800-status timeline takes about 8 MiB
        /// decoded, which a fixed 8 MiB default could not hold, so it was decoded from disk
        /// (25-46 ms) on every read. iOS terminates an app far above that (its limit is around
        /// half the device's memory), so 1/256 leaves the app's own memory alone; the ceiling
        /// keeps a Mac or a server from caching more than a phone app would ever read back. App
        /// extensions live under limits of a few tens of megabytes (a widget's is about 30 MB),
        /// so they keep a small default.
        public static var defaultMemoryByteLimit: Int {
            memoryByteLimit(physicalMemory: physicalMemory, isAppExtension: runsInAppExtension)
        }

        /// The device's physical memory, asked once per process (asking reads a system file on
        /// Linux: a tenth of what opening a cache costs, on every configuration made).
        private static let physicalMemory = ProcessInfo.processInfo.physicalMemory

        /// The default ``memoryByteLimit`` for a device of `physicalMemory` bytes.
        static func memoryByteLimit(physicalMemory: UInt64, isAppExtension: Bool) -> Int {
            if isAppExtension { return 4 << 20 }
            let share = Int(clamping: physicalMemory / 256)
            return min(max(share, 16 << 20), 64 << 20)
        }

        /// The most collections the memory layer holds. Defaults to 1,000. Zero keeps nothing
        /// in memory: every collection is written as soon as it is cached.
        public var memoryEntryLimit: Int = 1000

        /// The longest a batch of disk writes waits for another process (or instance) holding
        /// the root's lock file. Defaults to one second.
        ///
        /// The lock is tried without blocking, then again after short, growing pauses; past
        /// this bound the write gives up with ``AppCacheError/Code/busy`` instead of hanging on
        /// a peer that is suspended or stopped while holding it: a write-through
        /// `cacheItems` throws it, a write-back write stays in memory for the next flush (the
        /// failure goes to `diagnostics`). Reads never wait for the lock.
        public var lockTimeout: Duration = .seconds(1)

        /// How long a cached collection may wait in memory before it is written to disk.
        ///
        /// `.zero` writes through: `cacheItems` writes the archive before it returns, and
        /// throws if that fails. `nil` writes only on events: ``AppCache/flush()``, memory
        /// warnings, backgrounding and termination, user switches, limits and `deinit`. A
        /// positive delay also writes every dirty collection that long after the first of them
        /// was cached, on a background queue, so a crash loses at most that window.
        ///
        /// Defaults to 5 seconds: a screen that caches its items several times in a burst writes
        /// once, and a crash loses at most five seconds of items the app can fetch again.
        public var writeBackDelay: Duration? = .seconds(5)

        /// The most bytes the cache's archives may take on disk; `nil` (the default) for no limit.
        ///
        /// Enforced whenever archives are written: past the limit, the least recently used
        /// unpinned archives of any user are removed until the rest fit, then pinned ones,
        /// least recently used first, and then the packs of small archives holding the most
        /// replaced or removed records are compacted until the whole fits: the bytes counted
        /// are the bytes on disk. Between batches of writes the disk holds at most the limit;
        /// during one, the limit plus what that batch writes. "Used" means written or read, from disk or from memory;
        /// reads are recorded in the disk index's journal with the next batch of writes (a
        /// flush, a spill, a write-through), never by touching the archive, so recency survives
        /// relaunches (see ``AppCache/diskUsage``). With a budget set, each such batch also
        /// visits the memory layer's entries once to collect the reads served from memory.
        ///
        /// One budget holds per root, the app's: the last app process to open the root records
        /// its `diskByteLimit` there (`nil` included), and every cache on the root, in the app
        /// and in its extensions, enforces that one. A cache opened in an app extension records
        /// nothing: its own limit applies only until an app has recorded one. So a widget
        /// configured with a smaller budget never evicts the collections the app keeps within
        /// its own, and an app update that changes the budget takes effect at its first launch.
        public var diskByteLimit: Int?

        /// How the sender of queued changes (``AppCache/enqueue(_:)``) waits after a failed send:
        /// exponential backoff with jitter, from `initialDelay` up to `maximumDelay`. A queued
        /// change is tried until the server accepts or rejects it, so `maxAttempts` and
        /// `retryIf` do not apply; the network coming back and the app becoming active end the
        /// wait at once. Defaults to 1 second, doubling up to 5 minutes.
        public var mutationRetry: RetryPolicy = .exponentialBackoff(maxAttempts: .max, initialDelay: .seconds(1), maximumDelay: .seconds(300))

        /// How new archives encode their items. Defaults to ``PayloadCodec/binary``;
        /// ``PayloadCodec/json`` writes archives a person can read while debugging. Archives
        /// already on disk stay readable either way: each header says which codec it used.
        public var payloadCodec: PayloadCodec = .binary

        /// Whether the cache flushes when the process exits normally (returning from `main`
        /// or calling `exit`), through `atexit`. On by default, so that a command-line tool or a
        /// server (on Linux, or on macOS without AppKit's termination notification) that caches
        /// and exits has its collections on disk; apps are suspended and killed rather than
        /// exiting, and flush on their lifecycle events instead. A crash or a signal still skips
        /// it; ``writeBackDelay`` bounds what those lose.
        public var flushesAtExit = true

        /// Whether the cache follows the user the app signed in, instead of ``user``: what an app
        /// extension (a widget, a share extension) sets to open the app's cache for whoever is
        /// signed in there, with no glue.
        ///
        /// A cache records its user in the root when the app calls ``AppCache/switchUser(to:)``,
        /// ``AppCache/signOut(removingData:)`` or removes the current user (on the cache's own
        /// thread, moments later): sign the user in with `switchUser` for extensions to follow.
        /// A following cache opens with the recorded user (``user`` when nothing is recorded yet)
        /// and switches when the app does, woken by the app's change signal: its `updates`
        /// streams then yield the new user's items. A following cache records nothing itself
        /// (its own `switchUser` changes only its own user). A write bound to a ``CacheSession`` of a user who is no longer current
        /// is dropped, as always. Off by default.
        public var followsSignedInUser = false

        /// Whether the cache follows the application's lifecycle notifications on Apple
        /// platforms: memory warnings empty memory, entering the background flushes inside a
        /// background task, termination flushes. On by default; has no effect on Linux.
        public var observesApplicationLifecycle = true

        /// Whether the cache writes its events to the system log (Apple platforms): each
        /// ``CacheEvent`` as a debug message (problems as errors) and signposts around fetches,
        /// decodes and disk batches, under the subsystem `net.appcache` and the root's name as
        /// the category, so that Console and Instruments show them. Off by default (a message
        /// per read adds up); on Linux there is no system log, and ``AppCache/events`` is the
        /// way. See <doc:SeeingInside>.
        public var logsToSystem = false

        /// The data protection class of the archives and the index the cache writes, on iOS,
        /// tvOS, watchOS and visionOS.
        ///
        /// Defaults to `.completeUntilFirstUserAuthentication`: files are encrypted until the
        /// user first unlocks the device after a restart, and readable from then on, also while
        /// the device is locked, so a background refresh, a widget or a notification extension
        /// can read and write the cache. `.complete` keeps files unreadable while the device is
        /// locked (reads and writes then fail with `permissionDenied`); `.completeUnlessOpen` and
        /// `.none` as the system defines them; `nil` leaves each file the class of its directory
        /// (the app's default). Has no effect on macOS and Linux, which have no protection
        /// classes.
        public var fileProtection: FileProtectionType? = .completeUntilFirstUserAuthentication

        /// Whether loads, watches and pages try a failed fetch again as their `retry` says;
        /// `false` fetches once, whatever `retry` says (what tests want: a failure shows at once).
        public var retriesFailedFetches = true

        /// Whether watches (and ``CachedQuery``) refetch on their `refresh` triggers (the app
        /// active again, the network back, a polling interval); `false` leaves them to
        /// invalidations and their own refreshes, whatever `refresh` says (what tests want: no
        /// fetch they did not ask for).
        public var followsRefreshTriggers = true

        /// A clock a test moves by hand, which the cache's dates and its own waits follow (see
        /// ``CacheClock``); `nil` (the default) for the system's.
        ///
        /// Staleness, expiries, invalidations and cached dates read its ``CacheClock/now``; a
        /// failed fetch's retry backoff, a watch's polling interval, a queued change's send
        /// backoff and the write-back delay end when it is advanced past them. Waits for other
        /// processes (the lock timeout, the sender's lease) keep the system's time.
        public var clock: CacheClock? {
            didSet {
                if let clock {
                    now = { clock.now }
                } else {
                    now = { Date() }
                }
            }
        }

        /// The clock staleness is judged by and cached moments are taken from: ``clock``'s
        /// when there is one. Internal tests inject their own.
        var now: @Sendable () -> Date = { Date() }

        /// Where the cache's own waits take their time from: ``clock``, or the system's.
        var timers: CacheTimers { CacheTimers(clock: clock) }
        /// Archives up to this many bytes (header and payload) go into their user directory's
        /// pack rather than a file each; 0 writes every archive as a file of its own, for the
        /// tests and the torture scenarios that plant, age or damage archive files. Not for
        /// apps: both layouts are read whatever it says.
        @_spi(Benchmarks) public var packLimit = PackTable.defaultLimit

        /// System call failures to simulate. Tests only.
        var faults: DiskFaults?

        /// Whether a cache opened with this configuration shares the services of a live one with
        /// the same store settings (``CacheServices``). Tests turn it off where a second cache
        /// stands for another process, or sees the disk with fresh memory.
        var sharesServices = true

        /// Whether the process is an app extension, whose caches enforce the app's disk budget
        /// rather than set it (see ``diskByteLimit``); tests play one.
        var isAppExtension = Configuration.runsInAppExtension

        /// Whether this process is an app extension (its bundle is an `.appex`), asked once.
        static let runsInAppExtension = Bundle.main.bundleURL.pathExtension == "appex"

        /// The background activity every locked batch runs inside (see ``SuspensionGate``): the
        /// platform's; tests stand in for the system with their own.
        var backgroundActivity: SuspensionGate.Activity? = SuspensionGate.platformActivity

        /// A delay added to every file operation the cache makes: a slow disk, for the
        /// benchmark program to show who waits for it. Not for apps.
        @_spi(Benchmarks) public var simulatedFileOperationDelay: Duration? = nil

        /// The volume an in-memory configuration's root names (see
        /// ``inMemory(schemaVersion:user:clock:)``): held by every copy of the configuration and
        /// by every cache opened with one, so what they cached lives as long as any of them.
        var memoryVolume: MemoryVolume?

        /// Whether caches opened with this configuration keep everything in memory: made by
        /// ``inMemory(schemaVersion:user:clock:)`` and its root not changed since. No file is
        /// made, read or removed then.
        public var isInMemory: Bool {
            guard let memoryVolume else { return false }
            return CacheLayout.rootPath(of: rootDirectory) == memoryVolume.rootPath
        }

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - rootDirectory: the directory the cache owns; created owner-only when first needed.
        ///   - schemaVersion: the app's cache schema version, such as "2.1". Must not be empty:
        ///     ``AppCache/init(configuration:)`` throws `invalidConfiguration` for an empty one.
        ///   - user: the user to open with; `nil` for the shared, signed-out space. Must not be
        ///     empty: ``AppCache/init(configuration:)`` throws `invalidUser` for `""`.
        public init(rootDirectory: URL = defaultRootDirectory, schemaVersion: String, user: String? = nil) {
            self.rootDirectory = rootDirectory
            self.schemaVersion = schemaVersion
            self.user = user
        }

        /// The platform's caches directory plus "AppCache": `Library/Caches/AppCache` on Apple
        /// platforms, `~/.cache/AppCache` on Linux.
        public static var defaultRootDirectory: URL {
            let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
                ?? FileManager.default.temporaryDirectory
            return caches.appending(path: "AppCache", directoryHint: .isDirectory)
        }

        /// Sets the staleness threshold of `type`, overriding its own and the default.
        public mutating func setStalenessThreshold<Model: CacheableModel>(_ threshold: Duration, for type: Model.Type) {
            stalenessThresholds[Model.cacheName] = threshold
        }

        /// The threshold that applies to `type`: its override, else its own, else the default.
        public func stalenessThreshold<Model: CacheableModel>(for type: Model.Type) -> Duration {
            stalenessThreshold(for: Model.self, cacheName: Model.cacheName)
        }

        /// ``stalenessThreshold(for:)`` with the type's `cacheName` taken already (the default
        /// one describes the type anew at every call).
        func stalenessThreshold<Model: CacheableModel>(for type: Model.Type, cacheName: @autoclosure () -> String) -> Duration {
            (stalenessThresholds.isEmpty ? nil : stalenessThresholds[cacheName()]) ?? Model.stalenessThreshold ?? defaultStalenessThreshold
        }
    }
}
