#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// User directories removed (by `removeUser`, `removeAllUsers`, `removeAll` or a sign-out
/// that removes data) but not yet moved off the disk, recorded in the lock file's shared words
/// so that every process treats them as gone from the moment the call returns, and a relaunch
/// after a kill does too.
///
/// A removal makes the caller wait for no file: it takes the next number of ``recordedWord``
/// (one compare-and-swap) and writes, in the ring slot of that number, the number's low 16 bits
/// and a 48-bit hash of the directory's name (or ``allUsers``). Readers compare
/// ``recordedWord`` with ``doneWord`` (two atomic loads: nothing pending, nearly always) and
/// otherwise look at the pending slots: a directory named there, a removal of every user, or a
/// slot not yet written for its number makes every read of that directory miss. A writer,
/// holding the lock file's lock at the start of each batch, moves the directories named off the
/// disk (in one journaled rename each) and then moves ``doneWord`` up to the number it read.
///
/// The slots are a ring of ``capacity``: a removal that would overwrite one still pending is
/// not recorded (``record(_:)`` says so), and the caller moves the directory itself under the
/// lock instead. A recorder that dies between taking its number and writing its slot leaves a
/// slot that names nothing: readers treat it as a removal of everything until a writer passes
/// it (waiting a moment for the slot first), and the removal was never acknowledged to anyone.
/// A recorder whose slot a writer passed before it was written finds ``doneWord`` past its
/// number and moves the directory itself. The lock file's words are untrusted: a damaged word
/// costs reads that miss or a needless batch, and a removal carried out only for a directory
/// whose name hashes to what a slot names (48 bits).
///
/// Thread safety: every access is one atomic operation on the shared words.
struct PendingRemovals: Sendable {
    /// The number of removals ever recorded on the root.
    static let recordedWord = LockFileWord.removalsRecorded
    /// The number of removals carried out (every removal below it is off the disk).
    static let doneWord = LockFileWord.removalsDone
    /// The first of the ring's slots.
    static let firstSlot = LockFileWord.removalSlots.lowerBound
    /// How many removals may be pending at once.
    static let capacity = LockFileWord.removalSlots.count

    /// What a slot names for a removal of every user directory.
    static let allUsers: UInt64 = 0xFFFF_FFFF_FFFF

    let words: SharedWords
    /// Whether this process may write the words (not with a read-only root).
    let mayWrite: Bool

    /// The 48-bit hash a slot names `directory` by: never 0 or ``allUsers``.
    static func hash(of directory: String) -> UInt64 {
        let hash = StableHash.value64(directory) & 0xFFFF_FFFF_FFFF
        return hash == 0 || hash == allUsers ? 1 : hash
    }

    /// One pending removal as a slot holds it.
    enum Entry: Equatable {
        /// The directory whose name hashes to this.
        case directory(hash: UInt64)
        /// Every user directory.
        case allUsers
        /// A slot not (yet) written for its number.
        case unknown
    }

    private static func slot(_ number: UInt64) -> Int {
        firstSlot + Int(number % UInt64(capacity))
    }

    /// The slot's entry for removal `number`.
    private func entry(_ number: UInt64) -> Entry {
        let value = words.load(Self.slot(number))
        guard value >> 48 == number & 0xFFFF else { return .unknown }
        let hash = value & 0xFFFF_FFFF_FFFF
        return hash == Self.allUsers ? .allUsers : .directory(hash: hash)
    }

    /// Records the removal of `directory` (`nil`: of every user directory).
    ///
    /// - Returns: the removal's number; `nil` when it could not be recorded (the ring is full,
    ///   or the root is read-only): the caller carries it out itself, under the lock.
    func record(_ directory: String?) -> UInt64? {
        guard mayWrite else { return nil }
        let hash = directory.map(Self.hash(of:)) ?? Self.allUsers
        while true {
            let recorded = words.load(Self.recordedWord)
            let done = words.load(Self.doneWord)
            // Never over a slot still pending (a damaged `done` past `recorded` is refused too).
            guard recorded &- done < UInt64(Self.capacity) else { return nil }
            if words.compareExchange(Self.recordedWord, expected: recorded, desired: recorded &+ 1) {
                words.store((recorded & 0xFFFF) << 48 | hash, at: Self.slot(recorded))
                return recorded
            }
        }
    }

    /// The number of removals carried out: every one below it is off the disk.
    var doneCount: UInt64 { words.load(Self.doneWord) }

    /// Whether a removal is recorded and not yet carried out (two atomic loads).
    var hasPending: Bool { words.load(Self.recordedWord) != words.load(Self.doneWord) }

    /// Whether removal `number` was passed by a writer (carried out, or passed as unreadable).
    func isPassed(_ number: UInt64) -> Bool {
        words.load(Self.doneWord) > number
    }

    /// Whether a pending removal covers `directory` (a user directory's name): its archives
    /// are then gone as far as any read goes.
    ///
    /// - Complexity: two atomic loads when nothing is pending; one more per pending removal.
    @inline(__always)
    func covers(_ directory: String?) -> Bool {
        let recorded = words.load(Self.recordedWord)
        let done = words.load(Self.doneWord)
        guard recorded != done else { return false }
        return covers(directory, pending: done..<max(recorded, done))
    }

    private func covers(_ directory: String?, pending: Range<UInt64>) -> Bool {
        // More than the ring holds: the words are damaged; nothing pending can be trusted.
        guard pending.count <= Self.capacity else { return true }
        let hash = directory.map(Self.hash(of:))
        for number in pending {
            switch entry(number) {
            case .allUsers, .unknown: return true
            case .directory(let named) where named == hash: return true
            case .directory: continue
            }
        }
        return false
    }

    /// The removals pending now, for a writer holding the lock: their numbers' end and what
    /// each names. A slot not yet written is waited for a moment (its recorder is between
    /// taking its number and writing it), then given as ``Entry/unknown``.
    func pending() -> (end: UInt64, entries: [Entry]) {
        let recorded = words.load(Self.recordedWord)
        let done = words.load(Self.doneWord)
        guard recorded > done, recorded - done <= UInt64(Self.capacity) else {
            // Nothing pending, or damaged words: start again from what was recorded.
            return (recorded, [])
        }
        return (recorded, (done..<recorded).map { number in
            var entry = entry(number)
            var waited = 0
            while entry == .unknown && waited < 100 {
                usleep(100)
                waited += 1
                entry = self.entry(number)
            }
            return entry
        })
    }

    /// Notes that every removal below `end` is carried out. Call holding the lock, after
    /// carrying out what ``pending()`` gave.
    func markDone(upTo end: UInt64) {
        guard mayWrite, end > words.load(Self.doneWord) else { return }
        words.store(end, at: Self.doneWord)
    }

    /// The number of removals recorded so far: a process that remembers it learns of later
    /// ones with ``recorded(since:)``.
    var recordedCount: UInt64 { words.load(Self.recordedWord) }

    /// What the removals recorded from `number` on name, while the ring still holds them
    /// all; `nil` when it no longer does (more than ``capacity`` since).
    func recorded(since number: UInt64) -> [Entry]? {
        let recorded = words.load(Self.recordedWord)
        guard recorded >= number else { return nil }
        guard recorded - number <= UInt64(Self.capacity) else { return nil }
        return (number..<recorded).map(entry)
    }
}
