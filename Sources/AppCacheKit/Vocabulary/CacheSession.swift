/// A user of the cache as of one moment, for binding a write to the user it was started for.
///
/// Take ``AppCache/session`` when work for the current user begins (a refresh, a page load), and
/// write its result with ``AppCache/cacheItems(_:forKey:expiresAfter:pinned:for:)``. The write
/// lands in that user's space whoever is current by then, and is dropped if that user's data was
/// removed since (``AppCache/signOut(removingData:)``, ``AppCache/removeUser(_:)``,
/// ``AppCache/removeAllUsers()`` or ``AppCache/removeAll(includingPinned:)`` with pinned ones, its
/// default; removing only unpinned collections is housekeeping, not a logout): a logout during a
/// request never comes back as cached data. ``AppCache/load(_:forKey:policy:retry:fetch:)-(_,_,_,_,(LoadContext<Model>)->FetchResult<Model>)`` binds its
/// writes the same way.
///
/// A session belongs to the cache instance it came from.
public struct CacheSession: Sendable, Hashable {
    /// The user; `nil` for the shared, signed-out space.
    public let user: String?
    /// How often the user's data had been removed when the session was taken.
    let removals: UInt64
    /// How often every user's data had been removed when the session was taken.
    let removalsOfAll: UInt64
}

extension CacheSession {
    /// Whether work begun in this session may still land: its user's data was not removed
    /// since (the user need not be current). The one rule for every `for session:` call.
    func mayWrite(in sessions: UserTable) -> Bool {
        sessions.holds(self)
    }

    /// Whether this session's user is the current user and their data was not removed since:
    /// what work that shows its result to the current user (a load's answer, a send) asks.
    func isCurrent(in sessions: UserTable) -> Bool {
        sessions.user == user && sessions.holds(self)
    }
}
