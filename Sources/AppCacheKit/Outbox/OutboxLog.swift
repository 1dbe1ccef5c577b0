import Foundation

/// The bytes of a user's queue of changes not yet accepted by the server (the outbox of
/// issue 25's `CacheMutation`s): an append-only log of records in the user's directory, read as
/// untrusted bytes.
///
/// Each record: magic `ACO1` (4 bytes), its kind (1 byte: enqueued, attempted, done), the body's
/// length (4 bytes, little-endian), the body, then a CRC-32 of everything before it in the
/// record (4 bytes). Bodies:
///
/// - **enqueued**: the change's id (16 bytes), when it was enqueued (8 bytes, milliseconds since
///   1970), the lengths of its kind's name, its key (`0xFFFFFFFF`: the default collection) and
///   its encoded value (4 bytes each), then those bytes;
/// - **attempted**: the id, how many sends were tried (4 bytes), the last error's length (4
///   bytes) and text;
/// - **done**: the id (accepted by the server, or rejected for good);
/// - **versioned enqueued** (kind 4): an enqueued body followed by the change's
///   ``CacheMutation/schemaVersion`` (4 bytes). Builds before it wrote kind 1, whose changes
///   have no version; a build that predates kind 4 skips such a record as damage.
///
/// What the queue holds is the enqueued records in order, less the done ones, each with its last
/// attempt. A record that fails its checksum is skipped and counted as damage (a flipped bit),
/// and reading goes on at the next record; bytes that are not a record end the reading there
/// (counted as damage). A last record the bytes end inside is an append under way, or one a
/// crash cut off: not damage, but ``hasIncompleteTail`` (the writer cuts it off under the lock
/// before appending). Every length is bounded before anything is allocated for it.
///
/// Thread safety: a value; reading and writing the file is the disk layer's.
struct OutboxLog: Equatable, Sendable, RootRecordFile {
    static let magic: [UInt8] = Array("ACO1".utf8)
    /// The longest name of a kind of change, in UTF-8 bytes.
    static let maximumNameLength = 256
    /// The longest encoded change.
    static let maximumValueLength = 1 << 20
    /// The longest error text kept.
    static let maximumErrorLength = 4096

    enum Kind: UInt8 {
        case enqueued = 1
        case attempted = 2
        case done = 3
        case versionedEnqueued = 4
    }

    /// One queued change, as the log holds it.
    struct Entry: Equatable, Sendable {
        var id: UUID
        var enqueuedMilliseconds: Int64
        var name: String
        var key: String?
        var value: Data
        /// The change's ``CacheMutation/schemaVersion`` when it was queued; `nil` for changes
        /// queued by builds that did not record it.
        var version: Int? = nil
        var attempts = 0
        var lastError: String?
    }

    /// The queue, oldest first.
    private(set) var entries: [Entry] = []
    /// How many records were damaged (skipped, or where reading stopped) when the log was read.
    private(set) var damagedRecords = 0
    /// Whether the bytes end inside a record (an append under way, or cut off by a crash).
    private(set) var hasIncompleteTail = false
    /// How many records the bytes held, done and damaged ones included.
    private(set) var recordCount = 0

    init() {}

    // MARK: - Records

    /// The record that enqueues `entry`.
    static func enqueued(_ entry: Entry) -> Data {
        var body = Data()
        body.append(id: entry.id)
        body.appendLittleEndian(entry.enqueuedMilliseconds)
        let name = Data(entry.name.utf8.prefix(maximumNameLength))
        let key = entry.key.map { Data($0.utf8.prefix(ArchiveHeader.maximumNameLength)) }
        body.appendLittleEndian(UInt32(name.count))
        body.appendLittleEndian(key.map { UInt32($0.count) } ?? UInt32.max)
        body.appendLittleEndian(UInt32(entry.value.count))
        body.append(name)
        body.append(key ?? Data())
        body.append(entry.value)
        guard let version = entry.version else { return record(.enqueued, body) }
        body.appendLittleEndian(Int32(clamping: version))
        return record(.versionedEnqueued, body)
    }

    /// The record that notes a send of `id` was tried `attempts` times, the last failing with
    /// `error`.
    static func attempted(_ id: UUID, attempts: Int, error: String?) -> Data {
        var body = Data()
        body.append(id: id)
        body.appendLittleEndian(UInt32(clamping: attempts))
        let text = Data((error ?? "").utf8.prefix(maximumErrorLength))
        body.appendLittleEndian(error == nil ? UInt32.max : UInt32(text.count))
        body.append(text)
        return record(.attempted, body)
    }

    /// The record that takes `id` out of the queue.
    static func done(_ id: UUID) -> Data {
        var body = Data()
        body.append(id: id)
        return record(.done, body)
    }

    private static func record(_ kind: Kind, _ body: Data) -> Data {
        var out = Data(magic)
        out.append(kind.rawValue)
        out.appendLittleEndian(UInt32(body.count))
        out.append(body)
        out.appendLittleEndian(CRC32.checksum(out))
        return out
    }

    // MARK: - Reading

