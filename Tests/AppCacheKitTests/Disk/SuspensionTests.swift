import AppCacheTestSupport
import Foundation
import Testing

@testable import AppCacheKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// No lock held into suspension (iOS's `0xdead10cc`): every locked batch runs inside a
/// background activity; when the system says time is up, a batch stops between archives and
/// lets go of the lock, and no new one starts until the app is active again. The system's
/// activities are played by ``FakeActivities``, as the platform's would behave.
@Suite struct SuspensionTests {
    /// Stands in for `ProcessInfo.performExpiringActivity`: grants each activity on a thread of
    /// its own (the activity lasts until the body returns), refuses them when told, and says
    /// time is up when told.
    final class FakeActivities: @unchecked Sendable {
        private let lock = NSLock()
        private var live: [Int: @Sendable (Bool) -> Void] = [:]
        private var granted = 0
        private var count = 0
        private var refusing = false

        /// Whether the system refuses new activities.
        var refuses: Bool {
            get { lock.withLock { refusing } }
            set { lock.withLock { refusing = newValue } }
        }

        var activity: SuspensionGate.Activity {
            { [self] body in start(body) }
        }

        /// How many activities were asked for.
        var started: Int { lock.withLock { count } }
        /// Whether an activity is held now.
        var isHeld: Bool { lock.withLock { granted > 0 } }

        private func start(_ body: @escaping @Sendable (Bool) -> Void) {
            let (id, refused) = lock.withLock { () -> (Int, Bool) in
                count += 1
                return (count, refusing)
            }
            if refused {
                Thread { body(true) }.start()
                return
            }
            lock.withLock {
                live[id] = body
                granted += 1
            }
            Thread { [self] in
                body(false)
                lock.withLock {
                    live[id] = nil
                    granted -= 1
                }
            }.start()
        }

        /// Says time is up to every activity held, as the system does before suspending.
        func expire() {
            for body in lock.withLock({ Array(live.values) }) { body(true) }
        }
    }

    /// A fixture whose caches use `activities` for their background activities.
    func configuration(
        _ fixture: Fixture, _ activities: FakeActivities, memory: Fixture.Memory = .diskOnly,
        faults: FileSystem.FaultInjector? = nil
    ) -> AppCache.Configuration {
        var configuration = fixture.configuration(memory: memory, faults: faults)
        configuration.backgroundActivity = activities.activity
        return configuration
    }

    @Test func everyDiskChangeRunsInsideAnActivity() throws {
        let fixture = try Fixture()
        let activities = FakeActivities()
        let outside = TestLock<[String]>([])
        let opened = TestLock(false)
        let configuration = configuration(fixture, activities, memory: .layer(writeBackDelay: nil)) { operation, path in
            if opened.withLock({ $0 }), operation != .read, !activities.isHeld { outside.withLock { $0.append("\(operation) \(path)") } }
            return nil
        }
        let cache = try AppCache(configuration: configuration)
        opened.withLock { $0 = true }
        for index in 0..<20 { try cache.cacheItems([Plain(value: index)], forKey: "k\(index)") }
        try cache.flush()
        try cache.removeItems(Plain.self, forKey: "k3")
        try cache.removeUser("alice")
        cache.store.waitForBackgroundWork()
        try cache.switchUser(to: "bob")
        try cache.cacheItems([Plain(value: 1)])
        try cache.flush()

        #expect(outside.withLock { $0 } == [], "every file change ran while an activity was held")
        #expect(activities.started >= 1)
        #expect(try fixture.openCache(user: "bob").getCachedItems(Plain.self) == [Plain(value: 1)])
    }

    // Counts archive files' renames: each collection a file of its own.
    @Test func timeUpStopsAFlushBetweenArchivesAndLetsGoOfTheLock() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let activities = FakeActivities()
        let writes = TestLock(0)
        // The system says time is up while the third archive is written.
        let configuration = configuration(fixture, activities, memory: .layer(writeBackDelay: nil)) { operation, path in
            if operation == .rename, path.contains("alice"), writes.withLock({ $0 += 1; return $0 }) == 3 { activities.expire() }
            return nil
        }
        let cache = try AppCache(configuration: configuration)
        for index in 0..<10 { try cache.cacheItems([Plain(value: index)], forKey: "k\(index)") }

