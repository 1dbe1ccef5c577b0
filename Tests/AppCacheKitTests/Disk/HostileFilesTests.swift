import Foundation
import MenuModel
import Testing
@testable import AppCacheKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files planted inside the cache root: the cache never touches anything outside it, never
/// blocks, never allocates for a file's claimed size, and never traps on a number it read.
struct HostileFilesTests {
    /// A directory outside the cache root with a file whose bytes and date must never change.
    private struct Outside {
        let directory: TemporaryDirectory
        let sentinel: String
        let contents = Data("outside the root: never touched".utf8)
        let date = Date(timeIntervalSince1970: 1_600_000_000)

        init() throws {
            directory = try TemporaryDirectory()
            sentinel = directory.path + "/sentinel"
            try contents.write(to: URL(filePath: sentinel))
            try setModificationDate(date, ofFileAt: sentinel)
        }

        func expectUntouched(sourceLocation: SourceLocation = #_sourceLocation) throws {
            #expect(try Data(contentsOf: URL(filePath: sentinel)) == contents, sourceLocation: sourceLocation)
            let modified = try FileManager.default.attributesOfItem(atPath: sentinel)[.modificationDate] as? Date
            #expect(modified == date, sourceLocation: sourceLocation)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["sentinel"], sourceLocation: sourceLocation)
        }
    }

