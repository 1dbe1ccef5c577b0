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

    static func end(_ word: UInt64) -> UInt32 { PeerPresence.leaseEnd(word) }

    @Test func oneInstanceHoldsItUntilItLetsGo() {
        let words = PeerPresenceTests.Words()
        let lease = SenderLease(words: words.shared, mayWrite: true)
        let root = Self.root()
        let (app, widget) = (Instance(), Instance())
        let before = PeerPresence.now
        #expect(lease.acquire(by: ObjectIdentifier(app), root: root) == .held)
        let word = words.base[SenderLease.word]
        #expect(PeerPresence.process(word) == UInt32(getpid()))
        #expect((before + SenderLease.duration...PeerPresence.now + SenderLease.duration).contains(Self.end(word)))

        #expect(lease.acquire(by: ObjectIdentifier(widget), root: root) == .heldElsewhere(seconds: SenderLease.duration))
        lease.release(by: ObjectIdentifier(widget), root: root)
        #expect(words.base[SenderLease.word] == word, "only the holder lets go")
        #expect(lease.acquire(by: ObjectIdentifier(app), root: root) == .held, "renewed")

        lease.release(by: ObjectIdentifier(app), root: root)
        #expect(words.base[SenderLease.word] == 0)
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
        let theirs = PeerPresence.slot(PeerPresenceTests.alive, PeerPresence.now + 20)
        words.base[SenderLease.word] = theirs
        guard case .heldElsewhere(let seconds) = lease.acquire(by: ObjectIdentifier(app), root: root) else {
            Issue.record("taken from a live process")
            return
        }
        #expect((19...20).contains(seconds), "for as long as their lease runs")
        #expect(words.base[SenderLease.word] == theirs)
        // This process's table was not left naming `app`: another instance hears the same.
        guard case .heldElsewhere(let again) = lease.acquire(by: ObjectIdentifier(widget), root: root) else {
            Issue.record("taken from a live process")
            return
        }
        #expect(again <= 20)

        words.base[SenderLease.word] = PeerPresence.slot(PeerPresenceTests.alive, PeerPresence.now - 1)
        #expect(lease.acquire(by: ObjectIdentifier(app), root: root) == .held, "their lease ran out")
    }

    @Test func aProcessThatDiedHoldingItLosesItAtOnce() throws {
        let words = PeerPresenceTests.Words()
        words.base[SenderLease.word] = PeerPresence.slot(try PeerPresenceTests.deadProcess(), PeerPresence.now + SenderLease.duration)
        let lease = SenderLease(words: words.shared, mayWrite: true)
        #expect(lease.acquire(by: ObjectIdentifier(Instance()), root: Self.root()) == .held)
        #expect(PeerPresence.process(words.base[SenderLease.word]) == UInt32(getpid()))
    }

    @Test func aProcessThatMayNotWriteTheRootNeverSends() {
        let words = PeerPresenceTests.Words()
        let lease = SenderLease(words: words.shared, mayWrite: false)
        let (instance, root) = (Instance(), Self.root())
        #expect(lease.acquire(by: ObjectIdentifier(instance), root: root) == .unavailable)
        lease.release(by: ObjectIdentifier(instance), root: root)
        #expect(words.base[SenderLease.word] == 0, "the word untouched")
    }
}
