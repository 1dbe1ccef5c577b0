import AppCacheTestSupport
import Foundation
import Testing

@testable import AppCacheKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// ``PackIndex``: where each archive of a pack is, from its records in the pack's order. The
/// newest record of a name is its archive; a removal ends the name; a re-dating moves a live
/// archive's date only; bytes that are no record, or a date no write makes, are dead and mark
/// the archive whose newest record they held, so an older record of it is never served.
@Suite struct PackIndexTests {
    static let written = Date(timeIntervalSince1970: 1_800_000_000)
    static let later = written.addingTimeInterval(60)

    static func archive(_ hash: UInt64, bytes: Int, sequence: UInt64, date: Date = written) -> PackRecord {
        PackRecord(kind: .archive, bodyLength: bytes, nameHash: hash, sequence: sequence, cachedDate: date)
    }

    static func removal(_ hash: UInt64, sequence: UInt64) -> PackRecord {
        PackRecord(kind: .removal, bodyLength: 0, nameHash: hash, sequence: sequence, cachedDate: written)
    }

    static func redating(_ hash: UInt64, sequence: UInt64, date: Date) -> PackRecord {
        PackRecord(kind: .redating, bodyLength: 0, nameHash: hash, sequence: sequence, cachedDate: date)
    }

    /// Applies `records` one after another, as a pack holds them.
    static func index(_ records: [PackRecord]) -> PackIndex {
        var index = PackIndex()
        for record in records { index.apply(record, at: index.end) }
        return index
    }

    @Test func theNewestRecordOfANameIsItsArchive() {
        let first = Self.archive(1, bytes: 100, sequence: 1)
        let other = Self.archive(2, bytes: 50, sequence: 2)
        let newer = Self.archive(1, bytes: 80, sequence: 3, date: Self.later)
        let index = Self.index([first, other, newer])
        #expect(index[1] == PackIndex.Entry(offset: first.length + other.length, bodyLength: 80, sequence: 3, cachedDate: Self.later))
        #expect(index[2] == PackIndex.Entry(offset: first.length, bodyLength: 50, sequence: 2, cachedDate: Self.written))
        #expect(index[3] == nil)
        #expect(index.end == first.length + other.length + newer.length)
        #expect(index.liveBytes == other.length + newer.length)
        #expect(index.deadBytes == first.length, "the replaced record")
        #expect(index.entries.count == 2 && index.damage.isEmpty)
    }

    @Test func aRemovalEndsANameAndARedatingMovesOnlyALiveArchivesDate() {
        let stored = Self.archive(1, bytes: 100, sequence: 1)
        var index = Self.index([stored, Self.redating(1, sequence: 2, date: Self.later)])
        #expect(index[1] == PackIndex.Entry(offset: 0, bodyLength: 100, sequence: 2, cachedDate: Self.later), "same bytes, new date and version")
        #expect(index.liveBytes == stored.length, "a re-dating is dead weight at once")

        for record in [Self.removal(1, sequence: 3), Self.redating(1, sequence: 4, date: Self.later)] {
            index.apply(record, at: index.end)
        }
        #expect(index[1] == nil, "removed; a later re-dating does not bring it back")
        #expect(index.liveBytes == 0 && index.deadBytes == index.end)

        let again = Self.archive(1, bytes: 10, sequence: 5)
        let offset = index.end
        index.apply(again, at: offset)
        #expect(index[1]?.offset == offset, "a new write of the name")
    }

