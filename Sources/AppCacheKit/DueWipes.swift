/// User directories whose data has left memory (and every session of theirs) but whose
/// archives have yet to leave the disk: the part of a removal that runs on the library's
/// threads, so that `removeUser`, `signOut` and `removeAll` never make their caller wait for
/// the disk.
///
/// Every batch of disk changes carries them out before its own changes (so nothing written
/// later can be wiped by an earlier removal); a read that would go to the disk of a directory
/// still due misses instead (so it never finds removed data, and never waits for the lock file).
struct DueWipes {
    /// The user directories to move out of view.
    private(set) var directories: Set<String> = []
    /// Whether every user directory on disk goes, whatever its name.
    private(set) var allUsers = false
    /// The directories whose failure was reported already: told once, retried by every batch.
    private var reported: Set<String> = []

    var isEmpty: Bool { directories.isEmpty && !allUsers }

    /// Adds `directories` (and, with `allUsers`, every user directory) to what must go.
    mutating func add(_ directories: [String], allUsers: Bool) {
        self.directories.formUnion(directories)
        self.allUsers = self.allUsers || allUsers
    }

    /// Notes that a batch wiped `directories` (and, with `allUsers`, listed and wiped them all).
    mutating func didWipe(_ directories: some Sequence<String>, allUsers: Bool) {
        self.directories.subtract(directories)
        reported.subtract(directories)
        if allUsers { self.allUsers = false }
    }

    /// Whether archives in `directory` (a user directory) are removed, their wipe still due.
    func covers(_ directory: String?) -> Bool {
        guard let directory else { return false }
        return allUsers || directories.contains(directory)
    }

    /// Whether the failure to wipe `directory` is news: `true` once per directory.
    mutating func shouldReport(_ directory: String) -> Bool {
        reported.insert(directory).inserted
    }
}
