/// Who the cache is working for: the current user, the small numbers memory keys use for users
/// (interned, so a key holds an `Int`, not a string), and the counters that tell whether a
/// ``CacheSession`` taken earlier still holds.
///
/// A value inside the cache's state lock; every change of user and every removal of a user's
/// data goes through it, so "may this write still land?" has one answer.
struct UserTable {
    /// The current user; `nil` for the shared space.
    private(set) var user: String?
    /// The current user's number in memory keys.
    private(set) var slot: Int
    /// Every user seen since the cache opened, with their number.
    private var slots: [String?: Int]
    /// How often each user's data was removed (a logout wipe).
    private var removals: [String?: UInt64] = [:]
    /// How often every user's data was removed at once.
    private var removalsOfAll: UInt64 = 0
    /// Bumped by every change of the current user.
    private(set) var switches: UInt64 = 0

    init(user: String?) {
        self.user = user
        slot = 0
        slots = [user: 0]
    }

    /// The current user, as a session for writes bound to them.
    var current: CacheSession {
        CacheSession(user: user, removals: removals[user] ?? 0, removalsOfAll: removalsOfAll)
    }

    /// Every user memory may hold entries of.
    var knownUsers: [String?] { Array(slots.keys) }

    /// The number memory keys use for `user`; `nil` when memory has never held any of theirs.
    func slot(of user: String?) -> Int? { slots[user] }

    /// The user interned as `slot` (`.some(nil)` for the shared space); `nil` when none is.
    ///
    /// - Complexity: O(u), u the users known.
    func user(ofSlot slot: Int) -> String?? {
        slots.first { $0.value == slot }.map(\.key)
    }

    /// Whether `session`'s user still has the data the session was taken with.
    func holds(_ session: CacheSession) -> Bool {
        session.removalsOfAll == removalsOfAll && session.removals == removals[session.user] ?? 0
    }

    /// Makes `user` current.
    mutating func switchUser(to user: String?) {
        self.user = user
        switches += 1
        if let known = slots[user] {
            slot = known
        } else {
            slot = slots.count
            slots[user] = slot
        }
    }

    /// Notes that `user`'s data was removed: sessions of theirs stop holding.
    mutating func didRemoveData(of user: String?) {
        removals[user, default: 0] += 1
    }

    /// Notes that every user's data was removed: every session taken before stops holding.
    mutating func didRemoveDataOfAllUsers() {
        removalsOfAll += 1
    }
}
