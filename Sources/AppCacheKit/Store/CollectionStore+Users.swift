import Foundation

extension CollectionStore {
    /// Switches to `user` (checked), recording them for following extensions unless the switch
    /// follows the record itself. The outgoing user's dirty collections spill in the background.
    ///
    /// - Returns: whether the current user changed.
    @discardableResult
    func switchUser(to user: String?, recording: Bool) -> Bool {
        let previous = state.withLock { state -> Int? in
            guard state.user != user else { return nil }
            let previous = state.userSlot
            state.sessions.switchUser(to: user)
            if recording { state.signedInUserDue = .some(user) }
            return previous
        }
        guard let previous else { return false }
        let keys = state.withLock { state in
            defer { _ = state.memory.takeEvicted() }  // Moved out of the way, not evicted for room.
            return state.memory.evictAll(user: previous)
        }
        events.record(.userSwitched, cacheName: nil, key: nil, user: user)
        onChange(nil, nil)
        if recording, !disk.isReadOnly, keys.isEmpty {
            // No spill to carry the record: a batch of its own, on the write-back thread.
            settleInBackground()
        }
        spillInBackground(keys)
        return true
    }

    /// Switches to the user the app recorded, if this cache follows it and it changed.
    ///
    /// - Returns: whether the current user changed.
    @discardableResult
    func followSignedInUser() -> Bool {
        guard configuration.followsSignedInUser, case .some(let recorded) = SignedInUserRecord.read(from: disk.store),
            (try? AppCache.Configuration.checkUser(recorded)) != nil
        else { return false }
        return switchUser(to: recorded, recording: false)
    }

    /// Removes `user`'s collections (see ``AppCache/removeUser(_:)``); the shared space is left
    /// when it is `user`'s.
    func removeUser(_ user: String?) throws {
        try wipe { state in
            if user != nil, state.user == user { state.sessions.switchUser(to: nil) }
            return [user]
        }
        events.record(.userRemoved, cacheName: nil, key: nil, user: user)
    }

    /// Removes the current user's collections and switches to the shared space (see
    /// ``AppCache/signOut(removingData:)``).
    func removeCurrentUser() throws {
        var removed: String?
        try wipe { state in
            guard let previous = state.user else { return [] }
            state.sessions.switchUser(to: nil)
            removed = previous
            return [previous]
        }
        if let removed { events.record(.userRemoved, cacheName: nil, key: nil, user: removed) }
    }

    /// Removes every collection of some users: from memory and from every read of every
    /// process at once (``DueWipes``, ``PendingRemovals``), from disk on the write-back queue;
    /// `resolveUsers` names them inside the lock (the current one, or given ones) and may switch
    /// the current user in the same step; `allUsers` takes every user directory on disk and
    /// every user in memory instead. Sessions of the removed users stop holding.
    ///
    /// - Throws: `permissionDenied` on a read-only cache (nothing is removed then).
    func wipe(allUsers: Bool = false, _ resolveUsers: (inout StoreState) -> [String?]) throws {
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
        onChange(nil, nil)
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
        settleInBackground()
    }
}
