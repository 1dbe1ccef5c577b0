import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

/// Collections whose every item names the writer and round that cached it, so that a
/// collection mixing two writes, or cut short, is recognised.
private enum Batch {
    static func make(writer: Int, round: Int, count: Int) -> [Note] {
        (0..<count).map { Note.make(round * 100 + $0, writer: "\(writer)-\(round)") }
    }

    /// Whether `notes` is exactly one batch, `count(writer)` long.
    static func isOneWrite(_ notes: [Note], count: (Int) -> Int) -> Bool {
        guard let writer = notes.first?.author.name else { return false }
        let parts = writer.split(separator: "-")
        guard parts.count == 2, let number = Int(parts[0]), let round = Int(parts[1]) else { return false }
        return notes == make(writer: number, round: round, count: count(number))
    }
}

/// Many tasks at once: no crash, no torn collection, the last write wins.
struct ConcurrencyTests {
    private static func batch(writer: Int, round: Int) -> [Note] {
        Batch.make(writer: writer, round: round, count: 10 + writer)
    }

    private static func isOneWrite(_ notes: [Note]) -> Bool {
        notes.isEmpty || Batch.isOneWrite(notes) { writer in 10 + writer }
    }

    // Looks at archive files: each collection a file of its own.
    @Test func readersOnlyEverSeeCompleteWrites() async throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache()
        let keys = ["shared", "a", "b"]
        let torn = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<6 {
                group.addTask {
                    for round in 0..<15 {
                        try? cache.cacheItems(Self.batch(writer: writer, round: round), forKey: keys[(writer + round) % keys.count])
                    }
                }
            }
            for _ in 0..<6 {
                group.addTask {
                    for round in 0..<40 {
                        let read = (try? cache.getCachedItems(Note.self, forKey: keys[round % keys.count])) ?? nil
                        if let read, !Self.isOneWrite(read) { torn.withLock { $0 += 1 } }
                    }
                }
            }
            group.addTask {
                for round in 0..<20 {
                    if round.isMultiple(of: 2) { _ = cache.isStale(Note.self, forKey: "a") }
                    else { _ = cache.cachedDate(Note.self, forKey: "b") }
                }
            }
        }
        #expect(torn.withLock { $0 } == 0)
        #expect(fixture.diagnostics.errors.isEmpty, "\(fixture.diagnostics.errors)")
        // No temporary file survives.
        #expect(fixture.allFiles().allSatisfy { $0.hasSuffix(".archive") })
        for key in keys {
            let read = try #require(try cache.getCachedItems(Note.self, forKey: key))
            #expect(Self.isOneWrite(read))
        }
        // After the storm, a write is the one read back.
        try cache.cacheItems(Self.batch(writer: 9, round: 99), forKey: "shared")
        #expect(try cache.getCachedItems(Note.self, forKey: "shared") == Self.batch(writer: 9, round: 99))
    }

    @Test func theLastOfSequentialWritesFromManyTasksWins() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache()
        for round in 0..<5 {
            await withTaskGroup(of: Void.self) { group in
                for writer in 0..<4 {
                    group.addTask { try? cache.cacheItems(Self.batch(writer: writer, round: round), forKey: "k\(writer)") }
                }
            }
            for writer in 0..<4 {
                #expect(try cache.getCachedItems(Note.self, forKey: "k\(writer)") == Self.batch(writer: writer, round: round))
            }
        }
    }

    // Looks at archive files: each collection a file of its own.
    @Test func switchingUsersWhileOthersWorkNeverMixesUsers() async throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache(user: nil)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for round in 0..<50 { try? cache.switchUser(to: round.isMultiple(of: 2) ? "alice" : "bob") }
            }
            for writer in 0..<3 {
                group.addTask {
                    for round in 0..<10 { try? cache.cacheItems(Self.batch(writer: writer, round: round)) }
                }
            }
        }
        // Whichever user each write landed with, every archive names the user of its directory.
        for file in fixture.allFiles() {
            let bytes = try Data(contentsOf: fixture.root.appending(path: file))
            let header = try bytes.withUnsafeBytes { try ArchiveHeader.parse($0) }.header
            #expect(file.hasPrefix("version-1/" + CacheLayout.userDirectoryName(header.user) + "/"))
        }
    }
}

/// The memory layer under load: reads, writes, flushes, spills and memory warnings at once.
struct MemoryConcurrencyTests {
    private static func batch(writer: Int, round: Int) -> [Note] {
        Batch.make(writer: writer, round: round, count: 3 + writer % 4)
    }

