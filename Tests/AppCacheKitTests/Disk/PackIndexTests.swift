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
        #expect(
            index[1] == PackIndex.Entry(offset: 0, bodyLength: 100, sequence: 2, cachedDate: Self.later, redatedAt: stored.length),
            "same bytes, new date and version, and where the re-dating is")
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

    /// An index continuing a checkpoint keeps what its records say of archives it does not
    /// hold: a removal hides the checkpoint's entry, a re-dating moves its date, damage naming
    /// it makes it a miss; a new record of the name replaces all of that.
    @Test func anIndexAfterACheckpointKeepsWhatItsRecordsSayOfTheCheckpointsArchives() {
        var index = PackIndex(continuingAt: 1_000)
        index.apply(Self.removal(1, sequence: 10), at: index.end)
        index.apply(Self.redating(2, sequence: 11, date: Self.later), at: index.end)
        index.skipDamage(from: index.end, to: index.end + 50, reason: "flipped", naming: [3])
        index.apply(Self.redating(1, sequence: 12, date: Self.later), at: index.end)
        #expect(index.overrides[1] == .removed, "a re-dating after a removal brings nothing back")
        #expect(index.overrides[2] == .redated(sequence: 11, date: Self.later))
        #expect(index.overrides[3] == .damaged("flipped"))
        #expect(index.lastRecordOffset == 1_000 + 2 * PackRecord.prefixLength + 50)
        index.apply(Self.archive(1, bytes: 20, sequence: 13), at: index.end)
        #expect(index.overrides[1] == nil && index[1]?.sequence == 13, "a new record is the archive again")
        index.apply(Self.removal(1, sequence: 14), at: index.end)
        #expect(index[1] == nil && index.overrides[1] == .removed, "removed again: the checkpoint's entry stays hidden too")

        var whole = PackIndex()
        whole.apply(Self.removal(5, sequence: 1), at: whole.end)
        #expect(whole.overrides.isEmpty, "an index of a whole pack needs none")
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