    /// The queue the log's bytes hold.
    init(decoding bytes: Data) {
        var offset = bytes.startIndex
        var done: Set<UUID> = []
        var attempts: [UUID: (Int, String?)] = [:]
        var enqueued: [Entry] = []
        var seen: Set<UUID> = []
        while offset < bytes.endIndex {
            // The fixed part: magic, kind, length.
            let remaining = bytes.endIndex - offset
            let magicBytes = bytes[offset..<(offset + min(remaining, 4))]
            guard magicBytes.elementsEqual(Self.magic.prefix(magicBytes.count)) else {
                damagedRecords += 1
                break
            }
            guard remaining >= 9 else {
                hasIncompleteTail = true
                break
            }
            let kind = bytes[offset + 4]
            let length = Int(bytes.readLittleEndian(at: offset + 5) as UInt32)
            guard length <= Self.maximumBodyLength else {
                damagedRecords += 1
                break
            }
            guard remaining - 9 - 4 >= length else {
                hasIncompleteTail = true
                break
            }
            recordCount += 1
            let end = offset + 9 + length
            let stored: UInt32 = bytes.readLittleEndian(at: end)
            let intact = CRC32.checksum(bytes[offset..<end]) == stored
            let body = bytes[(offset + 9)..<end]
            offset = end + 4
            guard intact, let recordKind = Kind(rawValue: kind), body.count >= 16 else {
                damagedRecords += 1
                continue
            }
            let id = body.readID(at: body.startIndex)
            switch recordKind {
            case .enqueued, .versionedEnqueued:
                guard let entry = Self.entry(id, body, versioned: recordKind == .versionedEnqueued), seen.insert(id).inserted else {
                    damagedRecords += 1
                    continue
                }
                enqueued.append(entry)
            case .attempted:
                guard body.count >= 24 else {
                    damagedRecords += 1
                    continue
                }
                let count = Int(body.readLittleEndian(at: body.startIndex + 16) as UInt32)
                let textLength: UInt32 = body.readLittleEndian(at: body.startIndex + 20)
                var text: String?
                if textLength != UInt32.max {
                    guard Int(textLength) == body.count - 24 else {
                        damagedRecords += 1
                        continue
                    }
                    text = String(decoding: body[(body.startIndex + 24)...], as: UTF8.self)
                }
                attempts[id] = (count, text)
            case .done:
                done.insert(id)
            }
        }
        entries = enqueued.compactMap { entry in
            guard !done.contains(entry.id) else { return nil }
            var entry = entry
            if let (count, text) = attempts[entry.id] { (entry.attempts, entry.lastError) = (count, text) }
            return entry
        }
    }

    /// The longest body of any record.
    static let maximumBodyLength = 16 + 8 + 12 + 4 + maximumNameLength + ArchiveHeader.maximumNameLength + maximumValueLength

    /// The records that hold the queue as it is now: each entry enqueued, with its last attempt.
    /// What a compaction writes in place of the whole log.
    static var maximumSize: Int { OutboxFile.maximumSize }

    func encoded() -> Data {
        var bytes = Data()
        for entry in entries {
            bytes += Self.enqueued(entry)
            if entry.attempts > 0 || entry.lastError != nil {
                bytes += Self.attempted(entry.id, attempts: entry.attempts, error: entry.lastError)
            }
        }
        return bytes
    }

    /// The entry an enqueued record's `body` holds; `nil` when its lengths do not add up.
    private static func entry(_ id: UUID, _ body: Data, versioned: Bool) -> Entry? {
        let trailer = versioned ? 4 : 0
        guard body.count >= 16 + 8 + 12 + trailer else { return nil }
        let start = body.startIndex
        let milliseconds: Int64 = body.readLittleEndian(at: start + 16)
        let nameLength = Int(body.readLittleEndian(at: start + 24) as UInt32)
        let keyLength: UInt32 = body.readLittleEndian(at: start + 28)
        let valueLength = Int(body.readLittleEndian(at: start + 32) as UInt32)
        let keyCount = keyLength == UInt32.max ? 0 : Int(keyLength)
        guard nameLength <= maximumNameLength, keyCount <= ArchiveHeader.maximumNameLength, valueLength <= maximumValueLength,
            body.count == 36 + nameLength + keyCount + valueLength + trailer, DiskDate.isSane(millisecondsSince1970: milliseconds)
        else { return nil }
        var offset = start + 36
        func text(_ count: Int) -> String? {
            defer { offset += count }
            return UTF8Text.string(validating: body[offset..<(offset + count)])
        }
        guard let name = text(nameLength), !name.isEmpty else { return nil }
        var key: String?
        if keyLength != UInt32.max {
            guard let value = text(keyCount) else { return nil }
            key = value
        }
        let value = Data(body[offset..<(body.endIndex - trailer)])
        let version = versioned ? Int(body.readLittleEndian(at: body.endIndex - 4) as Int32) : nil
        return Entry(id: id, enqueuedMilliseconds: milliseconds, name: name, key: key, value: value, version: version)
    }
}

extension Data {
    fileprivate mutating func append(id: UUID) {
        Swift.withUnsafeBytes(of: id.uuid) { append(contentsOf: $0) }
    }

    fileprivate func readLittleEndian<T: FixedWidthInteger>(at offset: Int) -> T {
        var value: T = 0
        Swift.withUnsafeMutableBytes(of: &value) { target in
            _ = self[offset..<(offset + MemoryLayout<T>.size)].copyBytes(to: target)
        }
        return T(littleEndian: value)
    }

    fileprivate func readID(at offset: Int) -> UUID {
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        Swift.withUnsafeMutableBytes(of: &bytes) { target in
            _ = self[offset..<(offset + 16)].copyBytes(to: target)
        }
        return UUID(uuid: bytes)
    }
}
