import Foundation
import Testing

@testable import AppCacheKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Dates read from disk are untrusted like any byte there: one that is not finite or falls
/// outside the years 1 to 9999 is damage (the collection a miss, reported), never a trap.
struct DiskDateTests {
    /// Dates no write makes, as seconds since 2001: each once traps as a `Duration`.
    static let insaneDates: [Double] = [.nan, .infinity, -.infinity, 1e300, -1e300, DiskDate.latest + 1, DiskDate.earliest - 1]

    private func packed(_ fixture: Fixture) throws -> AppCache {
        try fixture.openCache()
    }

    private func packURL(_ fixture: Fixture) -> URL {
        URL(filePath: fixture.layout().userPath("alice") + "/" + PackFile.name)
    }

    /// `prefix` (a record's 36 bytes) with its date replaced and its checksum made right, as a
    /// hostile writer would make it.
    private func withDate(_ seconds: Double, prefix: Data) -> Data {
        var bytes = prefix
        withUnsafeBytes(of: seconds.bitPattern.littleEndian) { bytes.replaceSubrange(24..<32, with: $0) }
        let checksum = bytes.prefix(32).withUnsafeBytes { CRC32.checksum($0) }
        withUnsafeBytes(of: checksum.littleEndian) { bytes.replaceSubrange(32..<36, with: $0) }
        return bytes
    }

    /// Every read path of a collection answers without trapping, as a miss.
    private func expectMiss(_ cache: AppCache, key: String, _ comment: Comment) throws {
        #expect(try cache.getCachedItems(Plain.self, forKey: key) == nil, comment)
        #expect(try cache.cachedCollection(Plain.self, forKey: key) == nil, comment)
        #expect(cache.cachedDate(Plain.self, forKey: key) == nil, comment)
        #expect(cache.isStale(Plain.self, forKey: key), comment)
        #expect(try !cache.entries().contains { $0.key == key && $0.cacheName == Plain.cacheName }, comment)
        _ = try cache.entriesOfAllUsers()
    }

    @Test(arguments: insaneDates)
    func aPackRecordWhoseDateIsNoDateIsAMissAndReported(_ seconds: Double) throws {
        // The archive's own record, and a later re-dating record, each with the date.
        for redating in [false, true] {
            let fixture = try Fixture()
            let cache = try packed(fixture)
            try cache.cacheItems([Plain(value: 1)], forKey: "bad")
            try cache.cacheItems([Plain(value: 2)], forKey: "good")
            var pack = try Data(contentsOf: packURL(fixture))
            if redating {
                let record = PackRecord(
                    kind: .redating, bodyLength: 0, nameHash: StableHash.value64(fixture.layout().archivePath(for: ArchiveKey(user: "alice", cacheName: Plain.cacheName, key: "bad")).name),
                    sequence: 7, cachedDate: Date())
                pack += withDate(seconds, prefix: Data(record.prefix()))
            } else {
                pack.replaceSubrange(0..<36, with: withDate(seconds, prefix: pack.prefix(36)))
            }
            try pack.write(to: packURL(fixture))
            // What the inspector lists: the record as damaged.
            let listing = try CacheRootListing.read(root: fixture.root)
            #expect(listing.archives.count == 1 && listing.archives.allSatisfy { DiskDate.isSane($0.cachedDate) })
            #expect(listing.unreadable.count == 1, "listed as damaged: \(listing.unreadable)")
            let reader = try packed(fixture)
            try expectMiss(reader, key: "bad", "date \(seconds), re-dating \(redating)")
            #expect(try reader.getCachedItems(Plain.self, forKey: "good") == [Plain(value: 2)])
            #expect(fixture.diagnostics.codes.contains(.corruptArchive))
            // Written again, it reads.
            try reader.cacheItems([Plain(value: 3)], forKey: "bad")
            #expect(try packed(fixture).getCachedItems(Plain.self, forKey: "bad") == [Plain(value: 3)])
        }
    }

    // Looks at archive files: each collection a file of its own.
    /// An archive file whose modification date is past the year 9999 (set by something other
    /// than the cache) is a miss, listed as damaged. On a file system that keeps such dates
    /// (tmpfs here; ext4 stops at 2446, which is a date).
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/shm")))
    func anArchiveFileDatedPastTheYear9999IsAMiss() throws {
        let fixture = try Fixture(in: URL(filePath: "/dev/shm"), layout: .filePerCollection)
        let cache = try fixture.openCache()
        try cache.cacheItems([Plain(value: 1)], forKey: "bad")
        var times = [timespec(tv_sec: 1 << 40, tv_nsec: 0), timespec(tv_sec: 1 << 40, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, fixture.archivePath(Plain.self, key: "bad"), &times, 0) == 0)
        let listing = try CacheRootListing.read(root: fixture.root)
        #expect(listing.archives.isEmpty && listing.unreadable.count == 1)
        try expectMiss(try fixture.openCache(), key: "bad", "a file dated 2^40 seconds after 1970")
    }

    /// Moments in root record files that are no dates are skipped as damaged lines.
    @Test func rootRecordLinesWhoseMomentIsNoDateAreSkipped() {
        let good = Milliseconds.moment(Date(timeIntervalSince1970: 1_800_000_000))
        let text = "user-alice\t*\t*\t\t\(good)\nuser-bob\t*\t*\t\t\(Int64.max)\nuser-carol\t*\t*\t\t\(Int64.min)\n"
        let log = InvalidationLog(decoding: Data(text.utf8))
        #expect(log.records.map(\.userDirectory) == ["user-alice"])
        let mismatches = ModelMismatchLog.decode(Data("shared/a.archive\t10\t\(Int64.max)\twhy\nshared/b.archive\t10\t\(good)\twhy\n".utf8))
        #expect(mismatches.map(\.archive.name) == ["b.archive"])
    }

    /// However the clock and a date from memory disagree, an age never traps.
    @Test func anAgeNeverTraps() {
        let now = Date()
        for seconds in Self.insaneDates {
            let age = Duration.age(of: Date(timeIntervalSinceReferenceDate: seconds), now: now)
            #expect(age.isStale(threshold: .seconds(60)) || seconds.isNaN)
        }
    }
}
