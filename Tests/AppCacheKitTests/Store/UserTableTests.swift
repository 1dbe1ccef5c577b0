import Testing

@testable import AppCacheKit

/// ``UserTable``: the current user, the number each user has in memory keys for as long as
/// the cache lives, and whether a ``CacheSession`` taken earlier still holds (no removal of its
/// user's data since), the one answer to "may this write still land?".
@Suite struct UserTableTests {
    @Test func eachUserKeepsTheirNumberAcrossSwitches() {
        var sessions = UserTable(user: "alice")
        #expect(sessions.user == "alice" && sessions.slot == 0 && sessions.switches == 0)
        sessions.switchUser(to: "bob")
        #expect(sessions.user == "bob" && sessions.slot == 1)
        sessions.switchUser(to: nil)
        #expect(sessions.user == nil && sessions.slot == 2, "the shared space has a number of its own")
        sessions.switchUser(to: "alice")
        #expect(sessions.slot == 0, "alice's number again: memory entries of hers are hers")
        #expect(sessions.slot(of: "bob") == 1 && sessions.slot(of: "carol") == nil)
        #expect(Set(sessions.knownUsers) == ["alice", "bob", nil])
        #expect(sessions.switches == 3)
        #expect(sessions.current.user == "alice")
    }

    @Test func aSessionHoldsUntilItsUsersDataIsRemoved() {
        var sessions = UserTable(user: "alice")
        let alice = sessions.current
        sessions.switchUser(to: "bob")
        let bob = sessions.current
        sessions.switchUser(to: "alice")
        #expect(sessions.holds(alice) && sessions.holds(bob), "switching removes nothing")

        sessions.didRemoveData(of: "alice")
        #expect(!sessions.holds(alice), "a write begun for alice before her logout does not land")
        #expect(sessions.holds(bob), "bob's data was not removed")
        let aliceAfter = sessions.current
        #expect(aliceAfter != alice && sessions.holds(aliceAfter), "a session taken after the removal holds")
        sessions.didRemoveData(of: "alice")
        #expect(!sessions.holds(aliceAfter), "every removal counts")

        // A user removed while another is current.
        sessions.didRemoveData(of: "bob")
        #expect(!sessions.holds(bob))
        #expect(sessions.slot(of: "bob") == 1, "the number stays: memory keys never mix users")
    }

    @Test func removingEveryUsersDataEndsEverySessionTakenBefore() {
        var sessions = UserTable(user: nil)
        let shared = sessions.current
        sessions.switchUser(to: "alice")
        let alice = sessions.current
        sessions.didRemoveDataOfAllUsers()
        #expect(!sessions.holds(shared) && !sessions.holds(alice))
        #expect(sessions.holds(sessions.current))
        sessions.switchUser(to: "carol")
        #expect(sessions.holds(sessions.current), "a user first seen after it")
    }
}
