#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Which processes use a root now, so that a writer knows when another one would read what it
/// holds back: eight slots in the lock file's shared words, one per process, each a process id
/// and the moment its lease ends.
///
/// A process takes (or renews) a slot when it reads the disk, for ``lease`` seconds, and for
/// as long as it lives while it watches the root for changes (an `updates` stream, a cache
/// following the signed-in user). A writer asks ``othersArePresent()`` when it schedules a
/// write-back: a slot of another process, its lease running and the process alive, means a
/// reader is there.
///
/// No lock is held, no file is written and nothing runs on a timer: a slot is one word changed
/// by compare-and-swap; a dead process's slot is taken over (`kill(pid, 0)` says it is gone)
/// and a suspended one's lease runs out. That matters on iOS, where a lock held into suspension
/// gets the process terminated (`0xdead10cc`). When all eight slots hold other live processes,
/// a process takes none: others are present anyway. Two processes of one id (a reused id) or
/// a wrong answer from a damaged word cost a write-back made sooner or later than needed,
/// never data.
///
/// Thread safety: every access is one atomic operation on the shared words.
struct PeerPresence: Sendable {
    /// How long a read keeps a process counted as present, in seconds.
    static let lease: UInt32 = 30

    let words: SharedWords
    /// Whether this process may write the words (not with a read-only root).
    let mayWrite: Bool
    /// This process (tests play others with other ids).
    let processID: UInt32

    init(words: SharedWords, mayWrite: Bool, processID: UInt32 = ProcessLease.currentProcess) {
        self.words = words
        self.mayWrite = mayWrite
        self.processID = processID
    }

    /// Counts this process present for ``lease`` seconds from now (`forLife`: while it lives),
    /// unless it already is for long enough.
    ///
    /// - Complexity: at most 16 atomic loads and one compare-and-swap; a system call only to
    ///   test whether the process of a slot it would take over is alive.
    func renew(forLife: Bool = false) {
        guard mayWrite else { return }
        let now = ProcessLease.now
        let until = forLife ? ProcessLease.forLife : now &+ Self.lease
        let claim = ProcessLease(process: processID, end: until).word
        for index in Self.slots {
            let value = words.load(index)
            let current = ProcessLease(word: value)
            guard current.process == processID else { continue }
            // Renewed at most once per half lease; a lease for life is never shortened.
            if current.end == ProcessLease.forLife || (!forLife && current.end >= now &+ Self.lease / 2) { return }
            if words.compareExchange(index, expected: value, desired: claim) { return }
        }
        for index in Self.slots {
            let value = words.load(index)
            guard value == 0 || !ProcessLease(word: value).isLive(now: now) else { continue }
            if words.compareExchange(index, expected: value, desired: claim) { return }
        }
    }

    /// Ends this process's lease for life (it stops watching): it stays present for one lease.
    func endLeaseForLife() {
        guard mayWrite else { return }
        for index in Self.slots {
            let value = words.load(index)
            let current = ProcessLease(word: value)
            guard current.process == processID, current.end == ProcessLease.forLife else { continue }
            _ = words.compareExchange(index, expected: value, desired: ProcessLease(process: processID, end: ProcessLease.now &+ Self.lease).word)
        }
    }

    /// Whether another live process has read the root within its lease, or watches it.
    ///
    /// - Complexity: 8 atomic loads, and `kill(pid, 0)` for each slot whose lease runs.
    func othersArePresent() -> Bool {
        let now = ProcessLease.now
        for index in Self.slots {
            let value = words.load(index)
            let claim = ProcessLease(word: value)
            if value != 0, claim.process != processID, claim.isLive(now: now) { return true }
        }
        return false
    }

    private static var slots: Range<Int> { LockFileWord.presenceSlots }
}