    @Test func bytesThatAreNoRecordAreDeadAndMarkTheArchiveTheyBegin() {
        let one = Self.archive(1, bytes: 100, sequence: 1)
        let two = Self.archive(2, bytes: 100, sequence: 2)
        var index = Self.index([one, two])
        let damaged = index.end
        // A newer record of archive 1 whose prefix is damaged (its header still names it).
        index.skipDamage(from: damaged, to: damaged + 136, reason: "a record's prefix fails its checksum", naming: [1])
        #expect(index[1]?.damage == "a record's prefix fails its checksum", "never served from its older record")
        #expect(index[1]?.offset == 0)
        #expect(index[2]?.damage == nil)
        #expect(index.damage == [PackIndex.Damage(offset: damaged, length: 136, reason: "a record's prefix fails its checksum")])
        #expect(index.end == damaged + 136 && index.deadBytes == 136)

        // Damage naming nothing, or a name with no archive, marks nothing.
        index.skipDamage(from: index.end, to: index.end + 10, reason: "garbage", naming: [])
        index.skipDamage(from: index.end, to: index.end + 10, reason: "garbage", naming: [9])
        #expect(index[2]?.damage == nil && index[9] == nil)
        #expect(index.damage.count == 3 && index.deadBytes == 156)

        // A whole newer record of archive 1 is its archive again.
        index.apply(Self.archive(1, bytes: 20, sequence: 3), at: index.end)
        #expect(index[1]?.damage == nil && index[1]?.sequence == 3)
    }

    @Test func aDateNoWriteMakesIsDamage() {
        let insane = Date(timeIntervalSinceReferenceDate: DiskDate.latest + 1)
        var index = Self.index([Self.archive(1, bytes: 100, sequence: 1, date: insane), Self.archive(2, bytes: 100, sequence: 2)])
        #expect(index[1]?.damage != nil, "a miss, not a date to compute an age from")
        #expect(index.damage.map(\.offset) == [0])

        index.apply(Self.redating(2, sequence: 3, date: Date(timeIntervalSinceReferenceDate: .nan)), at: index.end)
        #expect(index[2]?.damage != nil)
        #expect(index[2]?.cachedDate == Self.written && index[2]?.sequence == 2, "the bad date is not taken")
    }

    /// The index one process builds while appending is the one another builds reading the
    /// file, and damage in the middle costs only its record.
    @Test func readingAPackGivesTheIndexItsAppendsGave() throws {
        let directory = try TemporaryDirectory()
        let records = [
            Self.archive(1, bytes: 300, sequence: 1), Self.archive(2, bytes: 70_000, sequence: 2),
            Self.redating(1, sequence: 3, date: Self.later), Self.archive(3, bytes: 40, sequence: 4),
            Self.removal(2, sequence: 5), Self.archive(4, bytes: 12, sequence: 6),
        ]
        var bytes: [UInt8] = []
        for record in records { bytes += record.prefix() + [UInt8](repeating: 0x5A, count: record.bodyLength) }
        let appended = Self.index(records)

        func scanned(_ bytes: [UInt8]) throws -> (PackIndex, PackFile.Stop) {
            let path = directory.path + "/" + PackFile.name
            try Data(bytes).write(to: URL(filePath: path))
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            try #require(descriptor >= 0)
            var info = stat()
            fstat(descriptor, &info)
            let pack = PackFile(descriptor: descriptor, number: FileID(info), isWritable: false)
            var index = PackIndex()
            let stop = pack.scan(into: &index, upTo: bytes.count, maximumBodyLength: 1 << 20)
            return (index, stop)
        }

        let (read, stop) = try scanned(bytes)
        #expect(stop == .end)
        #expect(read.entries == appended.entries && read.end == appended.end && read.liveBytes == appended.liveBytes)

        // The third archive's prefix damaged: the records after it are still read.
        var damaged = bytes
        let third = records[0..<3].reduce(0) { $0 + $1.length }
        damaged[third + 8] ^= 0xFF
        let (recovered, recoveredStop) = try scanned(damaged)
        #expect(recoveredStop == .end)
        #expect(recovered[3] == nil, "its record is lost")
        #expect(recovered[4] == appended[4] && recovered[1] == appended[1] && recovered[2] == nil)
        #expect(recovered.damage.map(\.offset) == [third] && recovered.damage.first?.length == records[3].length)
    }
}
