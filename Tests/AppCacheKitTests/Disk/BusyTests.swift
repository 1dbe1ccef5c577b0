import Foundation
import Testing

@testable import AppCacheKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A peer that holds the root's lock file and does not let go (suspended, stopped, hung):
/// writes wait a bounded time and fail with `busy`, reads answer at once, nothing is lost.
@Suite struct BusyTests {
    /// Holds the lock file of `fixture`'s version directory as another process would.
    final class Peer {
        let descriptor: Int32

        init(_ fixture: Fixture) throws {
            descriptor = open(fixture.layout().absolutePath(CachePath(directory: nil, name: ProcessCoordinator.fileName)), O_RDWR)
            guard descriptor >= 0, flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { throw CocoaError(.fileLocking) }
        }

        func letGo() {
            flock(descriptor, LOCK_UN)
            close(descriptor)
        }
    }

    @Test func aWriteThroughThrowsBusyAndReadsAnswer() throws {
        let fixture = try Fixture()
        var configuration = fixture.configuration()  // write-through
        configuration.lockTimeout = .milliseconds(50)
        let cache = try AppCache(configuration: configuration)
        try cache.cacheItems([Plain(value: 1)], forKey: "a")
        let peer = try Peer(fixture)

        let error = expectAppCacheError { try cache.cacheItems([Plain(value: 2)], forKey: "a") }
        #expect(error?.code == .busy)
        #expect(error?.path?.hasSuffix("/.lock") == true, "the error names the lock file")
        #expect(try cache.getCachedItems(Plain.self, forKey: "a") == [Plain(value: 1)], "reads do not wait, and see what was there")

        peer.letGo()
        try cache.cacheItems([Plain(value: 2)], forKey: "a")
        #expect(try fixture.openCache().getCachedItems(Plain.self, forKey: "a") == [Plain(value: 2)])
    }

    @Test func aWriteBackStaysInMemoryUntilTheLockIsFree() throws {
        let fixture = try Fixture()
        var configuration = fixture.configuration(memory: .layer(writeBackDelay: nil))
        configuration.lockTimeout = .milliseconds(50)
        let cache = try AppCache(configuration: configuration)
        let peer = try Peer(fixture)
        try cache.cacheItems([Plain(value: 3)], forKey: "b")

        #expect(expectAppCacheError { try cache.flush() }?.code == .busy)
        #expect(cache.memoryStatistics.dirtyEntries == 1)
        #expect(try cache.getCachedItems(Plain.self, forKey: "b") == [Plain(value: 3)])

        peer.letGo()
        try cache.flush()
        #expect(cache.memoryStatistics.dirtyEntries == 0)
        #expect(try fixture.openCache().getCachedItems(Plain.self, forKey: "b") == [Plain(value: 3)])
    }

    @Test func aNegativeLockTimeoutIsRefused() throws {
        let fixture = try Fixture()
        var configuration = fixture.configuration()
        configuration.lockTimeout = .milliseconds(-1)
        #expect(expectAppCacheError { _ = try AppCache(configuration: configuration) }?.code == .invalidConfiguration)
    }
}
