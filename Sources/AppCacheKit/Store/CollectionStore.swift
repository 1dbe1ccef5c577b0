import Foundation

/// The engine under ``AppCache``: collections in memory and on disk, for every user of one
/// root and app schema version.
///
/// It owns the one state lock (``StoreState``: memory, user sessions, the disk change count
/// memory agrees with, update counters, the outbox's pending digest), the ``DiskWriter`` every
/// change goes through, and the write-back scheduler (``WriteBack``). It reads with the damage
/// and upgrade policy, writes (`save`, `update`, `redate`, `setPinned`), lists, removes, switches
/// and wipes users. It never names the query client's or the outbox's types: it tells of
/// changes through `onChange`.
///
/// Thread safety: `Sendable`. The state lock is never held across file I/O, coding, or a
/// caller's closure; the disk writer's lock is taken before the state lock, never after.
@usableFromInline
final class CollectionStore: Sendable {
    /// The configuration the store was opened with.
    let configuration: AppCache.Configuration
    /// The disk layer: reads through `disk.store`, every change through a batch.
    let disk: DiskWriter
    /// Problems found while a lock may be held, delivered to `diagnostics` after unlocking.
    let reports: ProblemReports
    let state: Locked<StoreState>
    /// When dirty collections are written, on the store's own thread.
    let writeBack = WriteBack()
    /// Told of every change a reader may see: a collection's (`cacheName`, `key`), or of
    /// everything (`nil`).
    let onChange: @Sendable (_ cacheName: String?, _ key: String?) -> Void
    /// Told of every problem the store finds, with no lock held (every instance's
    /// `diagnostics`).
    let diagnose: @Sendable (AppCacheError) -> Void
    /// Where the store's events and counts go (shared with the query client and the outbox).
    let events: CacheEventHub

    /// Opens the disk (see ``AppCache/init(configuration:)`` for what that does and throws)
    /// with an empty memory layer.
    ///
    /// - Parameters:
    ///   - rootPath: the root's path as ``CacheLayout/rootPath(of:)`` gives it, if the caller
    ///     has it already.
    ///   - events: where events and counts go.
    ///   - diagnose: told of every problem, with no lock held.
    ///   - onChange: told of every change, with no lock held.
    init(
        configuration: AppCache.Configuration, rootPath: String? = nil, events: CacheEventHub,
        diagnose: @escaping @Sendable (AppCacheError) -> Void,
        onChange: @escaping @Sendable (_ cacheName: String?, _ key: String?) -> Void
    ) throws {
        self.configuration = configuration
        self.events = events
        self.diagnose = diagnose
        self.onChange = onChange
        let reports = ProblemReports()
        self.reports = reports
        let layout = CacheLayout(
            rootPath: rootPath ?? CacheLayout.rootPath(of: configuration.rootDirectory), schemaVersion: configuration.schemaVersion)
        let store = try DiskStore.open(
            layout: layout, packLimit: configuration.packLimit, faults: configuration.effectiveFaults, protection: FileProtection(configuration.fileProtection),
            onDamage: { path, what in
                reports.add(AppCacheError(code: .corruptArchive, message: "The cache found \(what).", path: path))
            },
            onProblem: reports.add)
        // The state exists before the writer, whose batches tell it what they found.
        let state = Locked(StoreState(
            sessions: UserTable(user: configuration.user),
            memory: MemoryStore(
                byteLimit: configuration.memoryByteLimit, entryLimit: configuration.memoryEntryLimit,
                tracksReads: configuration.diskByteLimit != nil),
            syncedChange: 0))
        self.state = state
        let disk = try DiskWriter(
            store: store, diskByteLimit: configuration.diskByteLimit, isAppExtension: configuration.isAppExtension,
            lockTimeout: configuration.lockTimeout,
            gate: SuspensionGate(startActivity: configuration.backgroundActivity), hooks: Self.hooks(state, events: events))
        self.disk = disk
        events.followObserved { observed in
            state.withLock { state in
                state.eventsObserved = observed
                state.memory.notesEvictions = observed
                if !observed { _ = state.memory.takeEvicted() }
            }
        }
        let change = disk.changeCount
        state.withLock { state in
            state.syncedChange = change
            state.memory.tracksReads = disk.hasBudget
            state.removals = disk.coordinator.removals
            state.seenRemovals = disk.coordinator.removals.recordedCount
        }
        if configuration.followsSignedInUser, case .some(let recorded) = SignedInUserRecord.read(from: store),
            (try? AppCache.Configuration.checkUser(recorded)) != nil {
            state.withLock { $0.sessions.switchUser(to: recorded) }
        }
        if disk.isReadOnly {
            // As SQLite opens a read-only database: the intact archives are served, nothing is
            // changed on disk.
            reports.add(AppCacheError(
                code: .permissionDenied,
                message: "The cache directory cannot be written: the cache is read-only. Archives are read; writes, flushes and removals throw permissionDenied.",
                path: layout.versionPath))
        }
        if disk.hasBudget && !disk.isReadOnly {
            // Load the disk index in the background, not on the caller's thread.
            settleInBackground()
        }
    }

