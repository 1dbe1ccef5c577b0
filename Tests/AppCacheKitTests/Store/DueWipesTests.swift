import Testing

@testable import AppCacheKit

/// ``DueWipes``: the user directories a removal took out of every read but not yet off the
/// disk. What it covers, reads must miss; a batch's wipe ends it; a removal in the root's
/// shared record ends once any process has carried it out, a removal of this process's alone
/// only with its own wipe.
@Suite struct DueWipesTests {
    static let alice = CacheLayout.userDirectoryName("alice")
    static let bob = CacheLayout.userDirectoryName("bob")
    static let carol = CacheLayout.userDirectoryName("carol")

    @Test func aRemovalCoversItsDirectoriesUntilTheyAreWiped() {
        var due = DueWipes()
        #expect(due.isEmpty && !due.covers(Self.alice))
        due.add([Self.alice, Self.bob], allUsers: false)
        #expect(!due.isEmpty && due.directories == [Self.alice, Self.bob])
        #expect(due.covers(Self.alice) && due.covers(Self.bob))
        #expect(!due.covers(Self.carol))
        #expect(!due.covers(nil), "the version directory's own files are no user's")
        due.didWipe([Self.alice], allUsers: false)
        #expect(!due.covers(Self.alice) && due.covers(Self.bob))
        due.didWipe([Self.bob], allUsers: false)
        #expect(due.isEmpty)
    }

    @Test func removingEveryUserCoversEveryUserDirectoryUntilAllAreWiped() {
        var due = DueWipes()
        due.add([Self.alice], allUsers: true)
        #expect(due.allUsers)
        #expect(due.covers(Self.alice) && due.covers(Self.carol), "a directory no user of this process had")
        #expect(!due.covers(nil))
        due.didWipe([Self.alice], allUsers: false)  // a batch that wiped some only
        #expect(due.covers(Self.carol))
        due.didWipe([Self.carol], allUsers: true)
        #expect(due.isEmpty)
    }

    @Test func aSharedRemovalEndsOnceAnyProcessCarriedItOut() {
        var due = DueWipes()
        due.add([Self.alice, Self.bob, Self.carol], allUsers: false)
        // Carol's did not fit in the shared record: this process's alone.
        due.noteShared([Self.alice, Self.bob], allUsers: false, numbers: [4, 7])
        due.didCarryOutShared(below: 5)
        #expect(!due.covers(Self.alice), "carried out: not this process's any more (newer data may be there by now)")
        #expect(due.covers(Self.bob) && due.covers(Self.carol))
        due.didCarryOutShared(below: 100)
        #expect(!due.covers(Self.bob))
        #expect(due.covers(Self.carol), "this process's own waits for its own wipe")
        #expect(due.pending == [Self.carol: UInt64?.none])
    }

    @Test func aSharedRemovalOfEveryUserEndsOnceCarriedOutAndNotANewerOne() {
        var due = DueWipes()
        due.add([Self.alice], allUsers: true)
        due.noteShared([Self.alice], allUsers: true, numbers: [3])
        due.didCarryOutShared(below: 3)
        #expect(due.allUsers, "number 3 is not carried out yet")
        due.didCarryOutShared(below: 4)
        #expect(due.isEmpty)

        // A second removal of everyone, not (yet) in the shared record: an earlier one's
        // number does not end it.
        due.add([Self.bob], allUsers: true)
        due.noteShared([Self.bob], allUsers: true, numbers: [5])
        due.add([], allUsers: true)
        due.didCarryOutShared(below: 10)
        #expect(due.allUsers && due.covers(Self.bob))
    }

    @Test func aFailedWipeIsNewsOnceUntilTheDirectoryIsWiped() {
        var due = DueWipes()
        due.add([Self.alice], allUsers: false)
        let first = due.shouldReport(Self.alice)
        let second = due.shouldReport(Self.alice)
        #expect(first && !second, "tried again by every batch, told once")
        let other = due.shouldReport(Self.bob)
        #expect(other)
        due.didWipe([Self.alice], allUsers: false)
        let afterWipe = due.shouldReport(Self.alice)
        #expect(afterWipe, "a later removal's failure is news again")
    }
}
