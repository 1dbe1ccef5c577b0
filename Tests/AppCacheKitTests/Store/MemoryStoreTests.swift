import Foundation
import Testing
import MenuModel
@testable import AppCacheKit

struct MemoryStoreTests {
    private struct OtherType {}

    private func key(_ name: String, user: Int = 0, type: Any.Type = Int.self) -> MemoryKey {
        MemoryKey(type: ObjectIdentifier(type), key: name, user: user)
    }

    /// An entry whose decoded items take `bytes` (and whose payload is empty, so it costs
    /// `bytes` dirty or clean).
    private func entry(_ name: String, bytes: Int = 10, dirty: Bool = true, user: Int = 0) -> MemoryEntry {
        MemoryEntry(
            archiveKey: ArchiveKey(user: "user\(user)", cacheName: "Things", key: name),
            path: CachePath(directory: "user-user\(user)", name: "Things+\(name).archive"),
            record: ArchiveRecord(payload: Data(), codec: 1, schemaVersion: 1, cachedDate: Date(), decodedSize: bytes),
            items: ErasedItems([Int]()), isDirty: dirty)
    }

    /// What memory holds of a collection is counted: its decoded items, and its payload only
    /// while it is dirty (until written).
    @Test func aDirtyEntryCountsItsPayloadUntilItIsWritten() {
        var memory = MemoryStore(byteLimit: 1000, entryLimit: 10)
        let record = ArchiveRecord(payload: Data(count: 40), codec: 2, schemaVersion: 1, cachedDate: Date(), decodedSize: 100)
        let dirty = MemoryEntry(
            archiveKey: ArchiveKey(user: nil, cacheName: "Things", key: "d"), path: CachePath(directory: "shared", name: "d.archive"),
            record: record, items: ErasedItems([Int]()), isDirty: true)
        #expect(dirty.cost == 140 && dirty.hasPayload)
        _ = memory.store(dirty, for: key("d"))
        #expect(memory.byteCount == 140)
        memory.didWrite(key("d"), generation: memory.peek(key("d"))!.generation, identity: FileVersion(value: 1), spilled: false)
        memory._checkInvariants()
        #expect(memory.byteCount == 100)
        #expect(memory.peek(key("d"))?.hasPayload == false)
        let clean = MemoryEntry(
            archiveKey: ArchiveKey(user: nil, cacheName: "Things", key: "c"), path: CachePath(directory: "shared", name: "c.archive"),
            record: record, items: ErasedItems([Int]()), isDirty: false)
        #expect(clean.cost == 100 && !clean.hasPayload && clean.encodedSize == 40)
    }

    /// A collection read from disk keeps no payload but knows how large it was; memory counts
    /// its decoded items only.
    @Test func aCleanEntryReadFromDiskKnowsItsPayloadSize() {
        let record = ArchiveRecord(payload: Data(), codec: 2, schemaVersion: 1, cachedDate: Date(), decodedSize: 100)
        let entry = MemoryEntry(
            archiveKey: ArchiveKey(user: nil, cacheName: "Things", key: "r"), path: CachePath(directory: "shared", name: "r.archive"),
            record: record, items: ErasedItems([Int]()), isDirty: false, encodedSize: 40)
        #expect(entry.cost == 100 && entry.encodedSize == 40 && !entry.hasPayload)
    }

    /// A read that misses looks again before going to disk, and that look may skip its hash:
    /// but a key stored since (by a write or by another read's load) is always found, and a
    /// key never stored is never found.
    @Test func aKeyMissedAndThenStoredIsFound() {
        var memory = MemoryStore(byteLimit: 1000, entryLimit: 10)
        #expect(memory.hit(key("a")) == nil && memory.peek(key("a")) == nil)
        _ = memory.storeLoaded(entry("a", dirty: false), for: key("a"), ifUnchangedSince: memory.mutations)
        #expect(memory.peek(key("a")) != nil)
        #expect(memory.hit(key("b")) == nil)
        _ = memory.store(entry("b"), for: key("b"))
        #expect(memory.peek(key("b")) != nil)
        #expect(memory.hit(key("c")) == nil)
        _ = memory.store(entry("d"), for: key("d"))
        #expect(memory.peek(key("c")) == nil && memory.peek(key("d")) != nil)
        // A load refused because memory changed during the read stores nothing.
        #expect(memory.hit(key("e")) == nil)
        _ = memory.storeLoaded(entry("e", dirty: false), for: key("e"), ifUnchangedSince: memory.mutations - 1)
        #expect(memory.peek(key("e")) == nil)
        // The same name under another user or model type is another key.
        #expect(memory.hit(key("f", user: 1)) == nil)
        _ = memory.store(entry("f"), for: key("f"))
        #expect(memory.peek(key("f")) != nil && memory.peek(key("f", user: 1)) == nil)
        #expect(memory.hit(key("g", type: OtherType.self)) == nil)
        #expect(memory.peek(key("g")) == nil)
        memory._checkInvariants()
    }

