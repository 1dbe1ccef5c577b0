import Foundation

/// The offline changes of ``AppCache/enqueue(_:)``: the current user's queue as last read (each
/// change decoded once), the kinds of change this process knows, the overlay that shows pending
/// changes on top of the confirmed collections, and the ``OutboxSender`` that sends them.
///
/// The queue lives in the user's directory (``OutboxFile``), written through the store's disk
/// batches; this keeps a decoded copy, read again when the disk's change count moved. Whenever
/// the copy changes it pushes a ``PendingDigest`` into the store, so a memory hit still takes
/// one lock.
///
/// Thread safety: `Sendable`. Its state has a lock of its own, taken before the store's state
/// lock when both are (never the other way round), and never held across I/O, decoding or a
/// sender.
final class Outbox: Sendable {
    let store: CollectionStore
    /// Told when the queue changed: `cacheName`, `key` of the collection a change touches
    /// (`everyKey`: a change by id, which touches every collection of the cache name).
    let onChange: @Sendable (_ cacheName: String, _ key: String?, _ everyKey: Bool) -> Void
    /// Wakes the sender.
    let signal = ChangeSignal()
    let sender: OutboxSender

    struct State {
        /// The current user's queue as last read.
        var queue = OutboxQueue()
        /// The kinds of queued changes this process knows (registered or enqueued), by name.
        var kinds: [String: MutationKind] = [:]
        /// The sender's schedule: its task, failures, the next retry, what was reported.
        var sending = SenderSchedule()
    }

    let state = Locked(State())

    /// The name under which observers of the queue itself are told of its changes.
    static let observerName = ""

    /// - Parameters:
    ///   - observers: where the sender registers its wake-up, to hear of other processes'
    ///     changes.
    ///   - onChange: told of every change of the queue, with no lock held.
    init(store: CollectionStore, observers: ChangeObservers, onChange: @escaping @Sendable (_ cacheName: String, _ key: String?, _ everyKey: Bool) -> Void) {
        self.store = store
        self.onChange = onChange
        sender = OutboxSender(observers: observers)
    }

    /// Changes the outbox's state and pushes the queue's digest into the store, in one step.
    @discardableResult
    func withState<Result>(_ body: (inout State) -> Result) -> Result {
        state.withLock { state in
            let result = body(&state)
            var digest = state.queue.digest
            let user = state.queue.user
            store.state.withLock { store in
                digest.userSlot = user.flatMap { store.sessions.slot(of: $0) }
                store.pending = digest
            }
            return result
        }
    }

    /// Lets the sender try at once: the app became active, the network came back, the user
    /// switched.
    func sendNow() {
        sender.sendNow(self)
    }

    /// Stops the sender and lets go of its lease (the cache is going away).
    func stop() {
        sender.stop(for: self)
    }

    /// Registers how changes of `M` are sent (see ``AppCache/registerSender(for:send:)``), or
    /// with no `send`, how they are read (see ``AppCache/registerMutationKind(_:)``).
    func register<M: CacheMutation>(_ type: M.Type, send: (@Sendable (M, _ id: UUID) async throws -> Void)?) {
        var kind = MutationKind(M.self, cacheName: store.typeInfo(M.Model.self).cacheName)
        if let send {
            kind.send = { change, id in
                guard let change = change as? M else { return }
                try await send(change, id)
            }
        }
        withState { state in
            // Reading a kind does not take away a sender registered before.
            if kind.send == nil, let known = state.kinds[kind.name] { kind.send = known.send }
            state.kinds[kind.name] = kind
            state.queue.hasKinds = true
            state.queue.markStale()
            if send != nil { state.sending.lastRegistration = store.configuration.timers.uptime }
        }
        guard send != nil else { return }
        sender.start(for: self)
        signal.fire()
    }

    /// Takes the change `id` out of the current user's queue without sending it (see
    /// ``AppCache/dropPendingMutation(_:)``).
    ///
    /// - Returns: whether the queue held it.
    func drop(_ id: UUID) throws -> Bool {
        var found: OutboxLog.Entry?
        try store.withDiskWrites { batch in
            let user = store.user
            _ = try OutboxFile.change(for: user, in: &batch) { log in
                guard let entry = log.entries.first(where: { $0.id == id }) else { return nil }
                found = entry
                return OutboxLog.done(id)
            }
        }
        guard let found else { return false }
        let kind = state.withLock { $0.kinds[found.name] }
        store.events.record(
            .mutationRejected(name: found.name, id: id, message: "dropped by the app"), cacheName: kind?.cacheName, key: found.key, user: store.user)
        didChange(cacheName: kind?.cacheName ?? Outbox.observerName, key: found.key, everyKey: kind?.isByID ?? false)
        signal.fire()
        return true
    }