    /// A watcher of the root's shared change count: `onChange` runs when another process or
    /// instance changed the disk (once started).
    func makeChangeWatcher(onChange: @escaping @Sendable () -> Void) -> ChangeWatcher {
        ChangeWatcher(coordinator: disk.coordinator, onChange: onChange)
    }

    /// The current user; `nil` for the shared space.
    var user: String? {
        state.withLock { $0.user }
    }

    /// The current user, as a session.
    var session: CacheSession {
        state.withLock { $0.session }
    }

    /// The current session and how many switches of user came before it: what a load or an
    /// update takes when it begins, to tell later whether its user is still current.
    var sessionAndSwitches: (session: CacheSession, switches: UInt64) {
        state.withLock { ($0.session, $0.sessions.switches) }
    }

    /// Where work bound to `session` stands now: whether its user is the current one, whether
    /// it may still land (``CacheSession/mayWrite(in:)``), and the count of switches so far.
    func standing(of session: CacheSession) -> (isCurrent: Bool, mayWrite: Bool, switches: UInt64) {
        state.withLock { state in
            (session.isCurrent(in: state.sessions), session.mayWrite(in: state.sessions), state.sessions.switches)
        }
    }

    /// What the store needs to know of a model type, resolved once: `cacheName` may be slow
    /// (the default interpolates the type's name).
    struct TypeInfo {
        /// The type's cache name, ready to make its archive keys.
        var cacheNamePart: ArchiveKey.CacheNamePart
        var threshold: Duration
        /// The schema versions the type reads (its own and those it upgrades from).
        var versions: ReadableVersions
        /// How writes take their items' ids for the ``ItemIndex``, once writes by id used the
        /// type; `nil` before (writes then pay nothing for it).
        var itemIDs: ItemIndex.IDs?

        var cacheName: String { cacheNamePart.cacheName }
    }

    /// What the store knows of `Model`, resolved on its first use.
    ///
    /// - Complexity: O(1); a lock and, for the type used last, no hashing.
    func typeInfo<Model: CacheableModel>(_ type: Model.Type) -> TypeInfo {
        let id = ObjectIdentifier(Model.self)
        let known = state.withLock { state -> TypeInfo? in
            if let last = state.lastType, last.id == id { return last.info }
            guard let info = state.types[id] else { return nil }
            state.lastType = (id, info)
            return info
        }
        if let known { return known }
        let facts = Self.typeFacts.withLock { $0[id] } ?? {
            // Resolved outside the lock: `cacheName` and `upgrades` are the app's code.
            let cacheName = Model.cacheName
            precondition(!cacheName.isEmpty, "CacheableModel.cacheName of \(Model.self) must not be empty")
            precondition(cacheName.utf8.count <= ArchiveHeader.maximumNameLength, "CacheableModel.cacheName of \(Model.self) is too long")
            let facts = TypeFacts(cacheNamePart: ArchiveKey.CacheNamePart(cacheName: cacheName), versions: ReadableVersions(of: Model.self))
            Self.typeFacts.withLock { $0[id] = facts }
            return facts
        }()
        let info = TypeInfo(
            cacheNamePart: facts.cacheNamePart, threshold: configuration.stalenessThreshold(for: Model.self, cacheName: facts.cacheNamePart.cacheName),
            versions: facts.versions)
        state.withLock { $0.types[id] = info }
        return info
    }

