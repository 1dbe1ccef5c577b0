import Foundation
import MenuModel
import Testing

@testable import AppCacheKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A removal hides the data from every reader before the call returns: other instances, other
/// processes and a relaunch see nothing of the removed collections, even while the directory is
/// still on disk (the write-back thread moves it later, or, the remover killed, the next
/// process's first batch does).
struct RemovalVisibilityTests {
    /// Holds the root's lock file's `flock`, as another process in a long batch would: no
    /// batch of any cache can move a directory off the disk meanwhile.
    final class LockHolder {
        let descriptor: Int32

        init(_ fixture: Fixture) {
            descriptor = open(fixture.layout().versionPath + "/" + ProcessCoordinator.fileName, O_RDWR)
            precondition(descriptor >= 0 && flock(descriptor, LOCK_EX) == 0)
        }

        func release() {
            flock(descriptor, LOCK_UN)
            close(descriptor)
        }
    }

    enum Removal: String, CaseIterable, Sendable {
        case removeUser, removeAllUsers, removeAll, signOut

        func run(on cache: AppCache) throws {
            switch self {
            case .removeUser: try cache.removeUser("alice")
            case .removeAllUsers: try cache.removeAllUsers()
            case .removeAll: try cache.removeAll()
            case .signOut: try cache.signOut(removingData: true)
            }
        }
    }

    @Test(arguments: Removal.allCases)
    func noOtherInstanceReadsARemovedUsersCollectionsOnceTheCallReturns(_ removal: Removal) throws {
        let fixture = try Fixture()
        var configuration = fixture.configuration(memory: .layer(writeBackDelay: .seconds(60)))
        configuration.lockTimeout = .milliseconds(50)
        let remover = try AppCache(configuration: configuration)
        for key in 0..<12 { try remover.cacheItems(MenuItem.sampleMenu(count: 2, seed: key), forKey: "k\(key)") }
        try remover.flush()
        // Another instance holds them in memory, clean.
        let other = try AppCache(configuration: configuration)
        for key in 0..<12 { #expect(try other.getCachedItems(MenuItem.self, forKey: "k\(key)") != nil) }

        let holder = LockHolder(fixture)
        try removal.run(on: remover)
        let fresh = try AppCache(configuration: configuration)
        for key in 0..<12 {
            #expect(try other.getCachedItems(MenuItem.self, forKey: "k\(key)") == nil, "\(removal): k\(key) read by another instance")
            #expect(try fresh.getCachedItems(MenuItem.self, forKey: "k\(key)") == nil, "\(removal): k\(key) read by a new instance")
        }
        #expect(FileManager.default.fileExists(atPath: fixture.layout().userPath("alice")), "still on disk: the lock is held")
        #expect(try fresh.entries().isEmpty)
        holder.release()
        // The next batch of any instance moves the directory off the disk.
        try fresh.flush()
        #expect(!FileManager.default.fileExists(atPath: fixture.layout().userPath("alice")))
        // Written again, alice's data stays: the removal is not carried out twice.
        let again = try AppCache(configuration: fixture.configuration(memory: .diskOnly))
        try again.cacheItems([Plain(value: 7)], forKey: "new")
        try remover.flush()
        try other.flush()
        #expect(try AppCache(configuration: fixture.configuration()).getCachedItems(Plain.self, forKey: "new") == [Plain(value: 7)])
    }

    /// An instance holding a removed user's collections dirty (written after its last flush)
    /// drops them when it learns of another's removal: written back, they would bring the
    /// removed data back.
    @Test func dirtyCollectionsOfAUserRemovedElsewhereAreNotWrittenBack() throws {
        let fixture = try Fixture()
        let configuration = fixture.configuration(memory: .layer(writeBackDelay: .seconds(60)))
        let writer = try AppCache(configuration: configuration)
        try writer.cacheItems([Plain(value: 1)], forKey: "dirty")
        let remover = try AppCache(configuration: fixture.configuration())
        try remover.removeUser("alice")
        try writer.flush()
        #expect(try AppCache(configuration: fixture.configuration()).getCachedItems(Plain.self, forKey: "dirty") == nil)
    }

    /// More removals pending at once than the shared record holds: the one past it waits for
    /// the lock and carries out every pending removal, its own too, before it returns.
    @Test func aRemovalPastTheSharedRecordIsCarriedOutAtOnce() throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        let users = (0...PendingRemovals.capacity).map { "user\($0)" }
        for user in users {
            try cache.switchUser(to: user)
            try cache.cacheItems([Plain(value: 1)])
        }
        let holder = LockHolder(fixture)
        for user in users.dropLast() { try cache.removeUser(user) }
        for user in users.dropLast() {
            #expect(FileManager.default.fileExists(atPath: fixture.layout().userPath(user)), "pending: the lock is held")
        }
        holder.release()
        try cache.removeUser(users.last!)
        for user in users {
            #expect(!FileManager.default.fileExists(atPath: fixture.layout().userPath(user)), "\(user) is off the disk")
            #expect(try AppCache(configuration: fixture.configuration(user: user)).getCachedItems(Plain.self) == nil, "\(user)")
        }
    }
}
