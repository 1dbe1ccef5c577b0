import Foundation
import Testing

@testable import AppCacheKit

/// The outbox's log, read as untrusted bytes: records in order, done ones gone, attempts kept,
/// a damaged record skipped, a torn or lying tail cut off, nothing allocated on a claimed length.
@Suite struct OutboxLogTests {
    static func entry(_ number: UInt8, key: String? = "k") -> OutboxLog.Entry {
        OutboxLog.Entry(
            id: UUID(uuid: (number, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)), enqueuedMilliseconds: 1_700_000_000_000 + Int64(number),
            name: "bookmark", key: key, value: Data("{\"article\":\(number)}".utf8))
    }

    @Test func theQueueIsTheEnqueuedRecordsInOrderLessTheDoneOnes() {
        var bytes = Data()
        for number: UInt8 in 1...4 { bytes += OutboxLog.enqueued(Self.entry(number, key: number == 3 ? nil : "k\(number)")) }
        bytes += OutboxLog.attempted(Self.entry(2).id, attempts: 3, error: "timed out")
        bytes += OutboxLog.done(Self.entry(1).id)
        bytes += OutboxLog.attempted(Self.entry(4).id, attempts: 1, error: nil)
        let log = OutboxLog(decoding: bytes)
        #expect(log.damagedRecords == 0)
        #expect(log.entries.map(\.id) == ([2, 3, 4] as [UInt8]).map { Self.entry($0).id })
        #expect(log.entries[0].attempts == 3 && log.entries[0].lastError == "timed out")
        #expect(log.entries[1].key == nil && log.entries[1].value == Self.entry(3).value)
        #expect(log.entries[2].attempts == 1 && log.entries[2].lastError == nil)
        #expect(log.entries[0].key == "k2" && log.entries[0].name == "bookmark")
    }

    @Test func aVersionedRecordKeepsItsVersionAndAnOlderOneHasNone() {
        var versioned = Self.entry(1)
        versioned.version = 3
        let old = Self.entry(2)
        let bytes = OutboxLog.enqueued(versioned) + OutboxLog.enqueued(old)
        let log = OutboxLog(decoding: bytes)
        #expect(log.damagedRecords == 0)
        #expect(log.entries.map(\.version) == [3, nil])
        #expect(log.entries.map(\.value) == [versioned.value, old.value], "the version is not read as part of the value")
        #expect(OutboxLog(decoding: log.encoded()).entries == log.entries, "a compaction keeps it")
        // A version record whose body is one byte short of its version is damage, not a guess.
        var short = OutboxLog.enqueued(versioned)
        let bodyLength = Int(short[short.startIndex + 5])
        short.removeSubrange((short.endIndex - 5)..<(short.endIndex - 4))
        short[short.startIndex + 5] = UInt8(bodyLength - 1)
        let crc = CRC32.checksum(short.prefix(short.count - 4))
        short.replaceSubrange((short.endIndex - 4)..<short.endIndex, with: withUnsafeBytes(of: crc.littleEndian) { Data($0) })
        let damaged = OutboxLog(decoding: short + OutboxLog.enqueued(old))
        #expect(damaged.entries.map(\.id) == [old.id])
        #expect(damaged.damagedRecords == 1)
    }

    @Test func aDamagedRecordIsSkippedATornTailCutOff() {
        let records = (1...3).map { OutboxLog.enqueued(Self.entry($0)) }
        var flipped = records[1]
        flipped[flipped.startIndex + 20] ^= 0x40
        let skipped = OutboxLog(decoding: records[0] + flipped + records[2])
        #expect(skipped.entries.map(\.id) == [Self.entry(1).id, Self.entry(3).id])
        #expect(skipped.damagedRecords == 1)

        // A crash in the middle of an append: the whole records before it stand.
        let torn = OutboxLog(decoding: records[0] + records[1] + records[2].prefix(records[2].count - 5))
        #expect(torn.entries.map(\.id) == [Self.entry(1).id, Self.entry(2).id])
        #expect(torn.damagedRecords == 0 && torn.hasIncompleteTail)
        for cut in [1, 4, 8, 9, 12] {
            let tail = OutboxLog(decoding: records[0] + records[1].prefix(cut))
            #expect(tail.entries.map(\.id) == [Self.entry(1).id] && tail.hasIncompleteTail && tail.damagedRecords == 0)
        }

        // A compaction keeps the queue: entries in order, with their attempts.
        let compacted = OutboxLog(decoding: OutboxLog(decoding: records[0] + records[1] + OutboxLog.attempted(Self.entry(2).id, attempts: 2, error: "offline") + OutboxLog.done(Self.entry(1).id)).encoded())
        #expect(compacted.entries.map(\.id) == [Self.entry(2).id] && compacted.entries[0].attempts == 2 && compacted.entries[0].lastError == "offline")
        #expect(compacted.recordCount == 2)
    }

    @Test func lyingLengthsAndGarbageEndTheReadingWithoutAllocating() {
        var lying = Data(OutboxLog.magic)
        lying.append(1)
        lying.append(contentsOf: [0xFF, 0xFF, 0xFF, 0x7F])  // claims 2 GB
        let log = OutboxLog(decoding: OutboxLog.enqueued(Self.entry(1)) + lying + Data(count: 64))
        #expect(log.entries.count == 1 && log.damagedRecords == 1)
        #expect(OutboxLog(decoding: Data("not an outbox at all".utf8)).entries.isEmpty)

        // An enqueued record whose inner lengths do not add up, under a good checksum, is damage.
        var body = Data(count: 36)
        body[24] = 200  // a 200-byte name that is not there
        var record = Data(OutboxLog.magic)
        record.append(OutboxLog.Kind.enqueued.rawValue)
        withUnsafeBytes(of: UInt32(body.count).littleEndian) { record.append(contentsOf: $0) }
        record += body
        withUnsafeBytes(of: CRC32.checksum(record).littleEndian) { record.append(contentsOf: $0) }
        let inner = OutboxLog(decoding: record + OutboxLog.enqueued(Self.entry(2)))
        #expect(inner.entries.map(\.id) == [Self.entry(2).id])
        #expect(inner.damagedRecords == 1)
    }

    @Test func anIdEnqueuedTwiceCountsOnce() {
        let bytes = OutboxLog.enqueued(Self.entry(1)) + OutboxLog.enqueued(Self.entry(1))
        let log = OutboxLog(decoding: bytes)
        #expect(log.entries.count == 1 && log.damagedRecords == 1)
    }
}
