import Foundation
import Testing

@testable import AppCacheKit

/// The in-memory configuration: every rule of the disk holds, in a store of its own that no file
/// backs, shared by the caches opened with it and freed after the last of them.
@Suite struct InMemoryConfigurationTests {
    typealias Like = ItemMutationTests.Like

    @Test func whatOneCacheWroteTheNextReadsAfterARelaunch() throws {
        var configuration = AppCache.Configuration.inMemory(user: "alice")
        let problems = DiagnosticsRecorder()
        configuration.diagnostics = { problems.record($0) }
        #expect(configuration.isInMemory)
        do {
            let cache = try AppCache(configuration: configuration)
            try cache.cacheItems([Post(id: 1), Post(id: 2)], forKey: "top")
            try cache.cacheItems(Array(repeating: Post(id: 3, title: String(repeating: "long ", count: 2000)), count: 20), forKey: "large")
            try cache.flush()
        }
        let relaunched = try AppCache(configuration: configuration)
        #expect(try relaunched.getCachedItems(Post.self, forKey: "top")?.map(\.id) == [1, 2])
        #expect(try relaunched.getCachedItems(Post.self, forKey: "large")?.count == 20, "a large collection: a file of its own")
        #expect(try relaunched.bytesOnDisk() > 20 * 10_000, "what the store holds counts as on disk")
        #expect(!FileManager.default.fileExists(atPath: configuration.rootDirectory.path(percentEncoded: false)))
        #expect(problems.errors.isEmpty, "\(problems.errors)")

        // Another in-memory configuration is another, empty, store.
        let other = try AppCache(configuration: .inMemory(user: "alice"))
        #expect(try other.getCachedItems(Post.self, forKey: "top") == nil)
    }

    @Test func collectionsAgeWithTheClock() throws {
        let clock = CacheClock()
        let cache = try AppCache(configuration: .inMemory(clock: clock))
        try cache.cacheItems([Post(id: 1)], forKey: "top")
        #expect(!cache.isStale(Post.self, forKey: "top"))
        clock.advance(by: .seconds(2 * 86_400))
        #expect(cache.isStale(Post.self, forKey: "top"))
        #expect(cache.cachedDate(Post.self, forKey: "top") == clock.now - 2 * 86_400)
    }

    @Test func queuedChangesOutliveARelaunch() async throws {
        let configuration = AppCache.Configuration.inMemory(user: "alice")
        let id: UUID
        do {
            let cache = try AppCache(configuration: configuration)
            try cache.cacheItems([Post(id: 1)], forKey: "top")
            cache.registerMutationKind(Like.self)
            id = try cache.enqueue(Like(postID: 1, isLiked: true))
        }
        let relaunched = try AppCache(configuration: configuration)
        relaunched.registerMutationKind(Like.self)
        #expect(relaunched.pendingMutations.map(\.id) == [id])
        #expect(try relaunched.getCachedItems(Post.self, forKey: "top")?.first?.isLiked == true, "the pending change shows")
        let sent = Locked<[Bool]>([])
        relaunched.registerSender(for: Like.self) { change, _ in sent.withLock { $0.append(change.isLiked) } }
        #expect(await eventually { relaunched.pendingMutations.isEmpty })
        #expect(sent.withLock { $0 } == [true])
    }

    @Test func twoCachesOnOneStoreSeeEachOthersWrites() async throws {
        var configuration = AppCache.Configuration.inMemory(user: "alice")
        // Two caches that share no memory, as two processes on one root.
        configuration.sharesServices = false
        let writer = try AppCache(configuration: configuration)
        let reader = try AppCache(configuration: configuration)
        #expect(try reader.getCachedItems(Post.self, forKey: "top") == nil)
        let seen = StreamRecorder(reader.watch(Post.self, forKey: "top") { _ in .items([]) })
        try writer.cacheItems([Post(id: 7)], forKey: "top")
        #expect(await eventually { seen.seen.contains { $0.items.map(\.id) == [7] } }, "the change watcher wakes the other cache")
        try writer.removeItems(Post.self, forKey: "top")
        #expect(try reader.getCachedItems(Post.self, forKey: "top") == nil, "a removal reaches the other cache at once")
    }

    @Test func aNewSchemaVersionWipesTheOldOne() throws {
        let version1 = AppCache.Configuration.inMemory(schemaVersion: "1", user: "alice")
        try AppCache(configuration: version1).cacheItems([Post(id: 1)], forKey: "top")
        var version2 = version1
        version2.schemaVersion = "2"
        let upgraded = try AppCache(configuration: version2)
        #expect(try upgraded.getCachedItems(Post.self, forKey: "top") == nil)
        try upgraded.cacheItems([Post(id: 2)], forKey: "top")
        #expect(try upgraded.listedNames() == ["version-2"], "the old version's directory is gone, its trash too")
    }

    @Test func usersSwitchAndGo() throws {
        let cache = try AppCache(configuration: .inMemory(user: "alice"))
        try cache.cacheItems([Post(id: 1)], forKey: "top")
        try cache.switchUser(to: "bob")
        #expect(try cache.getCachedItems(Post.self, forKey: "top") == nil)
        try cache.cacheItems([Post(id: 2)], forKey: "top")
        try cache.removeUser("alice")
        try cache.switchUser(to: "alice")
        #expect(try cache.getCachedItems(Post.self, forKey: "top") == nil, "alice's data went with her")
        try cache.switchUser(to: "bob")
        #expect(try cache.getCachedItems(Post.self, forKey: "top")?.map(\.id) == [2])
    }

    @Test func theStoreIsFreedAfterItsLastHolder() throws {
        weak var volume: MemoryVolume?
        var rootPath = ""
        do {
            let configuration = AppCache.Configuration.inMemory()
            volume = configuration.memoryVolume
            rootPath = try #require(volume).rootPath
            let cache = try AppCache(configuration: configuration)
            try cache.cacheItems([Post(id: 1)], forKey: "top")
            var info = stat()
            #expect(SystemCalls.statPath(rootPath, &info) == 0)
        }
        #expect(volume == nil)
        var info = stat()
        #expect(SystemCalls.statPath(rootPath, &info) == -1 && errno == ENOENT)
    }

    @Test func changingTheRootMakesItAConfigurationOnDisk() throws {
        let directory = try TemporaryDirectory(prefix: "InMemoryConfigurationTests")
        var configuration = AppCache.Configuration.inMemory()
        configuration.rootDirectory = directory.url
        #expect(!configuration.isInMemory)
        try AppCache(configuration: configuration).cacheItems([Post(id: 1)], forKey: "top")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/version-1"))
    }

    @Test func previewsKeepNothingOnDisk() throws {
        let cache = try AppCache.preview { try $0.cacheItems([Post(id: 1)], forKey: "top") }
        #expect(cache.configuration.isInMemory)
        #expect(try cache.getCachedItems(Post.self, forKey: "top")?.map(\.id) == [1])
    }
}

extension AppCache {
    /// The names in the in-memory root.
    fileprivate func listedNames() throws -> [String] {
        try store.disk.store.fileSystem.contentsOfRoot().sorted()
    }
}
