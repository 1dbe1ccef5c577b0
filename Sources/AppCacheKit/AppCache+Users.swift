import Foundation

extension AppCache {
    /// Makes `user` the current user: from now on reads and writes see only that user's
    /// collections; `nil` signs out to the shared space.
    ///
    /// All of the previous user's collections leave memory's view at once, so nothing of theirs
    /// is served to the next user; their dirty ones are written to their own directory on the
    /// cache's write-back thread (the caller never waits for the disk), and stay in memory,
    /// invisible to the new user, until written. A write that fails goes to `diagnostics` and is
    /// retried by the next write-back and every ``flush()``. Their data stays on disk.
    ///
    /// - Throws: `invalidUser` for an empty user id, or one longer than 64 KiB (the current user
    ///   is unchanged then).
    public func switchUser(to user: String?) throws {
        try Configuration.checkUser(user)
        // A cache that follows the app's sign-in never records one of its own.
        if store.switchUser(to: user, recording: !configuration.followsSignedInUser) {
            // The new user's queued changes are theirs to send now.
            outbox.sendNow()
        }
    }

    /// Removes all of `user`'s data, from memory and disk: the logout wipe. `nil` is the shared
    /// space.
    ///
    /// Removing the current user also signs out (the current user becomes `nil`), so a write
    /// that follows cannot land in the wiped user's space; removing another user leaves the
    /// current one as it is. Dirty collections of `user` are dropped, not written first. Writes
    /// bound to a ``CacheSession`` of `user` taken before are dropped too, and so are the
    /// results of loads that began for them.
    ///
    /// The data leaves memory, and the reach of every read of this cache, at once; the user's
    /// directory leaves the disk on the cache's write-back thread (the caller never waits for
    /// the disk), before any later write of the cache, in one rename, so a crash never leaves
    /// part of it readable; what the deletion after it could not finish goes on the next open.
    /// Other processes see the removal once the directory is gone; ``flush()`` waits for it. A
    /// rename that fails is reported to `diagnostics` once and retried by every later batch of
    /// disk changes; meanwhile reads treat the data as gone.
    ///
    /// - Throws: `permissionDenied` on a read-only cache (nothing is removed).
    public func removeUser(_ user: String?) throws {
        try store.removeUser(user)
    }

    /// Signs out: the shared space (user `nil`) becomes current, and, if asked, the previous
    /// user's data is removed, from memory and disk, without first writing their dirty
    /// collections.
    ///
    /// With `removingData: false` this is ``switchUser(to:)`` with `nil`: the previous user's
    /// dirty collections are written to their own directory and their data stays for their next
    /// sign-in. With `true` it is one step: no write of theirs can land between the switch and
    /// the removal, and writes or loads bound to a session of theirs taken before are dropped.
    /// Signing out when already signed out changes nothing and removes nothing.
    ///
    /// ```swift
    /// try cache.signOut(removingData: true)     // a logout on a shared device
    /// ```
    ///
    /// Neither form makes the caller wait for the disk (see ``switchUser(to:)`` and
    /// ``removeUser(_:)``).
    ///
    /// - Parameter removingData: whether the previous user's data goes too.
    /// - Throws: with `removingData`, `permissionDenied` on a read-only cache (nothing is
    ///   removed, and the cache is still signed in).
    public func signOut(removingData: Bool) throws {
        guard removingData else {
            try switchUser(to: nil)
            return
        }
        try store.removeCurrentUser()
    }

    /// Removes the data of every user and of the shared space, from memory and disk.
    ///
    /// The current user stays current, with no data; writes bound to a session taken before
    /// are dropped.
    ///
    /// Like ``removeUser(_:)``, the data leaves memory and every read at once and the disk on
    /// the cache's write-back thread.
    ///
    /// - Throws: `permissionDenied` on a read-only cache (nothing is removed).
    public func removeAllUsers() throws {
        try store.wipe(allUsers: true) { _ in [] }
    }

    // MARK: - Internal

    /// Follows the user the app recorded (see ``Configuration/followsSignedInUser``): the
    /// store switches, and the new user's queued changes are sent.
    func followSignedInUser() {
        if store.followSignedInUser() { outbox.sendNow() }
    }
}
