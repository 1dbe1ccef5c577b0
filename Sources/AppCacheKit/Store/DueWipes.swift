/// User directories whose data has left memory (and every session of theirs) but whose
/// archives have yet to leave the disk: the part of a removal that runs on the library's
/// threads, so that `removeUser`, `signOut` and `removeAll` never make their caller wait for
/// the disk.
///
/// Every batch of disk changes carries them out before its own changes (so nothing written
/// later can be wiped by an earlier removal); a read that would go to the disk of a directory
/// still due misses instead (so it never finds removed data, and never waits for the lock file).
/// A removal also in the root's shared record (``PendingRemovals``) is carried out by whichever
/// process's batch comes first; once one has, it is no longer this process's to carry out (the
/// directory may hold data written after it by then).
struct DueWipes {
    /// The user directories to move out of view, each with its number in the shared record
    /// (`nil`: not in it, this process's alone).
    private(set) var pending: [String: UInt64?] = [:]
    /// Whether every user directory on disk goes, whatever its name, and that removal's number
    /// in the shared record.
    private(set) var allUsers = false
    private var allUsersNumber: UInt64?
    /// The directories whose failure was reported already: told once, retried by every batch.
    private var reported: Set<String> = []

    var isEmpty: Bool { pending.isEmpty && !allUsers }

    /// The user directories to move out of view.
    var directories: Set<String> { Set(pending.keys) }

    /// Adds `directories` (and, with `allUsers`, every user directory) to what must go, this
    /// process's alone until ``noteShared(_:allUsers:numbers:)``.
    mutating func add(_ directories: [String], allUsers: Bool) {
        if allUsers {
            self.allUsers = true
            allUsersNumber = nil
        }
        for directory in directories { pending[directory] = .some(nil) }
    }

    /// Notes that the removals just added are in the shared record, as `numbers` (one per
    /// directory, or one for `allUsers`).
    mutating func noteShared(_ directories: [String], allUsers: Bool, numbers: [UInt64]) {
        if allUsers {
            allUsersNumber = numbers.first
            for directory in directories { pending[directory] = .some(numbers.first) }
            return
        }
        for (directory, number) in zip(directories, numbers) { pending[directory] = .some(number) }
    }

    /// Notes that a batch wiped `directories` (and, with `allUsers`, listed and wiped them all).
    mutating func didWipe(_ directories: some Sequence<String>, allUsers: Bool) {
        for directory in directories { pending[directory] = nil }
        reported.subtract(directories)
        if allUsers {
            self.allUsers = false
            allUsersNumber = nil
        }
    }

    /// Forgets the removals in the shared record that a batch (of any process) carried out:
    /// those numbered below `done`.
    mutating func didCarryOutShared(below done: UInt64) {
        pending = pending.filter { _, number in number.map { $0 >= done } ?? true }
        if allUsers, let number = allUsersNumber, number < done {
            allUsers = false
            allUsersNumber = nil
        }
    }

    /// Whether archives in `directory` (a user directory) are removed, their wipe still due.
    func covers(_ directory: String?) -> Bool {
        guard let directory else { return false }
        return allUsers || pending[directory] != nil
    }

    /// Whether the failure to wipe `directory` is news: `true` once per directory.
    mutating func shouldReport(_ directory: String) -> Bool {
        reported.insert(directory).inserted
    }
}
