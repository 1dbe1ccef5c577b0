import Foundation

/// The three services of one root and app schema version in this process (a
/// ``CollectionStore``, an ``Outbox``, a ``QueryClient``), shared by every ``AppCache`` opened
/// on them with the same store settings: what one instance accepted (a write, a switch of
/// user, a removal), the others read at once, from the same memory.
///
/// Instances share when their configurations agree on everything the store owns (``Key``):
/// root, schema version, user, memory limits, write-back delay, disk budget, codec, staleness
/// thresholds, lock timeout, file protection, whether they follow the signed-in user. The
/// store's closures (the clock, the background activity, the mutation retry) are the first
/// instance's; `diagnostics` of every instance is told of every problem; the current user is
/// the store's, whoever switched it. Instances whose
/// settings differ get services of their own, kept coherent with the others as two processes
/// are (the lock file's change count, the coherence rule, the shared record of removals).
///
/// Thread safety: `Sendable`. The registry's lock is never held while a store opens.
final class CacheServices: Sendable {
    let store: CollectionStore
    let outbox: Outbox
    let queries: QueryClient
    /// The `diagnostics` of every instance using these services.
    let diagnostics: DiagnosticsHub
    /// Where the events of every service go.
    let events: CacheEventHub

    /// - Parameter rootPath: the root's path as ``CacheLayout/rootPath(of:)`` gives it, if the
    ///   caller has it already.
    private init(configuration: AppCache.Configuration, rootPath: String? = nil) throws {
        let diagnostics = DiagnosticsHub()
        self.diagnostics = diagnostics
        let events = CacheEventHub(
            now: configuration.now,
            systemLog: configuration.logsToSystem ? SystemLog.make(category: configuration.rootDirectory.lastPathComponent) : nil)
        self.events = events
        // Three services, wired by three callbacks: the store's and the outbox's changes reach
        // the streams; the watcher (another process or instance changed the disk) wakes them
        // and follows the signed-in user; the network back sends the outbox.
        let observers = ChangeObservers()
                // Every problem is an event too.
        let diagnose: @Sendable (AppCacheError) -> Void = { problem in
            events.record(.problemFound(problem.code), cacheName: problem.cacheName, key: problem.key, user: nil)
            diagnostics.deliver(problem)
        }
        let store = try CollectionStore(configuration: configuration, rootPath: rootPath, events: events, diagnose: diagnose) { cacheName, key in
            if let cacheName { observers.notify(cacheName: cacheName, key: key) } else { observers.notifyAll() }
        }
        self.store = store
        let outbox = Outbox(store: store, observers: observers) { cacheName, key, everyKey in
            if everyKey { observers.notify(cacheName: cacheName) } else { observers.notify(cacheName: cacheName, key: key) }
            observers.notify(cacheName: Outbox.observerName, key: nil)
        }
        self.outbox = outbox
        let watcher = store.makeChangeWatcher { [weak store, weak outbox] in
            observers.notifyAll()
            if store?.followSignedInUser() == true { outbox?.sendNow() }
        }
        queries = QueryClient(store: store, outbox: outbox, observers: observers, watcher: watcher) { [weak outbox] in
            outbox?.sendNow()
        }
        if configuration.followsSignedInUser { watcher.start() }
    }

    deinit {
        queries.watcher.stop()
        outbox.stop()
    }

    /// The services for `configuration`: those of a live instance with the same store settings,
    /// or new ones (see ``AppCache/init(configuration:)`` for what opening does and throws).
    static func open(configuration: AppCache.Configuration) throws -> CacheServices {
        guard let key = Key(configuration).map(HashedKey.init) else { return try CacheServices(configuration: configuration) }
        if let live = registry.withLock({ $0[key]?.services }) { return live }
        // Opened with no lock held: opening touches the disk.
        let opened = try CacheServices(configuration: configuration, rootPath: key.key.root)
        return registry.withLock { registry in
            // Another thread may have opened the same meanwhile: one set of services wins.
            if let live = registry[key]?.services { return live }
            registry = registry.filter { $0.value.services != nil }
            registry[key] = Entry(services: opened)
            return opened
        }
    }

    /// The services open in this process, held weakly: they go with their last instance.
    private static let registry = Locked<[HashedKey: Entry]>([:])

    /// A ``Key`` with its hash taken once: opening looks the registry up twice and adds to it,
    /// and hashing every field of a key costs about 2,600 instructions (callgrind).
    private struct HashedKey: Hashable {
        let key: Key
        let hash: Int

        init(_ key: Key) {
            self.key = key
            hash = key.hashValue
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(hash)
        }

        static func == (lhs: HashedKey, rhs: HashedKey) -> Bool {
            lhs.hash == rhs.hash && lhs.key == rhs.key
        }
    }

    private struct Entry {
        weak var services: CacheServices?
    }

    /// What instances must agree on to share services. Configurations with injected faults,
    /// or that say not to share (tests), never share.
    struct Key: Hashable {
        var root: String
        var schemaVersion: String
        var user: String?
        var memoryByteLimit: Int
        var memoryEntryLimit: Int
        var writeBackDelay: Duration?
        var diskByteLimit: Int?
        var packLimit: Int
        var payloadCodec: PayloadCodec
        var lockTimeout: Duration
        var isAppExtension: Bool
        var fileProtection: String?
        var defaultStalenessThreshold: Duration
        var stalenessThresholds: [String: Duration]
        var followsSignedInUser: Bool
        var simulatedFileOperationDelay: Duration?
        /// Instances on different test clocks keep services of their own.
        var clock: ObjectIdentifier?
        var logsToSystem: Bool

        init?(_ configuration: AppCache.Configuration) {
            guard configuration.sharesServices, configuration.faults == nil else { return nil }
            root = CacheLayout.rootPath(of: configuration.rootDirectory)
            schemaVersion = configuration.schemaVersion
            user = configuration.user
            memoryByteLimit = configuration.memoryByteLimit
            memoryEntryLimit = configuration.memoryEntryLimit
            writeBackDelay = configuration.writeBackDelay
            diskByteLimit = configuration.diskByteLimit
            packLimit = configuration.packLimit
            payloadCodec = configuration.payloadCodec
            lockTimeout = configuration.lockTimeout
            isAppExtension = configuration.isAppExtension
            fileProtection = configuration.fileProtection?.rawValue
            defaultStalenessThreshold = configuration.defaultStalenessThreshold
            stalenessThresholds = configuration.stalenessThresholds
            followsSignedInUser = configuration.followsSignedInUser
            simulatedFileOperationDelay = configuration.simulatedFileOperationDelay
            clock = configuration.clock.map(ObjectIdentifier.init)
            logsToSystem = configuration.logsToSystem
        }
    }
}
