public import Foundation

/// A change queued by ``AppCache/enqueue(_:)`` that the server has not accepted yet, as
/// ``AppCache/pendingMutations`` lists it.
public struct PendingMutation: Sendable, Identifiable, Hashable {
    /// The change's id: the one every send of it carries (an idempotency key).
    public var id: UUID
    /// Its kind's ``CacheMutation/mutationName``.
    public var mutationName: String
    /// The key of the collection it changes; `nil` for a type's default collection. For a
    /// change by id (``ItemMutation``), the collection it changes beside those holding its
    /// items, `nil` for none.
    public var key: String?
    /// When it was enqueued.
    public var enqueuedAt: Date
    /// How many sends were started (one cut off by a crash counts).
    public var attempts: Int
    /// `String(describing:)` of the last failed send's error; `nil` when none failed.
    public var lastError: String?

    /// A pending change, as the cache reports it.
    public init(id: UUID, mutationName: String, key: String?, enqueuedAt: Date, attempts: Int, lastError: String?) {
        self.id = id
        self.mutationName = mutationName
        self.key = key
        self.enqueuedAt = enqueuedAt
        self.attempts = attempts
        self.lastError = lastError
    }
}
