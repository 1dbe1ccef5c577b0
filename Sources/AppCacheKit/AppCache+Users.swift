import Foundation

extension AppCache {
    /// Makes `user` the current user: from now on reads and writes see only that user's
    /// collections; `nil` signs out to the shared space.
    ///
    /// The previous user's dirty collections are written to their own directory and all of
    /// their collections leave memory, so nothing of theirs is served, or kept in memory, for
    /// the next user. Their data stays on disk.
    ///
    /// - Throws: `invalidUser` for an empty user id, or one longer than 64 KiB (the current user
    ///   is unchanged then); the first write error (`noSpace`, `permissionDenied`, ...) when
    ///   some of the previous user's collections could not be written. The switch has happened
    ///   all the same; those collections stay in memory, invisible to the new user, until a
    ///   flush writes them.
    public func switchUser(to user: String?) throws {
        try Configuration.checkUser(user)
        let previous = state.withLock { state -> Int? in
            guard state.user != user else { return nil }
            let previous = state.userSlot
            state.switchUser(to: user)
            return previous
        }
        guard let previous else { return }
        let keys = state.withLock { $0.memory.evictAll(user: previous) }
        let failures = spill(keys)
        if let first = failures.first {
            throw AppCacheError(
                code: first.code,
                message: "Switched user, but \(failures.count) of the previous user's collections could not be written; they stay in memory until the next flush.",
                cacheName: first.cacheName, key: first.key, path: first.path, underlyingError: first.underlyingError)
        }
    }

    /// Removes all of `user`'s data, from memory and disk: the logout wipe. `nil` is the shared
    /// space. The current user stays the current user.
    ///
    /// The user's directory leaves view in one rename, so a crash never leaves part of it
    /// readable; what the deletion after it could not finish goes on the next open.
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when the user's directory cannot be moved
    ///   out of view; their archives are then unchanged.
    public func removeUser(_ user: String?) throws {
        try wipe { _ in [user] }
    }

    /// Removes the data of every user and of the shared space, from memory and disk.
    ///
    /// - Throws: `permissionDenied` or `ioFailure` when a user's directory cannot be moved out
    ///   of view; the users removed before it stay removed, the others are unchanged.
    public func removeAllUsers() throws {
        try wipe(allUsers: true) { _ in [] }
    }

    // MARK: - Internal

    /// Removes every collection of some users, from memory and disk; `resolveUsers` names them
    /// inside the lock (the current one, or given ones); `allUsers` takes every user directory
    /// on disk and every user in memory instead.
    func wipe(allUsers: Bool = false, _ resolveUsers: (State) -> [String?]) throws {
        var trashes: [String] = []
        defer {
            reportAll(trashes.compactMap { store.deleteTrash($0) })
        }
        try withDiskWrites { book in
            let directories = state.withLock { state -> [String] in
                let users = allUsers ? Array(state.userSlots.keys) : resolveUsers(state)
                for user in users {
                    if let slot = state.userSlots[user] { state.memory.removeAll(user: slot) }
                }
                return users.map(CacheLayout.userDirectoryName)
            }
            let onDisk = allUsers ? try store.userDirectories() : []
            for directory in Set(directories + onDisk).sorted() {
                book.announce([.willRemoveAll(directory: directory)])
                let trash: String?
                do throws(SystemError) {
                    trash = try store.fileSystem.moveOutOfView(userDirectory: directory)
                } catch {
                    throw AppCacheError(
                        code: error.code, message: "The archives could not be removed; they are unchanged.",
                        path: error.path, underlyingError: error)
                }
                book.record(.removeAll(directory: directory))
                if let trash { trashes.append(trash) }
            }
        }
    }
}
