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
        switchUser(to: user, recording: !configuration.followsSignedInUser)
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
        try wipe { state in
            if user != nil, state.user == user { state.sessions.switchUser(to: nil) }
            return [user]
        }
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
        try wipe { state in
            guard let previous = state.user else { return [] }
            state.sessions.switchUser(to: nil)
            return [previous]
        }
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
        try wipe(allUsers: true) { _ in [] }
    }

    // MARK: - Internal

    /// Switches to `user` (checked), recording them for following extensions unless the switch
    /// follows the record itself.
    func switchUser(to user: String?, recording: Bool) {
        let previous = state.withLock { state -> Int? in
            guard state.user != user else { return nil }
            let previous = state.userSlot
            state.sessions.switchUser(to: user)
            if recording { state.signedInUserDue = .some(user) }
            return previous
        }
        guard let previous else { return }
        let keys = state.withLock { $0.memory.evictAll(user: previous) }
        observers.notifyAll()
        // The new user's queued changes are theirs to send now.
        sendPendingNow()
        if recording, !disk.isReadOnly, keys.isEmpty {
            // No spill to carry the record: a batch of its own, on the write-back thread.
            writeBackQueue.async { [weak self] in _ = try? self?.withDiskWrites { _ in } }
        }
        spillInBackground(keys)
    }

    /// Switches to the user the app recorded, if this cache follows it and it changed.
    func followSignedInUser() {
        guard configuration.followsSignedInUser, case .some(let recorded) = SignedInUserRecord.read(from: disk.store),
            (try? Configuration.checkUser(recorded)) != nil
        else { return }
        switchUser(to: recorded, recording: false)
    }

    /// Removes every collection of some users: from memory and from every read of every
    /// process at once (``DueWipes``, ``PendingRemovals``), from disk on the write-back queue;
    /// `resolveUsers` names them inside the lock (the current one, or given ones) and may switch
    /// the current user in the same step; `allUsers` takes every user directory on disk and
    /// every user in memory instead. Sessions of the removed users stop holding.
    ///
    /// - Throws: `permissionDenied` on a read-only cache (nothing is removed then).
    func wipe(allUsers: Bool = false, _ resolveUsers: (inout State) -> [String?]) throws {
        guard !disk.isReadOnly else {
            throw AppCacheError(
                code: .permissionDenied, message: "The cache is read-only: its directory cannot be written; nothing was removed.",
                path: disk.store.layout.versionPath)
        }
        let directories = state.withLock { state -> [String] in
            let userBefore = state.user
            let users = allUsers ? state.sessions.knownUsers : resolveUsers(&state)
            if state.user != userBefore, !configuration.followsSignedInUser { state.signedInUserDue = .some(state.user) }
            if allUsers { state.sessions.didRemoveDataOfAllUsers() }
            for user in users {
                state.sessions.didRemoveData(of: user)
                if let slot = state.sessions.slot(of: user) { state.memory.removeAll(user: slot) }
            }
            let directories = users.map(CacheLayout.userDirectoryName)
            state.dueWipes.add(directories, allUsers: allUsers)
            return directories
        }
        observers.notifyAll()
        // Every process's reads miss the removed data from now on (and a relaunch's, should
        // this process be killed before the directories leave the disk): the removal is in the
        // lock file's shared words before this returns.
        let removals = disk.coordinator.removals
        let numbers = allUsers ? [removals.record(nil)] : directories.map { removals.record($0) }
        let recorded = numbers.allSatisfy { $0 != nil }
        state.withLock { state in
            if recorded { state.dueWipes.noteShared(directories, allUsers: allUsers, numbers: numbers.compactMap { $0 }) }
            state.ownRemovals.formUnion(numbers.compactMap { $0 })
        }
        if numbers.contains(where: { $0 != nil }) {
            // Other processes' memory checks itself against the disk.
            disk.coordinator.didChange()
            disk.coordinator.announceChange()
        }
        // A removal not in the shared words (too many pending at once), or one a writer passed
        // before its slot was written, is carried out here and now, under the lock.
        if !recorded || numbers.contains(where: { $0.map(removals.isPassed) == true }) {
            try withDiskWrites { _ in }
            return
        }
        writeBackQueue.async { [weak self] in
            do {
                try self?.withDiskWrites { _ in }
            } catch {
                self?.reportAll([error as? AppCacheError ?? AppCacheError(code: .ioFailure, message: "\(error)", underlyingError: error)])
            }
        }
    }
}