        let error = expectAppCacheError { try cache.flush() }
        #expect(error?.code == .busy, "a flush the system stopped says it did not write everything")
        #expect(cache.memoryStatistics.dirtyEntries == 7, "the archive under way was finished, the rest stay dirty")
        let peer = try BusyTests.Peer(fixture)  // the lock file is free again
        peer.letGo()
        for index in 0..<10 {
            #expect(try cache.getCachedItems(Plain.self, forKey: "k\(index)") == [Plain(value: index)], "reads go on")
        }

        // Until the app is active again, nothing starts: write-through writes throw busy.
        let throughCache = try AppCache(configuration: self.configuration(fixture, activities))
        throughCache.store.disk.gate.close()
        #expect(expectAppCacheError { try throughCache.cacheItems([Plain(value: 99)], forKey: "k0") }?.code == .busy)
        #expect(expectAppCacheError { try cache.flush() }?.code == .busy)
        #expect(cache.memoryStatistics.dirtyEntries == 7)

        cache.didResume()
        throughCache.didResume()
        cache.store.waitForBackgroundWork()
        try cache.flush()
        #expect(cache.memoryStatistics.dirtyEntries == 0)
        let reopened = try fixture.openCache()
        for index in 0..<10 {
            #expect(try reopened.getCachedItems(Plain.self, forKey: "k\(index)") == [Plain(value: index)])
        }
        try throughCache.cacheItems([Plain(value: 99)], forKey: "k0")
        #expect(try reopened.getCachedItems(Plain.self, forKey: "k0") == [Plain(value: 99)])
    }

    @Test func aRefusedActivityStartsNoBatch() async throws {
        let fixture = try Fixture()
        let activities = FakeActivities()
        let cache = try AppCache(configuration: configuration(fixture, activities))
        try cache.cacheItems([Plain(value: 1)])
        // Once the first write's activity has ended, the system refuses the next one.
        #expect(await eventually { !activities.isHeld })
        activities.refuses = true

        let error = expectAppCacheError { try cache.cacheItems([Plain(value: 2)]) }
        #expect(error?.code == .busy)
        #expect(error?.message.contains("suspending") == true)
        #expect(try cache.getCachedItems(Plain.self) == [Plain(value: 1)], "what was cached stays")

        activities.refuses = false
        cache.didResume()
        try cache.cacheItems([Plain(value: 2)])
        #expect(try fixture.openCache().getCachedItems(Plain.self) == [Plain(value: 2)])
    }

    @Test func aWriteWaitingForAStoppedPeerGivesUpWhenTimeIsUp() async throws {
        let fixture = try Fixture()
        let activities = FakeActivities()
        var configuration = configuration(fixture, activities)
        configuration.lockTimeout = .seconds(600)
        let cache = try AppCache(configuration: configuration)
        try cache.cacheItems([Plain(value: 1)])
        let peer = try BusyTests.Peer(fixture)
        defer { peer.letGo() }

        let outcome = TestLock<AppCacheError?>(nil)
        Thread {
            let error = expectAppCacheError { try cache.cacheItems([Plain(value: 2)]) }
            outcome.withLock { $0 = error }
        }.start()
        // The write waits for the peer (an activity held meanwhile), until the system says time is up.
        #expect(await eventually { activities.isHeld })
        activities.expire()
        #expect(await eventually { outcome.withLock { $0 } != nil }, "the wait ends with the system's time, not the lock timeout")
        #expect(outcome.withLock { $0?.code } == .busy)
        #expect(try cache.getCachedItems(Plain.self) == [Plain(value: 1)])
    }

    @Test func theExtensionHostGoingToTheBackgroundFlushesThenCloses() throws {
        let fixture = try Fixture()
        let activities = FakeActivities()
        let cache = try AppCache(configuration: configuration(fixture, activities, memory: .layer(writeBackDelay: nil)))
        try cache.cacheItems([Plain(value: 5)], forKey: "a")

        cache.flushBeforeSuspension(thenClose: true)
        cache.store.waitForBackgroundWork()
        #expect(try fixture.openCache().getCachedItems(Plain.self, forKey: "a") == [Plain(value: 5)])
        #expect(cache.store.disk.gate.isClosed)
        try cache.cacheItems([Plain(value: 6)], forKey: "a")  // write-back: stays in memory
        #expect(expectAppCacheError { try cache.flush() }?.code == .busy)

        cache.didResume()
        try cache.flush()
        #expect(try fixture.openCache().getCachedItems(Plain.self, forKey: "a") == [Plain(value: 6)])
    }
}