    /// Queues `mutation` for the current user (see ``AppCache/enqueue(_:)``).
    ///
    /// - Returns: the change's id.
    func enqueue<M: CacheMutation>(_ mutation: M) throws -> UUID {
        let info = store.typeInfo(M.Model.self)
        let name = M.mutationName
        guard !name.isEmpty, name.utf8.count <= OutboxLog.maximumNameLength else {
            throw AppCacheError(
                code: .invalidConfiguration,
                message: "The mutationName of \(M.self) must be 1 to \(OutboxLog.maximumNameLength) bytes long; nothing was queued.",
                cacheName: info.cacheName, key: mutation.key)
        }
        try CollectionStore.checkKey(mutation.key, cacheName: info.cacheName)
        let value: Data
        do {
            value = try MutationKind.encode(mutation)
        } catch {
            throw AppCacheError(
                code: .encodingFailed, message: "The change could not be encoded; nothing was queued.", cacheName: info.cacheName,
                key: mutation.key, underlyingError: error)
        }
        guard value.count <= OutboxLog.maximumValueLength else {
            throw AppCacheError(
                code: .encodingFailed,
                message: "The change encodes to \(value.count) bytes; a queued change holds at most \(OutboxLog.maximumValueLength). Nothing was queued.",
                cacheName: info.cacheName, key: mutation.key)
        }
        withState { state in
            if state.kinds[name] == nil {
                state.kinds[name] = MutationKind(M.self, cacheName: info.cacheName)
                state.queue.markStale()
            }
            state.queue.hasKinds = true
        }
        let entry = OutboxLog.Entry(
            id: UUID(), enqueuedMilliseconds: Milliseconds.moment(store.configuration.now()), name: name, key: mutation.key,
            value: value, version: M.schemaVersion)
        try store.withDiskWrites { batch in
            // The user is decided under the lock: a switch that came first has been recorded.
            let user = store.user
            _ = try OutboxFile.change(for: user, in: &batch) { _ in OutboxLog.enqueued(entry) }
            withState { state in
                if state.queue.user == .some(user) {
                    var change = OutboxQueue.Change(entry: entry, mutation: mutation, modelType: ObjectIdentifier(M.Model.self))
                    change.isByID = mutation is any ItemMutation
                    state.queue.append(change)
                }
                // Under the lock: a read of the file that began before the append is not kept.
                state.queue.markStale()
            }
        }
        didChange(cacheName: info.cacheName, key: mutation.key, everyKey: mutation is any ItemMutation)
        store.events.record(.mutationEnqueued(name: name, id: entry.id), cacheName: info.cacheName, key: mutation.key, user: store.user)
        sender.start(for: self)
        signal.fire()
        return entry.id
    }

    /// The current user's pending changes, oldest first.
    var pendingMutations: [PendingMutation] {
        current().changes.map(\.pendingMutation)
    }

    /// The current user and their queue, read again from disk when it may have changed (another
    /// process's batch moved the change count and the file is not the one read, the user
    /// switched, a kind was registered). Decodes changes outside the state lock.
    func current() -> (user: String?, changes: [OutboxQueue.Change]) {
        let (user, changes, _) = stampedCurrent()
        return (user, changes)
    }

