import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

/// Any public call may be made from inside a hook or closure the cache calls, and nothing
/// waits for itself.
struct ReentrancyTests {
    /// Runs `body` on a thread of its own and says whether it finished within `seconds`: a
    /// deadlock fails the test instead of hanging the suite.
    private func finishes(within seconds: Double = 30, _ body: @escaping @Sendable () -> Void) async -> Bool {
        // On a thread of its own: a deadlock never finishes, and the test waits without holding
        // one of the cooperative pool's threads (sanitized runs wait four times as long).
        let done = Locked(false)
        Thread.detachNewThread {
            body()
            done.withLock { $0 = true }
        }
        return await eventually(within: seconds) { done.withLock { $0 } }
    }

    // Looks at archive files: each collection a file of its own.
    @Test func aDiagnosticsHookFoundMidWriteMayCallEveryAPI() async throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cacheBox = Locked<AppCache?>(nil)
        let calls = Locked<[String]>([])
        var configuration = fixture.configuration(memory: .layer())
        configuration.diagnostics = { problem in
            guard let cache = cacheBox.withLock({ $0 }) else { return }
            calls.withLock { $0.append(problem.code.description) }
            try? cache.flush()
            _ = try? cache.bytesOnDisk()
            try? cache.removeItems(MenuItem.self, forKey: "other")
            cache.didReceiveMemoryWarning()
            _ = try? cache.entries()
        }
        let cache = try AppCache(configuration: configuration)
        cacheBox.withLock { $0 = cache }
        // A directory planted where the archive goes: found, and removed, in the middle of the
        // write, while the disk locks are held.
        let archive = fixture.archivePath(MenuItem.self)
        try FileManager.default.createDirectory(atPath: archive, withIntermediateDirectories: true)
        try cache.cacheItems(MenuItem.sampleMenu(count: 3))

        #expect(await finishes { try? cache.flush() })
        #expect(calls.withLock { $0 }.contains("corruptArchive"))
        #expect(try fixture.openCache().getCachedItems(MenuItem.self) == MenuItem.sampleMenu(count: 3))
        cacheBox.withLock { $0 = nil }
    }

    @Test func aNestedUpdateOfTheSameCollectionThrowsAndTheOuterOneStands() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        try cache.cacheItems([Note.make(1)])
        let inner = Locked<AppCacheError?>(nil)

        #expect(await finishes {
            _ = try? cache.updateItems(Note.self) { notes in
                inner.withLock { $0 = expectAppCacheError { try cache.updateItems(Note.self) { $0.removeAll() } } }
                notes.append(Note.make(2))
            }
        })
        #expect(inner.withLock { $0?.code } == .nestedUpdate)
        #expect(try cache.getCachedItems(Note.self) == [Note.make(1), Note.make(2)])
    }

    @Test func aNestedUpdateOfAnotherCollectionWorks() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        #expect(await finishes {
            _ = try? cache.updateItems(Note.self, forKey: "a") { notes in
                _ = try? cache.updateItems(Note.self, forKey: "b") { $0.append(Note.make(20)) }
                _ = try? cache.getCachedItems(Note.self, forKey: "b")
                notes.append(Note.make(10))
            }
        })
        #expect(try cache.getCachedItems(Note.self, forKey: "a") == [Note.make(10)])
        #expect(try cache.getCachedItems(Note.self, forKey: "b") == [Note.make(20)])
    }

    /// How many nested updates each thread makes: fewer under the sanitizers, where the two
    /// threads' contention (each retry backs off) makes every one many times slower.
    static let nestedSteps = sanitizerSlowdown > 1 ? 15 : 50

    @Test func updatesNestingInOppositeOrdersOnTwoThreadsBothFinish() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        // Every update must land: an error is recorded, not dropped, so that one shows as such.
        let errors = Locked<[String]>([])
        // (Counting only once both finished: workers still running would make a short count.)
        try #require(await finishes {
            DispatchQueue.concurrentPerform(iterations: 2) { worker in
                let (outer, inner) = worker == 0 ? ("x", "y") : ("y", "x")
                for step in 0..<Self.nestedSteps {
                    do {
                        _ = try cache.updateItems(Note.self, forKey: outer) { notes in
                            do {
                                _ = try cache.updateItems(Note.self, forKey: inner) { $0.append(Note.make(1000 * worker + step)) }
                            } catch {
                                errors.withLock { $0.append("inner: \(error)") }
                            }
                            notes.append(Note.make(2000 + 1000 * worker + step))
                        }
                    } catch {
                        errors.withLock { $0.append("outer: \(error)") }
                    }
                }
            }
        })
        #expect(errors.withLock { $0 } == [])
        let all = try (cache.getCachedItems(Note.self, forKey: "x") ?? []) + (cache.getCachedItems(Note.self, forKey: "y") ?? [])
        #expect(Set(all.map(\.id)).count == 4 * Self.nestedSteps)
    }

    @Test func aLocalEditKeepsTheCachedDateValidatorsPinAndExpiry() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer())
        let cachedAt = fixture.clock.now
        try cache.store.save(
            [Note.make(1)], forKey: "feed", expiresAfter: .seconds(30 * 86_400), pinned: true,
            validators: CacheValidators(etag: "\"v1\""), session: nil)
        fixture.clock.advance(by: .seconds(2 * 86_400))
        #expect(cache.isStale(Note.self, forKey: "feed"))

        try cache.updateItems(Note.self, forKey: "feed") { $0.append(Note.make(2)) }

        #expect(cache.isStale(Note.self, forKey: "feed"))
        #expect(cache.cachedDate(Note.self, forKey: "feed") == cachedAt)
        let read = try #require(try cache.queries.readForLoad(Note.self, key: "feed", switches: cache.store.state.withLock { $0.sessions.switches }))
        #expect(read.stored.validators?.etag == "\"v1\"")
        #expect(read.stored.isPinned)
        #expect(read.stored.expiry == cachedAt.addingTimeInterval(30 * 86_400))
        #expect(read.loaded.items == [Note.make(1), Note.make(2)])
        // Written as such, too.
        try cache.flush()
        let entry = try #require(try fixture.openCache().entries().first { $0.key == "feed" })
        #expect(entry.cachedDate == cachedAt)
    }

    @Test func anUpdateOfNothingIsDatedNow() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        fixture.clock.advance(by: .seconds(10))
        try cache.updateItems(Note.self) { $0.append(Note.make(1)) }
        #expect(cache.cachedDate(Note.self) == fixture.clock.now)
    }
}