    private static func isOneWrite(_ notes: [Note]) -> Bool {
        Batch.isOneWrite(notes) { writer in 3 + writer % 4 }
    }

    /// Every key is written before the storm, and a small memory keeps entries spilling; a
    /// reader must find every key every time, in memory or on disk, mid-spill or not.
    @Test func readersNeverMissAnEntryOnItsWayToDisk() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(entries: 3, writeBackDelay: nil))
        let keys = (0..<12).map { "k\($0)" }
        for (index, key) in keys.enumerated() {
            try cache.cacheItems(Self.batch(writer: index, round: 0), forKey: key)
        }
        let misses = Locked(0)
        let torn = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<3 {
                group.addTask {
                    for round in 1...40 {
                        try? cache.cacheItems(Self.batch(writer: writer, round: round), forKey: keys[(writer * 5 + round) % keys.count])
                    }
                }
            }
            for reader in 0..<4 {
                group.addTask {
                    for round in 0..<120 {
                        switch try? cache.getCachedItems(Note.self, forKey: keys[(reader + round) % keys.count]) {
                        case .some(let notes): if !Self.isOneWrite(notes) { torn.withLock { $0 += 1 } }
                        case .none: misses.withLock { $0 += 1 }
                        }
                    }
                }
            }
            group.addTask {
                for round in 0..<10 {
                    if round.isMultiple(of: 3) { cache.didReceiveMemoryWarning() } else { try? cache.flush() }
                }
            }
        }
        #expect(misses.withLock { $0 } == 0)
        #expect(torn.withLock { $0 } == 0)
        #expect(fixture.diagnostics.errors.isEmpty, "\(fixture.diagnostics.errors)")
        cache.store.state.withLock { $0.memory._checkInvariants() }
    }

    // Looks at archive files: each collection a file of its own.
    /// After any mix of operations and a final flush, memory and disk agree, and the last
    /// write of each key is what both hold.
    @Test func afterTheStormAFlushLeavesDiskEqualToMemory() async throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache(memory: .layer(bytes: 6_000, entries: 5, writeBackDelay: .milliseconds(2)))
        let keys = (0..<8).map { "k\($0)" }
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    for round in 0..<30 {
                        try? cache.cacheItems(Self.batch(writer: writer, round: round), forKey: keys[(writer + round) % keys.count])
                        if round.isMultiple(of: 7) { _ = try? cache.getCachedItems(Note.self, forKey: keys[round % keys.count]) }
                    }
                }
            }
            group.addTask {
                for round in 0..<15 {
                    switch round % 3 {
                    case 0: cache.didReceiveMemoryWarning()
                    case 1: try? cache.flush()
                    default: _ = cache.memoryStatistics
                    }
                }
            }
        }
        // Sequential last writes: these must win in memory and on disk.
        for (index, key) in keys.enumerated() {
            try cache.cacheItems(Self.batch(writer: 9, round: 100 + index), forKey: key)
        }
        try cache.flush()
        cache.store.state.withLock { $0.memory._checkInvariants() }
        #expect(cache.memoryStatistics.dirtyEntries == 0)
        let fresh = try fixture.openCache()
        for (index, key) in keys.enumerated() {
            #expect(try cache.getCachedItems(Note.self, forKey: key) == Self.batch(writer: 9, round: 100 + index))
            #expect(try fresh.getCachedItems(Note.self, forKey: key) == Self.batch(writer: 9, round: 100 + index))
        }
        #expect(fixture.diagnostics.errors.isEmpty, "\(fixture.diagnostics.errors)")
        #expect(fixture.allFiles().allSatisfy { $0.hasSuffix(".archive") }, "no temporary file survives")
    }

    @Test func concurrentWritesToOneKeyEndWithOneOfThemEverywhere() async throws {
        let fixture = try Fixture()
        let cache = try fixture.openCache(memory: .layer(entries: 2, writeBackDelay: nil))
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<6 {
                group.addTask {
                    for round in 0..<20 {
                        try? cache.cacheItems(Self.batch(writer: writer, round: round), forKey: "same")
                        if round.isMultiple(of: 5) { try? cache.flush() }
                    }
                }
            }
        }
        try cache.flush()
        let inMemory = try #require(try cache.getCachedItems(Note.self, forKey: "same"))
        #expect(Self.isOneWrite(inMemory))
        #expect(try fixture.openCache().getCachedItems(Note.self, forKey: "same") == inMemory)
    }
}