    /// An entry copied out of the cache's lock (as every read does) is a value: what the
    /// store changes afterwards in its own copy (clean, numbered, checked against a file) never
    /// shows in the copy already handed out, and the other way round.
    @Test func entriesHandedOutAreValues() {
        var memory = MemoryStore(byteLimit: 1000, entryLimit: 10)
        let record = ArchiveRecord(payload: Data(count: 40), codec: 2, schemaVersion: 1, cachedDate: Date(), decodedSize: 100)
        _ = memory.store(
            MemoryEntry(
                archiveKey: ArchiveKey(user: nil, cacheName: "Things", key: "d"), path: CachePath(directory: "shared", name: "d.archive"),
                record: record, items: ErasedItems([1, 2, 3]), isDirty: true),
            for: key("d"))
        var handedOut = memory.peek(key("d"))!
        let generation = handedOut.generation
        memory.didWrite(key("d"), generation: generation, identity: FileVersion(value: 7), spilled: false)
        #expect(handedOut.isDirty && handedOut.hasPayload && handedOut.cost == 140 && handedOut.diskIdentity == nil)
        let stored = memory.peek(key("d"))!
        #expect(!stored.isDirty && !stored.hasPayload && stored.cost == 100 && stored.diskIdentity == FileVersion(value: 7))
        handedOut.generation = generation + 100
        handedOut.diskIdentity = FileVersion(value: 8)
        #expect(memory.peek(key("d"))?.generation == generation && memory.peek(key("d"))?.diskIdentity == FileVersion(value: 7))
        #expect(memory.hit(key("d"))?.items.items(as: Int.self) == [1, 2, 3])
        memory._checkInvariants()
    }

    /// The entry packs its validation epoch and its read mark into one word, and keeps the
    /// expiry a hit sees beside the pin: each changes without disturbing the other.
    @Test func packedFactsChangeIndependently() {
        let cachedDate = Date(timeIntervalSince1970: 1_000)
        var record = ArchiveRecord(payload: Data(), codec: 1, schemaVersion: 1, cachedDate: cachedDate, decodedSize: 1)
        record.expiry = cachedDate.addingTimeInterval(60)
        var entry = MemoryEntry(
            archiveKey: ArchiveKey(user: nil, cacheName: "Things", key: "e"), path: CachePath(directory: "shared", name: "e.archive"),
            record: record, items: ErasedItems([1]), isDirty: false)
        #expect(MemoryHit(entry).expiry == record.expiry && MemoryHit(entry).expires)
        entry.epoch = MemoryEntry.epochMask
        entry.wasReadSinceRecorded = true
        #expect(entry.epoch == MemoryEntry.epochMask && entry.wasReadSinceRecorded)
        entry.epoch = 5
        #expect(entry.epoch == 5 && entry.wasReadSinceRecorded)
        entry.wasReadSinceRecorded = false
        #expect(entry.epoch == 5 && !entry.wasReadSinceRecorded)
        entry.isPinned = true
        #expect(!MemoryHit(entry).expires && entry.record.isPinned && entry.expiry == record.expiry)
        entry.isPinned = false
        #expect(MemoryHit(entry).expiry == record.expiry && !entry.record.isPinned)
    }

    @Test func entryLimitEvictsTheLeastRecentlyUsed() {
        var memory = MemoryStore(byteLimit: 1000, entryLimit: 2)
        #expect(memory.store(entry("a", dirty: false), for: key("a")).isEmpty)
        #expect(memory.store(entry("b", dirty: false), for: key("b")).isEmpty)
        _ = memory.hit(key("a"))
        #expect(memory.store(entry("c", dirty: false), for: key("c")).isEmpty)  // clean "b" is dropped
        memory._checkInvariants()
        #expect(memory.peek(key("b")) == nil)
        #expect(memory.peek(key("a")) != nil && memory.peek(key("c")) != nil)
        #expect(memory.entryCount == 2)
    }

