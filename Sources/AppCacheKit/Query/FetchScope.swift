import Foundation

/// The collections whose fetch the current task runs, so that a `load` or `watch` of one of them
/// from inside its own fetch throws ``AppCacheError/Code/nestedLoad`` instead of joining the
/// flight that waits for that very fetch (and waiting for ever).
///
/// The set follows a fetch into the loads and watches it starts: their flights run on tasks of
/// their own, where task-locals do not follow, so each load takes the set with it and its fetch
/// runs with the set and its own collection. A cycle across collections (A's fetch loads B,
/// whose fetch loads A) is refused as well. A load of another collection, or of the same one
/// from a task the fetch detached, is not.
enum FetchScope {
    /// One collection: the flights it is fetched in (those of one cache, or of the instances
    /// that share its services), the user it is for, its model type and its key.
    struct Collection: Hashable, Sendable {
        var flights: ObjectIdentifier
        var user: String?
        var type: ObjectIdentifier
        var key: String?
    }

    /// The collections whose fetch runs on this task (or a task it awaits).
    static let current = TaskLocal<Set<Collection>>(wrappedValue: [])

    /// The error for a load or watch of `collection` from a task that runs its fetch, `nil` when
    /// `scope` (the task's ``current``) does not hold it.
    ///
    /// - Parameter operation: what was called (`load`, `watch`), for the message.
    static func refusal(of collection: Collection, in scope: Set<Collection>, cacheName: String, operation: String) -> AppCacheError? {
        guard scope.contains(collection) else { return nil }
        return AppCacheError(
            code: .nestedLoad,
            message: "\(operation) was called from inside the fetch of the same collection (same model type, key and user): it would "
                + "wait for the fetch it is called from, for ever. Use the cached items the fetch is given (LoadContext.cachedItems), "
                + "or read the cache without a fetch (getCachedItems).",
            cacheName: cacheName, key: collection.key)
    }
}