    /// ``current()``, with the queue's epoch and the disk's change count the changes are the
    /// queue at (`nil` when a change came while they were read): while both stay, so do they.
    func stampedCurrent() -> (user: String?, changes: [OutboxQueue.Change], stamp: (epoch: UInt64, change: UInt64)?) {
        let change = store.disk.changeCount
        let user = store.user
        let (loaded, kinds) = state.withLock { ($0.queue, $0.kinds) }
        if loaded.isCurrent(user: user, change: change) { return (user, loaded.changes, (loaded.epoch, change)) }
        let read: OutboxFile.Read
        do {
            // A user whose removal is still due has no queue any more.
            read = store.isRemoved(OutboxFile.path(for: user)) ? OutboxFile.Read() : try OutboxFile.read(user, from: store.disk.store)
        } catch {
            // Told once per user and kind of failure: every read asks for the queue (twice, see
            // `readingWithPending`), and the failure stays until something outside mends it.
            if state.withLock({ $0.sending.reported.insert("unreadable outbox \(user ?? "") \(error.code)").inserted }) {
                store.reportAll([AppCacheError(
                    code: error.code, message: "The outbox of queued changes could not be read; it is left as it is.", path: error.path,
                    underlyingError: error)])
            }
            return (user, loaded.user == .some(user) ? loaded.changes : [], nil)
        }
        let sameFile = loaded.user == .some(user) && loaded.identity == read.identity
        var seen: Set<UUID> = []
        let entries = (sameFile ? loaded.changes.map(\.entry) : read.log.entries).filter { seen.insert($0.id).inserted }
        let previous = Dictionary(loaded.changes.map { ($0.entry.id, $0) }, uniquingKeysWith: { first, _ in first })
        var problems: [(String, AppCacheError)] = []
        let path = store.disk.store.fileSystem.displayPath(OutboxFile.path(for: user))
        if !sameFile, read.log.damagedRecords > 0 || read.isTooLarge, let identity = read.identity {
            problems.append(("damage \(identity.value)", AppCacheError(
                code: .corruptArchive,
                message: read.isTooLarge
                    ? "The outbox is larger than any queue of changes can be; it is not read, and the next change queued replaces it."
                    : "\(read.log.damagedRecords) damaged record(s) of the outbox were skipped; the changes they held are lost.",
                path: path)))
        }
        let changes = entries.map { entry -> OutboxQueue.Change in
            if let known = previous[entry.id], known.mutation != nil {
                var change = known
                change.entry = entry
                return change
            }
            guard let kind = kinds[entry.name] else {
                return OutboxQueue.Change(entry: entry, problem: "no kind named \"\(entry.name)\" is known")
            }
            do {
                var change = OutboxQueue.Change(entry: entry, mutation: try kind.decode(entry.value, entry.version), modelType: kind.modelType)
                change.isByID = kind.isByID
                return change
            } catch {
                let version = entry.version.map { "version \($0)" } ?? "a version not recorded"
                problems.append(("decode \(entry.id)", AppCacheError(
                    code: .modelMismatch,
                    message: "A queued change of kind \"\(entry.name)\" (\(version)) decodes neither as the current type nor through one of its upgrades; it stays queued and holds back the later changes of its kind (changes of other kinds go ahead) until a version of the app reads it or the app drops it.",
                    cacheName: kind.cacheName, key: entry.key, path: path, underlyingError: error)))
                var change = OutboxQueue.Change(entry: entry, modelType: kind.modelType, problem: "It does not decode (\(version)): \(error)")
                change.isByID = kind.isByID
                change.isUndecodable = true
                return change
            }
        }
        let (kept, fresh) = withState { state -> (Bool, [AppCacheError]) in
            let kept = state.queue.store(changes, user: user, identity: read.identity, change: change, epoch: loaded.epoch)
            return (kept, problems.compactMap { state.sending.reported.insert($0.0).inserted ? $0.1 : nil })
        }
        if !fresh.isEmpty { store.reportAll(fresh) }
        return (user, changes, kept ? (loaded.epoch, change) : nil)
    }

    /// `items`, the current user's confirmed collection of `Model` under `key`, with the
    /// pending changes to it applied in enqueue order.
    ///
    /// - Returns: the items shown, and whether any change was applied.
    func applyingPending<Model: CacheableModel>(_ items: [Model], of type: Model.Type, key: String?) -> (items: [Model], applied: [UUID]) {
        guard state.withLock({ $0.queue.hasKinds }) else { return (items, []) }
        let type = ObjectIdentifier(Model.self)
        let (user, queue, stamp) = stampedCurrent()
        let changes = OutboxQueue.applicable(queue, to: type, key: key)
        var shown = items
        for change in changes { change.mutation.apply(toItemsOf: Model.self, &shown, key: key) }
        // The next read of the same items, with the same queue, shows the same: a memory hit.
        if let stamp { store.keepOverlay(ErasedItems(shown), base: ErasedItems(items), type: type, key: key, user: user, stamp: stamp) }
        return (shown, changes.map(\.id))
    }

    /// Applies an accepted change to the confirmed collections it changes that are cached for
    /// the session's user (the one its key names; for a change by id, every one holding one of
    /// its items too): it stays visible once it leaves the queue, until the next confirmed
    /// write replaces a collection.
    func fold<M: CacheMutation>(_ change: M, for session: CacheSession) throws {
        if let byID = change as? any ItemMutation {
            func open<Change: ItemMutation>(_ change: Change) throws {
                _ = try store.updateItems(
                    Change.Model.self, ids: Set(change.itemIDs), alsoKey: change.key, session: session
                ) { items, key in
                    change.apply(to: &items, key: key)
                }
            }
            try open(byID)
            return
        }
        _ = try store.update(M.Model.self, forKey: change.key, session: session, onlyIfCached: true) { items, _ in
            change.apply(to: &items)
        }
    }

    /// Marks the queue to be read again and tells readers of the changed collection and
    /// followers of the queue (and the sender).
    func didChange(cacheName: String, key: String?, everyKey: Bool) {
        withState { $0.queue.markStale() }
        onChange(cacheName, key, everyKey)
    }
}