    @Test func byteLimitEvictsUntilItFits() {
        var memory = MemoryStore(byteLimit: 100, entryLimit: 100)
        _ = memory.store(entry("a", bytes: 40, dirty: false), for: key("a"))
        _ = memory.store(entry("b", bytes: 40, dirty: false), for: key("b"))
        _ = memory.store(entry("c", bytes: 50, dirty: false), for: key("c"))
        memory._checkInvariants()
        #expect(memory.byteCount == 90)
        #expect(memory.peek(key("a")) == nil)
        // Larger than the whole limit: it cannot stay at all.
        _ = memory.store(entry("huge", bytes: 500, dirty: false), for: key("huge"))
        memory._checkInvariants()
        #expect(memory.peek(key("huge")) == nil)
    }

    @Test func dirtyEvicteesAreDetachedForSpillingAndStillAnswer() {
        var memory = MemoryStore(byteLimit: 1000, entryLimit: 1)
        _ = memory.store(entry("a"), for: key("a"))
        let spill = memory.store(entry("b"), for: key("b"))
        memory._checkInvariants()
        #expect(spill == [key("a")])
        #expect(memory.hit(key("a")) != nil, "a detached entry still answers reads")
        #expect(memory.dirtyCount == 2)
        #expect(memory.detachedEntries(spill).map(\.key) == [key("a")])

        let generation = memory.peek(key("a"))!.generation
        memory.didWrite(key("a"), generation: generation, identity: FileVersion(value: 1), spilled: true)
        memory._checkInvariants()
        #expect(memory.peek(key("a")) == nil, "once written, a detached entry leaves memory")
        #expect(memory.spills == 1)
        #expect(memory.dirtyCount == 1)
    }

    @Test func aWriteOfAnOlderGenerationLeavesANewerStoreDirty() {
        var memory = MemoryStore(byteLimit: 1000, entryLimit: 10)
        _ = memory.store(entry("a"), for: key("a"))
        let old = memory.peek(key("a"))!.generation
        _ = memory.store(entry("a", bytes: 20), for: key("a"))
        memory.didWrite(key("a"), generation: old, identity: FileVersion(value: 1), spilled: false)
        memory._checkInvariants()
        #expect(memory.peek(key("a"))?.isDirty == true)
        memory.didWrite(key("a"), generation: memory.peek(key("a"))!.generation, identity: FileVersion(value: 1), spilled: false)
        #expect(memory.peek(key("a"))?.isDirty == false)
        #expect(memory.dirtyCount == 0)
    }

    @Test func storingTheSameCollectionAgainReplacesItsEntry() {
        var memory = MemoryStore(byteLimit: 1000, entryLimit: 2)
        _ = memory.store(entry("a", bytes: 10, dirty: false), for: key("a"))
        memory.markChecked(key("a"), generation: memory.peek(key("a"))!.generation, epoch: memory.epoch, identity: FileVersion(value: 7))
        _ = memory.store(entry("b", bytes: 20, dirty: false), for: key("b"))
        let before = memory.peek(key("a"))!
        _ = memory.store(entry("a", bytes: 30), for: key("a"))  // now the most recently used, dirty
        memory._checkInvariants()
        let after = memory.peek(key("a"))!
        #expect(after.cost == 30 && after.isDirty)
        #expect(after.generation > before.generation && after.itemsGeneration == after.generation)
        #expect(after.diskIdentity == FileVersion(value: 7), "the archive on disk is still the one the old entry knew")
        #expect(memory.byteCount == 50 && memory.entryCount == 2 && memory.dirtyCount == 1)

        _ = memory.store(entry("a", bytes: 5, dirty: false), for: key("a"))  // clean again
        memory._checkInvariants()
        #expect(memory.byteCount == 25 && memory.dirtyCount == 0)
        _ = memory.store(entry("c", dirty: false), for: key("c"))
        #expect(memory.peek(key("b")) == nil, "the replaced entry counts as used last: the other one goes")
        #expect(memory.peek(key("a")) != nil)
    }