    private func isSymbolicLink(_ path: String) -> Bool {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) != nil
    }

    /// Runs `body` on another thread and fails (instead of hanging the suite) if it does not
    /// return within `seconds`.
    private func expectReturns(within seconds: Double = 20, _ what: String, _ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        // The thread lets go of `body` (and the cache it holds) before it signals: the cache
        // is closed on this thread, before the fixture's directory goes.
        let work = Locked<(@Sendable () -> Void)?>(body)
        Thread.detachNewThread {
            work.withLock { $0.moveOut() }?()
            done.signal()
        }
        #expect(done.wait(timeout: .now() + seconds) == .success, "\(what) blocked")
    }

    private func budgeted(_ fixture: Fixture, limit: Int = 1 << 20) throws -> AppCache {
        var configuration = fixture.configuration()
        configuration.diskByteLimit = limit
        return try AppCache(configuration: configuration)
    }

    private func writeJournal(_ fixture: Fixture, _ bodies: [String]) throws {
        let text = ([DiskIndex.Record.begin].map(IndexJournal.line) + bodies.map { body in
            let checksum = String(CRC32.checksum(Array(body.utf8)), radix: 16)
            return String(repeating: "0", count: 8 - checksum.count) + checksum + " " + body + "\n"
        }).joined()
        try Data(text.utf8).write(to: URL(filePath: fixture.journalPath))
    }

    // MARK: - 1. Nothing outside the root

    // Plants a journal line naming archive files: each collection a file of its own.
    @Test(arguments: ["S 44 0 ../../sentinel", "S 44 0 user-alice/../../../sentinel", "D ../sentinel", "X ../", "I .tmp-x ../sentinel"])
    func aCraftedJournalLineNeverReachesOutside(_ line: String) throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let outside = try Outside()
        let relative = "../" + String(repeating: "../", count: 3) + outside.sentinel.dropFirst()
        try fixture.openCache().cacheItems([Plain(value: 1)])
        try writeJournal(fixture, [line.replacingOccurrences(of: "../sentinel", with: relative)])
        let cache = try budgeted(fixture, limit: 1)  // every write evicts
        // The index loads (and reports) in the background: let it, rather than race it for the
        // lock (a slow run, under the sanitizers, would answer `busy`).
        cache.store.waitForBackgroundWork()
        try cache.cacheItems(MenuItem.sampleMenu(count: 5))
        #expect(try cache.bytesOnDisk() <= 1)
        cache.store.waitForBackgroundWork()
        try outside.expectUntouched()
        #expect(fixture.diagnostics.errors.contains { $0.message.contains("journal is damaged") })
    }

    @Test func aSymlinkAtTheJournalIsRemovedNeverAppendedThrough() throws {
        let fixture = try Fixture()
        let outside = try Outside()
        let cache = try fixture.openCache()
        try cache.cacheItems([Plain(value: 1)])
        try FileManager.default.removeItem(atPath: fixture.journalPath)
        try FileManager.default.createSymbolicLink(atPath: fixture.journalPath, withDestinationPath: outside.sentinel)
        try cache.cacheItems([Plain(value: 2)], forKey: "b")
        try outside.expectUntouched()
        #expect(!isSymbolicLink(fixture.journalPath))
        #expect(fixture.diagnostics.errors.contains { $0.message.contains("symbolic link") })
        #expect(try cache.bytesOnDisk() == (try fixture.measuredUsage()))
    }

    @Test func aSymlinkedUserDirectoryIsNeverWrittenThrough() throws {
        let fixture = try Fixture()
        let outside = try Outside()
        let cache = try fixture.openCache()
        try FileManager.default.createSymbolicLink(atPath: fixture.layout().userPath("alice"), withDestinationPath: outside.directory.path)
        #expect(try cache.getCachedItems(Plain.self) == nil)
        try cache.cacheItems([Plain(value: 1)])
        try outside.expectUntouched()
        #expect(!isSymbolicLink(fixture.layout().userPath("alice")))
        #expect(try fixture.openCache().getCachedItems(Plain.self) == [Plain(value: 1)])
    }

    /// A fresh instance opens the user's pack in one call that follows no link: a user
    /// directory linked to a directory outside the root holding a valid pack of the very same
    /// collection is a miss, never that collection, and the link goes; the pack stays as it was.
    @Test func aLinkedUserDirectoryHoldingAValidPackIsAMiss() throws {
        let fixture = try Fixture()
        try fixture.openCache().cacheItems([Plain(value: 1)])
        #expect(try fixture.openCache().getCachedItems(Plain.self) == [Plain(value: 1)], "the pack reads where it belongs")
        let elsewhere = try TemporaryDirectory()
        let userPath = fixture.layout().userPath("alice")
        let moved = elsewhere.path + "/user-alice"
        try FileManager.default.moveItem(atPath: userPath, toPath: moved)
        try FileManager.default.createSymbolicLink(atPath: userPath, withDestinationPath: moved)
        let pack = try Data(contentsOf: URL(filePath: moved + "/.pack"))
        #expect(try fixture.openCache().getCachedItems(Plain.self) == nil)
        #expect(!isSymbolicLink(userPath))
        #expect(fixture.diagnostics.errors.contains { $0.message.contains("symbolic link") })
        #expect(try Data(contentsOf: URL(filePath: moved + "/.pack")) == pack)
        #expect(try FileManager.default.contentsOfDirectory(atPath: moved) == [".pack"])
    }

    // Looks at archive files: each collection a file of its own.
    @Test func aSymlinkAtAnArchiveIsAMissAndItsTargetIsNeverRead() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache()
        try cache.cacheItems([Plain(value: 1)], forKey: "real")
        // A link to another valid archive of this very collection's name would otherwise pass
        // every check: it is refused as a link.
        let copy = try TemporaryDirectory()
        try FileManager.default.copyItem(atPath: fixture.archivePath(Plain.self, key: "real"), toPath: copy.path + "/a.archive")
        try FileManager.default.removeItem(atPath: fixture.archivePath(Plain.self, key: "real"))
        try FileManager.default.createSymbolicLink(atPath: fixture.archivePath(Plain.self, key: "real"), withDestinationPath: copy.path + "/a.archive")
        #expect(try cache.getCachedItems(Plain.self, forKey: "real") == nil)
        #expect(!FileManager.default.fileExists(atPath: fixture.archivePath(Plain.self, key: "real")))
        #expect(FileManager.default.fileExists(atPath: copy.path + "/a.archive"), "the link went, not its target")
        #expect(fixture.diagnostics.codes.contains(.corruptArchive))
    }

    @Test func aSymlinkedVersionDirectoryIsReplacedAtOpen() throws {
        let fixture = try Fixture()
        let outside = try Outside()
        try FileManager.default.createSymbolicLink(atPath: fixture.layout().versionPath, withDestinationPath: outside.directory.path)
        let cache = try fixture.openCache()
        try cache.cacheItems([Plain(value: 1)])
        try outside.expectUntouched()
        #expect(!isSymbolicLink(fixture.layout().versionPath))
    }

    @Test func wipesNeverFollowLinks() throws {
        let fixture = try Fixture()
        let outside = try Outside()
        let cache = try fixture.openCache()
        try cache.cacheItems([Plain(value: 1)])
        try FileManager.default.createSymbolicLink(atPath: fixture.layout().userPath("alice") + "/elsewhere", withDestinationPath: outside.directory.path)
        try FileManager.default.createSymbolicLink(atPath: fixture.layout().versionPath + "/user-bob", withDestinationPath: outside.directory.path)
        try cache.removeUser("alice")
        try cache.removeAllUsers()
        // Another schema version whose directory is a link: the link goes at open, not its target.
        try FileManager.default.createSymbolicLink(atPath: fixture.rootPath + "/version-0", withDestinationPath: outside.directory.path)
        _ = try fixture.openCache()
        try outside.expectUntouched()
        #expect(!FileManager.default.fileExists(atPath: fixture.rootPath + "/version-0"))
    }

    // MARK: - 2. Only regular files, nothing blocks

    // Looks at archive files: each collection a file of its own.
    @Test func aFIFOAtAnArchivePathIsAMissNeverAHang() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache()
        try cache.cacheItems([Plain(value: 1)], forKey: "neighbour")
        try FileManager.default.createDirectory(atPath: fixture.layout().userPath("alice"), withIntermediateDirectories: true)
        #expect(mkfifo(fixture.archivePath(Plain.self), 0o600) == 0)
        expectReturns("cachedDate") { #expect(cache.cachedDate(Plain.self) == nil) }
        expectReturns("entries") { #expect((try? cache.entries())?.count == 1) }
        expectReturns("the inspector") {
            let listing = try? CacheRootListing.read(root: fixture.root, verifyChecksums: true)
            #expect(listing?.unreadable.count == 1)
            #expect(listing?.unreadable.first?.reason.contains("FIFO") == true)
            #expect(listing?.archives.count == 1)
        }
        expectReturns("getCachedItems") { #expect((try? cache.getCachedItems(Plain.self)) ?? nil == nil) }
        #expect(fixture.diagnostics.errors.contains { $0.code == .corruptArchive && $0.message.contains("FIFO") })
        // The read removed it; the collection can be cached again.
        try cache.cacheItems([Plain(value: 2)])
        #expect(try fixture.openCache().getCachedItems(Plain.self) == [Plain(value: 2)])
        expectReturns("removeExpired") { #expect((try? cache.removeExpired()) != nil) }
    }

    @Test func aFIFOAtTheJournalNeverBlocksABudgetedWrite() throws {
        let fixture = try Fixture()
        try fixture.openCache().cacheItems([Plain(value: 1)])
        try FileManager.default.removeItem(atPath: fixture.journalPath)
        #expect(mkfifo(fixture.journalPath, 0o600) == 0)
        let cache = try budgeted(fixture)
        expectReturns("a budgeted write") { #expect((try? cache.cacheItems([Plain(value: 2)], forKey: "b")) != nil) }
        expectReturns("diskUsage") { #expect((try? cache.bytesOnDisk()) == (try? fixture.measuredUsage())) }
    }

    // MARK: - 3. Bounded memory on any file

    // Looks at archive files: each collection a file of its own.
    @Test func aHugeFileAtAnArchivePathIsNeverReadWhole() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache()
        try cache.cacheItems([Plain(value: 1)])
        // 3 GB, sparse: costs no disk, and would cost 3 GB of memory if read.
        let path = fixture.archivePath(Plain.self)
        let handle = try FileHandle(forWritingTo: URL(filePath: path))
        try handle.truncate(atOffset: 3 << 30)
        try handle.close()
        let before = residentBytes()
        let peakBefore = peakResidentBytes()
        #expect(cache.cachedDate(Plain.self) == nil)
        #expect(try CacheRootListing.read(root: fixture.root, verifyChecksums: true).unreadable.count == 1)
        // The read comes before anything that removes the file: its header is intact and
        // names this collection, and only the payload length it promises gives it away.
        #expect(try cache.getCachedItems(Plain.self) == nil)
        #expect(try cache.entries().isEmpty)
        // Other tests run beside this one; 3 GB read whole, even for a moment, would show far
        // past this margin.
        #expect(residentBytes() - before < 256 << 20)
        #expect(peakResidentBytes() - peakBefore < 256 << 20)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aHeaderClaimingAHugeNameIsRejectedBeforeReadingIt() throws {
        var header = ArchiveHeader(codec: 1, schemaVersion: 1, payloadLength: 0, payloadChecksum: 0, user: nil, cacheName: "Plains", key: nil)
        header.flags = 0
        var bytes = header.encoded()
        // Name length 2 GiB: a reader that trusted it would allocate that much.
        bytes.replaceSubrange(60..<64, with: [0, 0, 0, 0x80])
        #expect(throws: ArchiveDefect.nameTooLong(0x8000_0000)) {
            try bytes.withUnsafeBytes { try ArchiveHeader.requiredLength($0) }
        }
    }

    // MARK: - 4. Numbers from files never trap

    @Test func journalSizesThatAddPastIntMaxAreDamageNotACrash() throws {
        let fixture = try Fixture()
        try fixture.openCache().cacheItems([Plain(value: 1)])
        // Each at the largest size a line may claim; together past Int.max.
        try writeJournal(fixture, (0..<9000).map { "S \(DiskIndex.maximumSize) 0 shared/\($0).archive" })
        let cache = try budgeted(fixture)
        try cache.cacheItems([Plain(value: 2)], forKey: "b")
        #expect(try cache.bytesOnDisk() == (try fixture.measuredUsage()))
        cache.store.writeBack.queue.sync {}  // the index loads (and reports) in the background
        #expect(fixture.diagnostics.errors.contains { $0.message.contains("do not add up") })
        // And lines past the largest size are refused outright.
        try writeJournal(fixture, ["S 9223372036854775807 0 shared/x.archive", "S 9223372036854775807 0 shared/y.archive"])
        #expect(try budgeted(fixture).bytesOnDisk() == (try fixture.measuredUsage()))
    }

    // Plants hostile archive files: each collection a file of its own.
    /// A header's numbers at their extremes, with every flag bit set (pinned, and the reserved
    /// ones): nothing traps; a schema version other than the model's reads as a miss and the
    /// pinned archive stays; the model's own version reads, whatever its expiry (a pinned
    /// collection ignores it); listings show the numbers as they are.
    @Test func headerNumbersAtTheirExtremesAreReadWithoutTrapping() throws {
        let cases: [(schemaVersion: Int64, expiry: Int64, reads: Bool, reported: Bool)] = [
            // Older, with no upgrade: pinned, it stays for a build that declares one; said once.
            (Int64.min, Int64.max, false, true),
            (0, 0, false, true),
            // Newer: left for the build that reads it, silently.
            (Int64.max, Int64.min + 1, false, false),
            // The model's own version (1): read, the expiry far ahead or long past.
            (1, Int64.max, true, false),
            (1, Int64.min + 1, true, false),
        ]
        for (schemaVersion, expiry, reads, reported) in cases {
            let fixture = try Fixture(layout: .filePerCollection)
            let key = ArchiveKey(user: "alice", cacheName: "Plains", key: nil)
            var header = ArchiveHeader(
                codec: PayloadCodec.json.headerValue, schemaVersion: schemaVersion, expiryMilliseconds: expiry, payloadLength: 2,
                payloadChecksum: CRC32.checksum(Data("[]".utf8)), user: "alice", cacheName: "Plains", key: nil)
            header.flags = UInt32.max
            let store = try fixture.store()
            let path = store.layout.absolutePath(store.layout.archivePath(for: key))
            try FileManager.default.createDirectory(atPath: fixture.layout().userPath("alice"), withIntermediateDirectories: true)
            try Data(header.encoded() + Array("[]".utf8)).write(to: URL(filePath: path))
            let cache = try fixture.openCache()
            let what = "schema version \(schemaVersion), expiry \(expiry)"

            // Listed as they are, without decoding: pinned, so never expired.
            let entries = try cache.entries()
            #expect(entries.count == 1, "\(what)")
            let entry = try #require(entries.first, "\(what)")
            #expect(entry.modelSchemaVersion == Int(schemaVersion) && entry.isPinned, "\(what)")
            #expect(entry.expiry == Date(timeIntervalSince1970: Double(expiry) / 1000), "\(what)")
            let listed = try #require(try CacheRootListing.read(root: fixture.root, verifyChecksums: true).archives.first, "\(what)")
            #expect(listed.modelSchemaVersion == Int(schemaVersion) && listed.isPinned && listed.checksumVerified == true, "\(what)")

            #expect(try cache.getCachedItems(Plain.self) == (reads ? [] : nil), "\(what)")
            #expect(try cache.cachedCollection(Plain.self)?.items == (reads ? [] : nil), "\(what)")
            #expect(FileManager.default.fileExists(atPath: path), "\(what): a pinned archive stays")
            #expect(fixture.diagnostics.codes == (reported ? [.schemaMismatch] : []), "\(what)")
            if reads {
                #expect(cache.cachedDate(Plain.self) == entry.cachedDate, "\(what): the file's date")
            } else {
                // A collection every read misses has no date and is stale.
                #expect(cache.cachedDate(Plain.self) == nil, "\(what)")
                #expect(cache.isStale(Plain.self), "\(what)")
            }
        }
    }

    // Plants hostile archive files: each collection a file of its own.
    /// A header's claims about the collection (the memory its items take, the staleness
    /// threshold it was written with) are numbers from a file: at their extremes they neither
    /// trap the memory layer's accounting nor make it drop what else it holds.
    @Test func extremeClaimsInAHeaderNeitherTrapNorEmptyMemory() throws {
        let fixture = try Fixture(layout: .filePerCollection)
        let cache = try fixture.openCache(memory: .layer())
        for key in ["a", "b", "c"] { try cache.cacheItems([Plain(value: 1)], forKey: key) }
        try cache.flush()
        let payload = Data(#"[{"value":7}]"#.utf8)
        let layout = try fixture.store().layout
        let claims: [(decodedSize: UInt64, threshold: Int64)] = [(.max, .max), (.max - 1, -1), (1 << 62, 0)]
        for (index, claim) in claims.enumerated() {
            let key = ArchiveKey(user: "alice", cacheName: "Plains", key: "forged-\(index)")
            var header = ArchiveHeader(
                codec: PayloadCodec.json.headerValue, schemaVersion: Int64(Plain.schemaVersion), expiryMilliseconds: nil,
                decodedSize: claim.decodedSize, payloadLength: UInt64(payload.count), payloadChecksum: CRC32.checksum(payload),
                user: "alice", cacheName: "Plains", key: key.key)
            header.thresholdMilliseconds = claim.threshold
            try Data(header.encoded() + payload).write(to: URL(filePath: layout.absolutePath(layout.archivePath(for: key))))
        }
        // A payload length past any file, with a size claim to match: listed and read as damage.
        var huge = ArchiveHeader(
            codec: PayloadCodec.json.headerValue, schemaVersion: Int64(Plain.schemaVersion), expiryMilliseconds: nil,
            decodedSize: .max, payloadLength: .max / 4096, payloadChecksum: CRC32.checksum(payload),
            user: "alice", cacheName: "Plains", key: "huge")
        huge.thresholdMilliseconds = .min + 1
        let hugePath = layout.archivePath(for: ArchiveKey(user: "alice", cacheName: "Plains", key: "huge"))
        try Data(huge.encoded() + payload).write(to: URL(filePath: layout.absolutePath(hugePath)))
        _ = try CacheRootListing.read(root: fixture.root, verifyChecksums: false)
        _ = try cache.entries()
        #expect(try cache.getCachedItems(Plain.self, forKey: "huge") == nil)
        for index in claims.indices {
            #expect(try cache.getCachedItems(Plain.self, forKey: "forged-\(index)") == [Plain(value: 7)])
            _ = try cache.entries()
            _ = cache.isStale(Plain.self, forKey: "forged-\(index)")
        }
        // What the forged archives take in memory is measured, not taken from their claims:
        // all six collections fit in the memory layer together.
        #expect(cache.memoryStatistics.entries == 6)
        #expect(cache.memoryStatistics.bytes < 64 * 1024)
        let hits = cache.memoryStatistics.hits
        for key in ["a", "b", "c"] { #expect(try cache.getCachedItems(Plain.self, forKey: key) == [Plain(value: 1)]) }
        #expect(cache.memoryStatistics.hits == hits + 3)
    }
}
