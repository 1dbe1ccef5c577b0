import AppCacheTestSupport
import Foundation
import Testing

@testable import AppCacheKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Who uses a root now (``PeerPresence``): a reader's lease, a watcher's presence for life, a
/// dead process's slot taken over, and a writer that writes back promptly while another process
/// is there. Other processes are played with other process ids: the parent (alive) and a child
/// that has ended (dead).
@Suite struct PeerPresenceTests {
    /// Sixteen shared words in memory, as the lock file maps them.
    final class Words {
        let base = UnsafeMutablePointer<UInt64>.allocate(capacity: 16)
        init() { base.initialize(repeating: 0, count: 16) }
        deinit { base.deallocate() }
        var shared: SharedWords { SharedWords(base: base, descriptor: -1) }
    }

    static let alive = UInt32(getppid())

    /// The id of a process that has ended.
    static func deadProcess() throws -> UInt32 {
        let process = Process()
        process.executableURL = URL(filePath: "/bin/sh")
        process.arguments = ["-c", "exit 0"]
        try process.run()
        process.waitUntilExit()
        return UInt32(process.processIdentifier)
    }

    @Test func aReaderIsPresentToOthersNotToItself() {
        let words = Words()
        let me = PeerPresence(words: words.shared, mayWrite: true)
        let other = PeerPresence(words: words.shared, mayWrite: true, processID: Self.alive)
        #expect(!me.othersArePresent() && !other.othersArePresent(), "nobody yet")

        other.renew()
        #expect(me.othersArePresent(), "the other process read: it is present")
        #expect(!other.othersArePresent(), "a process is never its own peer")
        other.renew()
        #expect((8..<16).filter { words.base[$0] != 0 }.count == 1, "one slot per process, renewed in place")
    }

    @Test func aLeaseRunsOutAndAWatcherStaysForLife() {
        let words = Words()
        let me = PeerPresence(words: words.shared, mayWrite: true)
        // A read long ago: its lease ended.
        words.base[8] = UInt64(Self.alive) << 32 | UInt64(UInt32(time(nil)) - 1)
        #expect(!me.othersArePresent())

        let watcher = PeerPresence(words: words.shared, mayWrite: true, processID: Self.alive)
        watcher.renew(forLife: true)
        #expect(me.othersArePresent())
        #expect(words.base[8] & 0xFFFF_FFFF == 0xFFFF_FFFF, "the expired slot of the same process was renewed, for life")
        watcher.renew()
        #expect(words.base[8] & 0xFFFF_FFFF == 0xFFFF_FFFF, "a read never shortens a lease for life")
        watcher.endLeaseForLife()
        #expect(me.othersArePresent(), "a watcher that stops stays present for one lease")
        #expect(words.base[8] & 0xFFFF_FFFF <= UInt64(UInt32(time(nil)) + PeerPresence.lease))
    }

    @Test func aDeadProcessIsAbsentAndItsSlotIsTakenOver() throws {
        let words = Words()
        let dead = try Self.deadProcess()
        for index in 8..<16 { words.base[index] = UInt64(dead) << 32 | UInt64(UInt32.max) }
        let me = PeerPresence(words: words.shared, mayWrite: true)
        #expect(!me.othersArePresent(), "a process that died watching is not present")
        me.renew()
        #expect((8..<16).contains { words.base[$0] >> 32 == UInt64(me.processID) }, "a dead process's slot was taken")
    }

    @Test func slotsFullOfLiveOthersAreLeftAlone() {
        let words = Words()
        for index in 8..<16 { words.base[index] = UInt64(Self.alive) << 32 | UInt64(UInt32.max) }
        let me = PeerPresence(words: words.shared, mayWrite: true)
        me.renew()
        #expect((8..<16).allSatisfy { words.base[$0] >> 32 == UInt64(Self.alive) })
        #expect(me.othersArePresent())
    }

    @Test func aReadOnlyProcessWritesNothing() {
        let words = Words()
        PeerPresence(words: words.shared, mayWrite: false).renew(forLife: true)
        #expect((0..<16).allSatisfy { words.base[$0] == 0 })
    }

    // Looks at archive files: each collection a file of its own.
    /// The writer's side: with another live process on the root, a write-back of a minute is
    /// written within moments; without one, it waits.
    @Test func aWriteBackIsPromptWhileAnotherProcessIsPresent() async throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: .seconds(60)))
        try cache.cacheItems([Plain(value: 1)], forKey: "alone")
        #expect(!fixture.archiveExists(Plain.self, key: "alone"))

        // Another process (the parent's id, alive) reads the root.
        PeerPresence(words: cache.store.disk.coordinator.presence.words, mayWrite: true, processID: Self.alive).renew()
        try cache.flush()
        try cache.cacheItems([Plain(value: 2)], forKey: "shared")
        #expect(await eventually { fixture.archiveExists(Plain.self, key: "shared") }, "written long before the minute")
        #expect(try fixture.openCache().getCachedItems(Plain.self, forKey: "shared") == [Plain(value: 2)])
    }
}