    @Test func storingReplacesADetachedEntryOfTheSameArchive() {
        var memory = MemoryStore(byteLimit: 1000, entryLimit: 1)
        _ = memory.store(entry("a"), for: key("a"))
        _ = memory.store(entry("b"), for: key("b"))  // "a" detached
        _ = memory.store(entry("a", bytes: 30), for: key("a"))  // "b" detached, old "a" replaced
        memory._checkInvariants()
        #expect(memory.peek(key("a"))?.cost == 30)
        #expect(memory.entryCount == 2)
    }

    @Test func oneArchiveHasOneEntryWhateverTheModelType() {
        var memory = MemoryStore(byteLimit: 1000, entryLimit: 10)
        _ = memory.store(entry("a"), for: key("a"))
        _ = memory.store(entry("a"), for: key("a", type: OtherType.self))
        memory._checkInvariants()
        #expect(memory.peek(key("a")) == nil)
        #expect(memory.owner(of: entry("a").archiveKey) == key("a", type: OtherType.self))
    }

    @Test func aLoadIsKeptOnlyIfNothingChangedMeanwhile() {
        var memory = MemoryStore(byteLimit: 1000, entryLimit: 10)
        let before = memory.mutations
        _ = memory.store(entry("other"), for: key("other"))
        _ = memory.storeLoaded(entry("a", dirty: false), for: key("a"), ifUnchangedSince: before)
        #expect(memory.peek(key("a")) == nil)
        _ = memory.storeLoaded(entry("a", dirty: false), for: key("a"), ifUnchangedSince: memory.mutations)
        #expect(memory.peek(key("a")) != nil)
        memory._checkInvariants()
    }

    @Test func evictingAllDetachesDirtyAndDropsClean() {
        var memory = MemoryStore(byteLimit: 1000, entryLimit: 10)
        _ = memory.store(entry("a"), for: key("a"))
        _ = memory.store(entry("b", dirty: false), for: key("b"))
        _ = memory.store(entry("c", user: 1), for: key("c", user: 1))
        let spill = memory.evictAll(user: 0)
        memory._checkInvariants()
        #expect(spill == [key("a")])
        #expect(memory.peek(key("b")) == nil)
        #expect(memory.peek(key("c", user: 1)) != nil)
        #expect(Set(memory.evictAll()) == [key("a"), key("c", user: 1)])
        memory._checkInvariants()
    }

    @Test func removalsForgetDirtyEntries() {
        var memory = MemoryStore(byteLimit: 1000, entryLimit: 1)
        _ = memory.store(entry("a"), for: key("a"))
        _ = memory.store(entry("b"), for: key("b"))
        memory.remove(entry("a").archiveKey)
        memory._checkInvariants()
        #expect(memory.peek(key("a")) == nil)
        memory.removeAll(user: 0)
        memory._checkInvariants()
        #expect(memory.entryCount == 0)
        #expect(memory.byteCount == 0)
    }

    @Test(arguments: [7 as UInt64, 8, 9])
    func randomOperationsKeepTheInvariants(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var memory = MemoryStore(byteLimit: 300, entryLimit: 6)
        for _ in 0..<3000 {
            let name = "k\(Int.random(in: 0..<12, using: &random))"
            let user = Int.random(in: 0..<2, using: &random)
            let type: Any.Type = Bool.random(using: &random) ? Int.self : OtherType.self
            switch Int.random(in: 0..<8, using: &random) {
            case 0, 1, 2:
                _ = memory.store(entry(name, bytes: Int.random(in: 1..<90, using: &random), dirty: Bool.random(using: &random), user: user), for: key(name, user: user, type: type))
            case 3:
                _ = memory.hit(key(name, user: user, type: type))
            case 4:
                for (key, entry) in memory.dirtyEntries().prefix(3) {
                    memory.didWrite(key, generation: entry.generation, identity: FileVersion(value: 1), spilled: Bool.random(using: &random))
                }
            case 5:
                memory.remove(entry(name, user: user).archiveKey)
            case 6:
                _ = memory.evict(key(name, user: user, type: type))
            default:
                if Int.random(in: 0..<10, using: &random) == 0 { _ = memory.evictAll(user: user) }
            }
            memory._checkInvariants()
        }
    }
}