    /// What ``typeInfo(_:)`` learns of a type from the type alone.
    struct TypeFacts: Sendable {
        var cacheNamePart: ArchiveKey.CacheNamePart
        var versions: ReadableVersions
    }

    /// The ``TypeFacts`` of each type any store of the process has used: a fresh instance's
    /// first use of a type calls no app code and hashes no name again (2,400 of the 103,000
    /// instructions of a fresh instance's first read of a one-item collection, callgrind).
    private static let typeFacts = Locked<[ObjectIdentifier: TypeFacts]>([:])

    /// Throws `invalidKey` for a key no archive header can hold.
    static func checkKey(_ key: String?, cacheName: String) throws {
        guard let key, key.utf8.count > ArchiveHeader.maximumNameLength else { return }
        throw AppCacheError(
            code: .invalidKey,
            message: "The key is \(key.utf8.count) bytes long; an archive holds keys of up to \(ArchiveHeader.maximumNameLength) bytes.",
            cacheName: cacheName)
    }

    /// Whether `key` fits an archive header; a read of a key that does not is a miss.
    static func fits(_ key: String?) -> Bool {
        key.map { $0.utf8.count <= ArchiveHeader.maximumNameLength } ?? true
    }

    /// Delivers the queued problems, then `problems`, to `diagnostics`. Call with no lock held.
    func reportAll(_ problems: [AppCacheError]) {
        reports.deliver(to: diagnose)
        for problem in problems {
            // A removed version is told once: every later write fails the same way.
            if problem.code == .versionRemoved, state.withLock({ state in
                defer { state.versionRemovalReported = true }
                return state.versionRemovalReported
            }) { continue }
            diagnose(problem)
        }
    }

    /// Runs an empty batch on the write-back thread: it carries out what is due (removals, the
    /// signed-in user's record, uses and the budget) without the caller waiting for the lock
    /// file. A failure is reported to `diagnostics`.
    func settleInBackground() {
        writeBack.queue.async { [weak self] in
            guard let self else { return }
            do {
                try withDiskWrites { _ in }
            } catch {
                reportAll([AppCacheError(wrapping: error)])
            }
        }
    }

    /// Waits for the disk work queued on the write-back thread so far: spills, removals and
    /// settling batches (what tests and the benchmark check after a call that queued some).
    func waitForBackgroundWork() {
        writeBack.queue.sync {}
    }

    /// How the disk writer's batches keep memory coherent with the disk: what memory holds is
    /// checked again after a purge or another process's change, and this process's own change
    /// leaves memory in agreement with the disk (it updated the entries it wrote), unless
    /// someone else's came between. Reads served from memory count as uses for the budget.
    static func hooks(_ state: Locked<StoreState>, events: CacheEventHub) -> DiskWriter.Hooks {
        DiskWriter.Hooks(
            didLock: { reopened, change in
                state.withLock { state in
                    if reopened {
                        state.memory.requireRecheck()
                        state.itemIndex.requireRecheck()
                    }
                    state.syncWithDisk(change: change)
                }
            },
            takeReadArchives: {
                state.withLock { $0.memory.takeReadArchives() }
            },
            didChange: { before, after in
                state.withLock { state in
                    if state.syncedChange == before { state.syncedChange = after }
                    state.itemIndex.didChange(from: before, to: after)
                }
            },
            didEvictForBudget: { collections in
                for key in collections { events.record(.evicted(.diskBudget), cacheName: key.cacheName, key: key.key, user: key.user) }
            })
    }
}
