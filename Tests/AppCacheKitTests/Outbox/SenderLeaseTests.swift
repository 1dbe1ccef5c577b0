import Foundation
import Testing

@testable import AppCacheKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// ``SenderLease``: of every instance and process sharing a root, one sends the outbox. Played
/// on shared words in memory (``PeerPresenceTests/Words``), other processes with other ids: the
/// parent (alive) and one that has ended. Each test has a root name of its own, since the
/// table of which instance holds a process's lease is process-wide.
@Suite struct SenderLeaseTests {
    /// A cache instance, as far as the lease goes.
    final class Instance {}

    static func root() -> String { "/sender-lease-tests/\(UUID().uuidString)" }

    static func end(_ word: UInt64) -> UInt32 { ProcessLease(word: word).end }

    @Test func oneInstanceHoldsItUntilItLetsGo() {
        let words = PeerPresenceTests.Words()
        let lease = SenderLease(words: words.shared, mayWrite: true)
        let root = Self.root()
        let (app, widget) = (Instance(), Instance())
        let before = ProcessLease.now
        #expect(lease.acquire(by: ObjectIdentifier(app), root: root) == .held)
        let word = words.base[LockFileWord.senderLease.rawValue]
        #expect(ProcessLease(word: word).process == UInt32(getpid()))
        #expect((before + SenderLease.duration...ProcessLease.now + SenderLease.duration).contains(Self.end(word)))

        #expect(lease.acquire(by: ObjectIdentifier(widget), root: root) == .heldElsewhere(seconds: SenderLease.duration))
        lease.release(by: ObjectIdentifier(widget), root: root)
        #expect(words.base[LockFileWord.senderLease.rawValue] == word, "only the holder lets go")
        #expect(lease.acquire(by: ObjectIdentifier(app), root: root) == .held, "renewed")

        lease.release(by: ObjectIdentifier(app), root: root)
        #expect(words.base[LockFileWord.senderLease.rawValue] == 0)
        #expect(lease.acquire(by: ObjectIdentifier(widget), root: root) == .held)
    }

    @Test func eachRootHasItsOwnSender() {
        let (first, second) = (PeerPresenceTests.Words(), PeerPresenceTests.Words())
        let (app, widget) = (Instance(), Instance())
        #expect(SenderLease(words: first.shared, mayWrite: true).acquire(by: ObjectIdentifier(app), root: Self.root()) == .held)
        #expect(SenderLease(words: second.shared, mayWrite: true).acquire(by: ObjectIdentifier(widget), root: Self.root()) == .held)
    }

    @Test func anotherLiveProcessHoldsItUntilItsLeaseRunsOut() {
        let words = PeerPresenceTests.Words()
        let lease = SenderLease(words: words.shared, mayWrite: true)
        let root = Self.root()
        let (app, widget) = (Instance(), Instance())
        let theirs = ProcessLease(process: PeerPresenceTests.alive, end: ProcessLease.now + 20).word
        words.base[LockFileWord.senderLease.rawValue] = theirs
        guard case .heldElsewhere(let seconds) = lease.acquire(by: ObjectIdentifier(app), root: root) else {
            Issue.record("taken from a live process")
            return
        }
        #expect((19...20).contains(seconds), "for as long as their lease runs")
        #expect(words.base[LockFileWord.senderLease.rawValue] == theirs)
        // This process's table was not left naming `app`: another instance hears the same.
        guard case .heldElsewhere(let again) = lease.acquire(by: ObjectIdentifier(widget), root: root) else {
            Issue.record("taken from a live process")
            return
        }
        #expect(again <= 20)

        words.base[LockFileWord.senderLease.rawValue] = ProcessLease(process: PeerPresenceTests.alive, end: ProcessLease.now - 1).word
        #expect(lease.acquire(by: ObjectIdentifier(app), root: root) == .held, "their lease ran out")
    }

    @Test func aProcessThatDiedHoldingItLosesItAtOnce() throws {
        let words = PeerPresenceTests.Words()
        words.base[LockFileWord.senderLease.rawValue] = ProcessLease(process: try PeerPresenceTests.deadProcess(), end: ProcessLease.now + SenderLease.duration).word
        let lease = SenderLease(words: words.shared, mayWrite: true)
        #expect(lease.acquire(by: ObjectIdentifier(Instance()), root: Self.root()) == .held)
        #expect(ProcessLease(word: words.base[LockFileWord.senderLease.rawValue]).process == UInt32(getpid()))
    }

    @Test func aProcessThatMayNotWriteTheRootNeverSends() {
        let words = PeerPresenceTests.Words()
        let lease = SenderLease(words: words.shared, mayWrite: false)
        let (instance, root) = (Instance(), Self.root())
        #expect(lease.acquire(by: ObjectIdentifier(instance), root: root) == .unavailable)
        lease.release(by: ObjectIdentifier(instance), root: root)
        #expect(words.base[LockFileWord.senderLease.rawValue] == 0, "the word untouched")
    }
}
