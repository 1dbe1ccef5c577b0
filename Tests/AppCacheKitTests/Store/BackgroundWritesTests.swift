import Dispatch
import Foundation
import Testing

@testable import AppCacheKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// No caller waits on the disk except for a read it asked for: spills past the memory limit,
/// the writes of a switch of user, removals and memory warnings happen on the library's
/// threads, while the data stays in memory, readable.
@Suite struct BackgroundWritesTests {
    /// A disk that makes every file operation wait while closed, and notes any made on the
    /// caller's own thread (where it would have made the caller wait).
    final class DiskGate: Sendable {
        private struct State {
            var closed = false
            var caller: pthread_t?
            var onCallersThread: [String] = []
        }
        private let state = Locked(State())
        private let opened = DispatchSemaphore(value: 0)

        var hook: FileSystem.FaultInjector {
            { [self] operation, path in
                let closed = state.withLock { state -> Bool in
                    if let caller = state.caller, pthread_equal(caller, pthread_self()) != 0 {
                        state.onCallersThread.append("\(operation) \(path)")
                    }
                    return state.closed
                }
                if closed { _ = opened.wait(timeout: .now() + 30) }
                return nil
            }
        }

        /// Closes the disk for everyone but notes the calling thread as the caller.
        func close() {
            state.withLock {
                $0.closed = true
                $0.caller = pthread_self()
            }
        }

        func open() {
            state.withLock { $0.closed = false }
            for _ in 0..<64 { opened.signal() }
        }

        var operationsOnCallersThread: [String] { state.withLock { $0.onCallersThread } }
    }

    @Test func spillsSwitchesRemovalsAndWarningsLeaveTheCallerFree() throws {
        let fixture = try Fixture()
        let gate = DiskGate()
        let cache = try fixture.openCache(user: "alice", memory: .layer(entries: 1, writeBackDelay: nil), faults: gate.hook)
        try cache.cacheItems([Plain(value: 1)], forKey: "a")
        gate.close()

        try cache.cacheItems([Plain(value: 2)], forKey: "b")  // "a" spills
        #expect(try cache.getCachedItems(Plain.self, forKey: "a") == [Plain(value: 1)], "a spilled entry answers reads until written")
        try cache.switchUser(to: "bob")  // alice's "a" and "b" are written
        try cache.cacheItems([Plain(value: 3)])
        try cache.signOut(removingData: true)  // bob's data goes
        try cache.cacheItems([Plain(value: 4)], forKey: "shared")
        cache.didReceiveMemoryWarning()
        #expect(gate.operationsOnCallersThread.isEmpty, "the caller made no file operation")

        gate.open()
        cache.store.waitForBackgroundWork()
        #expect(gate.operationsOnCallersThread.isEmpty)
        #expect(fixture.hasArchive(Plain.self, key: "a", user: "alice"))
        #expect(fixture.hasArchive(Plain.self, key: "b", user: "alice"))
        #expect(!fixture.hasArchive(Plain.self, user: "bob"), "bob's removal reached the disk")
        #expect(fixture.hasArchive(Plain.self, key: "shared", user: nil))
        #expect(cache.memoryStatistics.dirtyEntries == 0)
        #expect(try cache.getCachedItems(Plain.self, forKey: "shared") == [Plain(value: 4)])
        #expect(fixture.diagnostics.errors.isEmpty)
        let reopened = try fixture.openCache(user: "alice")
        #expect(try reopened.getCachedItems(Plain.self, forKey: "b") == [Plain(value: 2)])
    }

    /// `listEntries()` lists on a library thread and agrees with `entries()`.
    @Test func listingEntriesAsynchronouslyAgreesWithTheSynchronousForm() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil))
        try cache.cacheItems([Plain(value: 1)], forKey: "written")
        try cache.flush()
        try cache.cacheItems([Plain(value: 2)], forKey: "dirty")
        let listed = try await cache.entries()
        #expect(listed.map(\.key) == ["dirty", "written"])
        #expect(listed.map(\.isDirty) == [true, false])
        #expect(try await cache.entriesOfAllUsers() == (try cache.entriesOfAllUsers()))
    }
}

/// A removal on the write-back thread and a read right after it.
@Suite struct RemovalReadTests {
    /// Once a user's directory has left the disk, a read does not find the removed items
    /// through the directory descriptor reads keep open, even before the disk's change count
    /// has moved on (a removal's batch renames first and tells everyone at its end; a read in
    /// between, after the removal returned, must miss).
    @Test func aReadAfterTheRenameNeverSeesTheRemovedDirectory() throws {
        let fixture = try Fixture()
        let store = try fixture.store()
        let key = ArchiveKey(user: "alice", cacheName: "Plains", key: "k")
        let payload = try PayloadCodec.binary.encode([Plain(value: 1)])
        try fixture.plant(
            ArchiveRecord(payload: payload.payload, codec: payload.codec.headerValue, schemaVersion: 1, cachedDate: Date()),
            forKey: key)
        let path = store.layout.archivePath(for: key)
        func read() throws -> Bool {
            if case .found = try store.read(at: path, forKey: key, versions: .only(1), change: 7, { _, _ in () }) { return true }
            return false
        }
        #expect(try read(), "read through the directory, which is now held open")
        let trash = try #require(try store.moveOutOfView(userDirectory: CacheLayout.userDirectoryName("alice")))
        #expect(try !read(), "the removed archive was read back through the held directory")
        #expect(store.deleteTrash(trash) == nil)
    }
}

/// A removal that comes while a batch runs on another thread never wipes what was cached after
/// it: the batch carries out the removal before it writes the newer items.
@Suite struct RemovalDuringABatchTests {
    @Test func itemsCachedAfterARemovalThatCameMidBatchSurviveTheRemoval() throws {
        let fixture = try Fixture()
        let armed = TestLock(false)
        let during = TestLock<(@Sendable () -> Void)?>(nil)
        let cache = try fixture.openCache(memory: .layer(writeBackDelay: nil)) { operation, path in
            // The flush's batch writes the signed-in user's record (a temporary file at the top of
            // the version directory) after its start-of-batch wipes and before it takes its entries.
            if operation == .createFile, !path.contains("/user-"), armed.withLock({ let was = $0; $0 = false; return was }) {
                during.withLock { $0 }?()
            }
            return nil
        }
        try cache.cacheItems([Plain(value: 1)], forKey: "k0")
        try cache.flush()
        try cache.switchUser(to: "bob")
        cache.store.waitForBackgroundWork()

        // Hold the write-back thread, so that the flush below is the batch that writes the
        // signed-in record the next switch leaves due.
        let release = DispatchSemaphore(value: 0)
        cache.store.writeBack.queue.async { release.wait() }
        try cache.switchUser(to: "alice")
        during.withLock {
            // (Weakly: the cache's fault hook holds this closure.)
            $0 = { [weak cache] in
                // Mid-batch, from "another thread": alice's data is removed, she signs in again
                // and caches newer items.
                try? cache?.removeUser("alice")
                try? cache?.switchUser(to: "alice")
                try? cache?.cacheItems([Plain(value: 2)], forKey: "k0")
            }
        }
        armed.withLock { $0 = true }
        try cache.flush()
        release.signal()
        cache.store.waitForBackgroundWork()

        #expect(!armed.withLock { $0 }, "the removal came mid-batch")
        #expect(try cache.getCachedItems(Plain.self, forKey: "k0") == [Plain(value: 2)])
        #expect(try fixture.openCache().getCachedItems(Plain.self, forKey: "k0") == [Plain(value: 2)], "on disk after the removal's batch")
    }
}
