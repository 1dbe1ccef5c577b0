#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Which one cache, of every process and instance sharing a root, sends the outbox's queued
/// changes now: one word of the lock file (a ``ProcessLease``: a process id and the moment its
/// lease ends) and,
/// inside a process, which instance holds the process's lease.
///
/// A sender takes the lease before a send and renews it while the send runs; it lets go when
/// the queue is empty or waits (no network, no sender registered). No file lock is held across
/// a send, which may last as long as the network wants, and may be suspended with the app: a
/// lock held into suspension gets an iOS process terminated (`0xdead10cc`). A process that dies
/// holding the lease loses it at once (`kill(pid, 0)` says it is gone); one suspended mid-send
/// loses it when its lease runs out, ``duration`` seconds after its last renewal, and another
/// process may then send the change again, with the same id: what it records under the lock
/// file's lock afterwards is checked against the queue, so a change is confirmed once.
///
/// Thread safety: every access to the word is one atomic operation; the in-process table is
/// behind its own small lock, never held across anything else.
struct SenderLease: Sendable {
    /// How long a lease lasts without renewal, in seconds.
    static let duration: UInt32 = 30

    let words: SharedWords
    /// Whether this process may write the word (not with a read-only root).
    let mayWrite: Bool
    /// This process (tests play others with other ids).
    var processID = ProcessLease.currentProcess

    /// Which instance holds this process's lease, per version directory.
    private static let holders = Locked<[String: ObjectIdentifier]>([:])

    /// What ``acquire(by:root:)`` found.
    enum Acquired: Equatable {
        case held
        /// Another process or instance holds it, for about this many more seconds.
        case heldElsewhere(seconds: UInt32)
        /// This process may not write the lock file (a read-only root): it never sends.
        case unavailable
    }

    /// Takes (or renews) the lease for the cache `holder` of the version directory `root`.
    func acquire(by holder: ObjectIdentifier, root: String) -> Acquired {
        guard mayWrite else { return .unavailable }
        let ownInstance = Self.holders.withLock { holders -> Bool in
            if let current = holders[root], current != holder { return false }
            holders[root] = holder
            return true
        }
        guard ownInstance else { return .heldElsewhere(seconds: Self.duration) }
        let now = ProcessLease.now
        for _ in 0..<4 {
            let value = words.load(.senderLease)
            let current = ProcessLease(word: value)
            if current.process != processID, value != 0, current.isLive(now: now) {
                Self.holders.withLock { if $0[root] == holder { $0[root] = nil } }
                return .heldElsewhere(seconds: max(current.end &- now, 1))
            }
            if words.compareExchange(.senderLease, expected: value, desired: ProcessLease(process: processID, end: now &+ Self.duration).word) {
                return .held
            }
        }
        Self.holders.withLock { if $0[root] == holder { $0[root] = nil } }
        return .heldElsewhere(seconds: 1)
    }

    /// Lets go of the lease, if `holder` holds it.
    func release(by holder: ObjectIdentifier, root: String) {
        guard mayWrite else { return }
        let held = Self.holders.withLock { holders -> Bool in
            guard holders[root] == holder else { return false }
            holders[root] = nil
            return true
        }
        guard held else { return }
        let value = words.load(.senderLease)
        if ProcessLease(word: value).process == processID { _ = words.compareExchange(.senderLease, expected: value, desired: 0) }
    }
}
