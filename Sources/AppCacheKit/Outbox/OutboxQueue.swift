import Foundation

/// The current user's outbox as the cache last read it, with each change decoded once: what
/// reads apply on top of the confirmed collections, and what the sender sends.
///
/// The disk is the truth (another process may enqueue or confirm); this copy is read again when
/// the shared change count moved and the file is not the one read (``needsCheck``), or when the
/// user or the kinds known changed.
///
/// Thread safety: a value inside the cache's state lock; decoding happens outside it.
struct OutboxQueue {
    /// One queued change.
    struct Change {
        var entry: OutboxLog.Entry
        /// The change decoded; `nil` when its kind is unknown to this app (so far) or its bytes
        /// do not decode.
        var mutation: (any CacheMutation)?
        /// The model type of the collections it changes, when its kind is known.
        var modelType: ObjectIdentifier?
        /// Why it cannot be applied or sent, when it cannot.
        var problem: String?
        /// Whether it names item ids (applies to every collection of its model type).
        var isByID = false
        /// Whether its kind is known but its bytes read as no version of it: it holds back the
        /// later changes of its kind only (see ``OutboxSender/nextSend(_:)``).
        var isUndecodable = false

        init(entry: OutboxLog.Entry, mutation: (any CacheMutation)? = nil, modelType: ObjectIdentifier? = nil, problem: String? = nil) {
            self.entry = entry
            self.mutation = mutation
            self.modelType = modelType
            self.problem = problem
        }

        /// The change as ``AppCache/pendingMutations`` lists it.
        var pendingMutation: PendingMutation {
            PendingMutation(
                id: entry.id, mutationName: entry.name, key: entry.key,
                enqueuedAt: Date(timeIntervalSince1970: Double(entry.enqueuedMilliseconds) / 1000),
                attempts: entry.attempts, lastError: entry.lastError ?? problem)
        }
    }

    /// Whose queue this is; `nil` before the first read.
    private(set) var user: String??
    /// Which file was read (`nil`: there was none).
    private(set) var identity: FileVersion?
    /// The shared change count before that read.
    private var checkedChange: UInt64?
    private(set) var changes: [Change] = []
    /// The model types that pending changes apply to: a memory hit of another type needs no
    /// look at the queue.
    private var pendingTypes: Set<ObjectIdentifier> = []
    /// Set when this process changed the queue or what decodes it (a kind registered): read
    /// it again even if the change count says nothing.
    private var isStale = true
    /// Counts the times the queue was made stale: a read that began before the last time is
    /// not kept.
    private(set) var epoch: UInt64 = 0
    /// Whether this cache knows any kind of change (registered or enqueued): without one, no
    /// change can be applied and reads never look at the queue.
    var hasKinds = false

    /// What the store keeps of the queue, so that a memory hit can tell whether it must look
    /// at the queue (``PendingDigest/touches(_:change:)``).
    var digest: PendingDigest {
        PendingDigest(hasKinds: hasKinds, isStale: isStale, checkedChange: checkedChange, types: pendingTypes, epoch: epoch)
    }

    /// Whether this is `user`'s queue as the disk held it at the change count `change`.
    func isCurrent(user: String?, change: UInt64) -> Bool {
        !isStale && self.user == .some(user) && checkedChange == change
    }

    /// Marks the queue to be read again.
    mutating func markStale() {
        isStale = true
        epoch &+= 1
    }

    /// Adds a change this process just enqueued (decoded already: the next read keeps it),
    /// unless a read that began after its append holds it already.
    mutating func append(_ change: Change) {
        guard !changes.contains(where: { $0.entry.id == change.entry.id }) else { return }
        changes.append(change)
        if let type = change.modelType, change.mutation != nil { pendingTypes.insert(type) }
    }

    /// Keeps what a read found, unless the queue was made stale since the read began (`epoch`).
    ///
    /// - Returns: whether it was kept.
    @discardableResult
    mutating func store(_ changes: [Change], user: String?, identity: FileVersion?, change: UInt64, epoch: UInt64) -> Bool {
        guard epoch == self.epoch else { return false }
        self.changes = changes
        self.user = .some(user)
        self.identity = identity
        checkedChange = change
        pendingTypes = Set(changes.compactMap { $0.mutation == nil ? nil : $0.modelType })
        isStale = false
        return true
    }

    /// The changes among `changes` to apply to the collection of the model type `type` under
    /// `key`, in order: those naming that key, and every change by id of the type (it changes
    /// nothing where its items are not).
    static func applicable(_ changes: [Change], to type: ObjectIdentifier, key: String?) -> [(id: UUID, mutation: any CacheMutation)] {
        changes.compactMap { change in
            guard change.modelType == type, change.isByID || change.entry.key == key, let mutation = change.mutation else { return nil }
            return (change.entry.id, mutation)
        }
    }
}
