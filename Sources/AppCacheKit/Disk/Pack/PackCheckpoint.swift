import Foundation
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A checkpointed table of a pack (``PackFile``): where each live archive's newest record was
/// when it was written, sorted by name hash, in the user directory beside the pack
/// (`.pack-checkpoint`), written over in place by the writers (``write(_:in:fileSystem:)``). It lets the first read after launch find one archive without reading
/// every record prefix of the pack: a lookup reads the table's header and page directory, one
/// page, and the pack's records written after the table (its tail, kept short by the writers).
///
/// Layout, integers little-endian:
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 4 | magic `ACPC` |
/// | 4 | 4 | format version, 1 |
/// | 8 | 8 | the pack's device |
/// | 16 | 8 | the pack's inode |
/// | 24 | 8 | covered end: the pack's bytes the table describes (every record before it) |
/// | 32 | 8 | offset of the last record before the covered end (`UInt64.max`: none) |
/// | 40 | 4 | that record's prefix checksum (its bytes 32..<36) |
/// | 44 | 4 | entry count |
/// | 48 | 4 | page count |
/// | 52 | 4 | CRC-32 of the page directory |
/// | 56 | 4 | reserved, 0 |
/// | 60 | 4 | CRC-32 of bytes 0..<60 |
/// | 64 | 8 × pages | the page directory: each page's first name hash |
/// | then | 4096 × pages | the pages |
///
/// A page: entry count (2), reserved (2), CRC-32 of its entries (4), then up to 204 entries of
/// 20 bytes: name hash (8), the archive record's offset (4), its body length (4; bit 31 set for
/// an archive whose newest record is damage: a miss), the offset of the re-dating record that
/// gave it its date (4; `0xFFFFFFFF`: none). Entries are sorted by hash across pages.
///
/// Why a checkpointed table rather than an index appended with the records: an appended index
/// still has to be read whole, so its cost would still grow with the count; a sorted table is
/// searched, so a lookup costs the same at a thousand archives as at a million, and the pack
/// stays the one place a write goes. The table is only ever a hint: it is bound to one pack
/// file (its device, inode and the checksum of its last covered record's prefix, which holds a
/// random sequence number, so a pack made again at a reused inode does not match), and every
/// record it points to is checked (prefix checksum, kind, name hash, length) before it is
/// used; a table that does not match, or fails a check, is set aside and the pack is read as
/// before. A torn or missing table costs speed, never an answer.
///
/// Thread safety: `Sendable`; the descriptor is closed when the last copy goes.
struct PackCheckpoint: Sendable {
    /// The file name of a pack's checkpoint.
    static let name = ".pack-checkpoint"
    static let magic: [UInt8] = Array("ACPC".utf8)
    static let formatVersion: UInt32 = 1
    static let headerLength = 64
    static let pageSize = 4096
    static let pageHeaderLength = 8
    static let entryLength = 20
    /// The body length's bit that marks an archive whose newest record is damage.
    static let damagedFlag: UInt32 = 1 << 31
    /// The re-dating offset of an archive never re-dated.
    static let notRedated: UInt32 = .max
    static let entriesPerPage = (pageSize - pageHeaderLength) / entryLength
    /// The most pages a table may have: one per 255 records of the largest pack there can be.
    static let maximumPages = PackFile.maximumSize / PackRecord.prefixLength / entriesPerPage + 1

    /// What the table describes: which pack, and how much of it.
    struct Binding: Equatable, Sendable {
        var pack: FileID
        var coveredEnd: Int
        /// The last record before ``coveredEnd`` and its prefix's checksum; `nil` when the pack
        /// had no record.
        var lastRecord: (offset: Int, checksum: UInt32)?

        static func == (lhs: Binding, rhs: Binding) -> Bool {
            lhs.pack == rhs.pack && lhs.coveredEnd == rhs.coveredEnd && lhs.lastRecord?.offset == rhs.lastRecord?.offset
                && lhs.lastRecord?.checksum == rhs.lastRecord?.checksum
        }
    }

    /// One archive in the table.
    struct Entry: Equatable, Sendable {
        var hash: UInt64
        /// Where the archive's record is.
        var offset: Int
        var bodyLength: Int
        /// Whether its newest record is damage (this one, older, must not be served).
        var isDamaged: Bool
        /// Where the re-dating record that gave it its date is, if one did.
        var redatedAt: Int?
    }

    private let handle: DescriptorHandle
    let binding: Binding
    private let firstHashes: [UInt64]

    /// What a lookup found.
    enum Lookup: Equatable {
        case found(Entry)
        case absent
        /// A page that fails its checks: the table is not to be trusted.
        case damaged
    }

    // MARK: - Reading

    /// Opens `directory`'s checkpoint if there is one and it describes `pack` (opened, `size`
    /// bytes now); `nil` otherwise (none, another pack's, damaged).
    static func open(in directory: String, for pack: PackFile, size: Int, fileSystem: FileSystem) -> PackCheckpoint? {
        let path = CachePath(directory: directory, name: name)
        guard let held = try? fileSystem.openDirectory(of: path, create: false) else { return nil }
        defer { SystemCalls.close(held) }
        let descriptor = SystemCalls.openat(held, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0)
        guard descriptor >= 0 else { return nil }
        let handle = DescriptorHandle(descriptor: descriptor)
        var info = stat()
        guard SystemCalls.fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        var header = [UInt8](repeating: 0, count: headerLength)
        guard header.withUnsafeMutableBytes({ SystemCalls.preadFully(descriptor, into: $0, at: 0) }) == headerLength,
            let parsed = parseHeader(header), parsed.binding.pack == pack.number, parsed.binding.coveredEnd <= size,
            parsed.pages <= maximumPages, Int(clamping: info.st_size) >= headerLength + parsed.pages * (8 + pageSize)
        else { return nil }
        // The last covered record must be the one the table was written after, whole: same
        // offset, a prefix that checks, the same prefix checksum (which covers its random
        // sequence number).
        if let last = parsed.binding.lastRecord {
            guard last.offset + PackRecord.prefixLength <= parsed.binding.coveredEnd, let found = pack.record(at: last.offset),
                found.checksum == last.checksum, last.offset + found.record.length <= parsed.binding.coveredEnd
            else { return nil }
        } else if parsed.binding.coveredEnd != 0 {
            return nil
        }
        var directoryBytes = [UInt8](repeating: 0, count: parsed.pages * 8)
        if parsed.pages > 0 {
            guard directoryBytes.withUnsafeMutableBytes({ SystemCalls.preadFully(descriptor, into: $0, at: headerLength) }) == directoryBytes.count,
                directoryBytes.withUnsafeBytes({ CRC32.checksum($0) }) == parsed.directoryChecksum
            else { return nil }
        }
        let firstHashes = (0..<parsed.pages).map { directoryBytes.readLittleEndian(at: $0 * 8) as UInt64 }
        guard zip(firstHashes, firstHashes.dropFirst()).allSatisfy({ $0 <= $1 }) else { return nil }
        return PackCheckpoint(handle: handle, binding: parsed.binding, firstHashes: firstHashes)
    }

    private init(handle: DescriptorHandle, binding: Binding, firstHashes: [UInt64]) {
        self.handle = handle
        self.binding = binding
        self.firstHashes = firstHashes
    }

    /// The binding a checkpoint file's first bytes state, checked; `nil` for anything else.
    static func binding(ofHeader bytes: [UInt8]) -> Binding? {
        parseHeader(bytes)?.binding
    }

    private static func parseHeader(_ bytes: [UInt8]) -> (binding: Binding, pages: Int, directoryChecksum: UInt32)? {
        guard bytes.count >= headerLength, Array(bytes[0..<4]) == magic, (bytes.readLittleEndian(at: 4) as UInt32) == formatVersion,
            bytes.withUnsafeBytes({ CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<60])) }) == bytes.readLittleEndian(at: 60) as UInt32
        else { return nil }
        let coveredEnd = bytes.readLittleEndian(at: 24) as UInt64
        let lastOffset = bytes.readLittleEndian(at: 32) as UInt64
        let pages = Int(bytes.readLittleEndian(at: 48) as UInt32)
        let count = Int(bytes.readLittleEndian(at: 44) as UInt32)
        guard coveredEnd <= UInt64(PackFile.maximumSize), count <= pages * entriesPerPage, pages <= maximumPages,
            lastOffset == .max || lastOffset < coveredEnd
        else { return nil }
        let binding = Binding(
            pack: FileID(device: bytes.readLittleEndian(at: 8) as UInt64, inode: bytes.readLittleEndian(at: 16) as UInt64), coveredEnd: Int(coveredEnd),
            lastRecord: lastOffset == .max ? nil : (Int(lastOffset), (bytes.readLittleEndian(at: 40) as UInt32)))
        return (binding, pages, (bytes.readLittleEndian(at: 52) as UInt32))
    }

    /// Where the table puts the archive whose name hashes to `hash`: one page read (4 KiB) and a
    /// binary search. O(log n) in memory, one `pread`.
    func lookup(_ hash: UInt64) -> Lookup {
        // The last page whose first hash is at most `hash`.
        var low = 0
        var high = firstHashes.count
        while low < high {
            let middle = (low + high) / 2
            if firstHashes[middle] <= hash { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return .absent }
        let page = low - 1
        var bytes = [UInt8](repeating: 0, count: Self.pageSize)
        let offset = Self.headerLength + firstHashes.count * 8 + page * Self.pageSize
        guard bytes.withUnsafeMutableBytes({ SystemCalls.preadFully(handle.descriptor, into: $0, at: offset) }) == Self.pageSize else { return .damaged }
        let count = Int(bytes.readLittleEndian(at: 0) as UInt16)
        guard count > 0, count <= Self.entriesPerPage,
            bytes.withUnsafeBytes({
                CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[Self.pageHeaderLength..<Self.pageHeaderLength + count * Self.entryLength]))
            }) == (bytes.readLittleEndian(at: 4) as UInt32),
            (bytes.readLittleEndian(at: Self.pageHeaderLength) as UInt64) == firstHashes[page]
        else { return .damaged }
        var lowEntry = 0
        var highEntry = count
        while lowEntry < highEntry {
            let middle = (lowEntry + highEntry) / 2
            let at = Self.pageHeaderLength + middle * Self.entryLength
            let found = bytes.readLittleEndian(at: at) as UInt64
            if found == hash {
                let length = bytes.readLittleEndian(at: at + 12) as UInt32
                let redated = bytes.readLittleEndian(at: at + 16) as UInt32
                let entry = Entry(
                    hash: hash, offset: Int(bytes.readLittleEndian(at: at + 8) as UInt32), bodyLength: Int(length & ~Self.damagedFlag),
                    isDamaged: length & Self.damagedFlag != 0, redatedAt: redated == Self.notRedated ? nil : Int(redated))
                guard entry.offset + PackRecord.prefixLength + entry.bodyLength <= binding.coveredEnd,
                    entry.redatedAt.map({ $0 > entry.offset && $0 + PackRecord.prefixLength <= binding.coveredEnd }) ?? true
                else { return .damaged }
                return .found(entry)
            }
            if found < hash { lowEntry = middle + 1 } else { highEntry = middle }
        }
        return .absent
    }

    // MARK: - Writing

    /// The bytes of a checkpoint of `entries` (any order; one per hash) bound to `binding`.
    static func bytes(of entries: [Entry], binding: Binding) -> [UInt8] {
        let sorted = entries.sorted { $0.hash < $1.hash }
        let pages = (sorted.count + entriesPerPage - 1) / entriesPerPage
        var directory: [UInt8] = []
        directory.reserveCapacity(pages * 8)
        var body = [UInt8](repeating: 0, count: pages * pageSize)
        for page in 0..<pages {
            let slice = sorted[(page * entriesPerPage)..<min((page + 1) * entriesPerPage, sorted.count)]
            directory.appendLittleEndian(slice.first!.hash)
            let base = page * pageSize
            var entryBytes: [UInt8] = []
            entryBytes.reserveCapacity(slice.count * entryLength)
            entryBytes.appendFields(count: slice.count * entryLength) { fields in
                for entry in slice {
                    fields.put(entry.hash)
                    fields.put(UInt32(entry.offset))
                    fields.put(UInt32(entry.bodyLength) | (entry.isDamaged ? damagedFlag : 0))
                    fields.put(entry.redatedAt.map { UInt32($0) } ?? notRedated)
                }
            }
            var pageHeader: [UInt8] = []
            pageHeader.appendLittleEndian(UInt16(slice.count))
            pageHeader.appendLittleEndian(UInt16(0))
            entryBytes.withUnsafeBytes { pageHeader.appendLittleEndian(CRC32.checksum($0)) }
            body.replaceSubrange(base..<base + pageHeaderLength, with: pageHeader)
            body.replaceSubrange(base + pageHeaderLength..<base + pageHeaderLength + entryBytes.count, with: entryBytes)
        }
        var header: [UInt8] = magic
        header.appendLittleEndian(formatVersion)
        header.appendLittleEndian(binding.pack.device)
        header.appendLittleEndian(binding.pack.inode)
        header.appendLittleEndian(UInt64(binding.coveredEnd))
        header.appendLittleEndian(binding.lastRecord.map { UInt64($0.offset) } ?? .max)
        header.appendLittleEndian(binding.lastRecord?.checksum ?? 0)
        header.appendLittleEndian(UInt32(sorted.count))
        header.appendLittleEndian(UInt32(pages))
        directory.withUnsafeBytes { header.appendLittleEndian(CRC32.checksum($0)) }
        header.appendLittleEndian(UInt32(0))
        header.withUnsafeBytes { header.appendLittleEndian(CRC32.checksum($0)) }
        return header + directory + body
    }

    /// Writes `bytes` as `directory`'s checkpoint, over the old one in place: no temporary
    /// file and no rename (a rename makes the file system write the file out at once, a cost
    /// every few hundred writes would pay). A reader meets the old checkpoint, the new one, or
    /// pages of both: every page is checked against its checksum, the directory and the
    /// covered length, so a mix costs it a read of the whole pack, never an answer; a crash
    /// midway leaves a checkpoint that fails its checks, written again by the next writer. A
    /// link or special file planted at the name is removed first.
    ///
    /// - Throws: `SystemError` when it cannot be opened or written.
    static func write(_ bytes: [UInt8], in directory: String, fileSystem: FileSystem) throws(SystemError) {
        let path = CachePath(directory: directory, name: name)
        let display = fileSystem.displayPath(path)
        guard let held = try fileSystem.openDirectory(of: path, create: false) else {
            throw SystemError(operation: "open", errorNumber: ENOENT, path: display)
        }
        defer { if held != fileSystem.version.descriptor { SystemCalls.close(held) } }
        try fileSystem.inject(.write, display)
        var descriptor = SystemCalls.openat(held, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        if descriptor < 0, fileSystem.removeIfUnsafe(in: held, name, display) {
            descriptor = SystemCalls.openat(held, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        }
        guard descriptor >= 0 else { throw .last("open", display) }
        defer { SystemCalls.close(descriptor) }
        var info = stat()
        guard SystemCalls.fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw SystemError(operation: "open", errorNumber: EINVAL, path: display)
        }
        fileSystem.protection?.apply(toDescriptor: descriptor)
        try fileSystem.writeAll(descriptor, bytes, display)
        guard SystemCalls.ftruncate(descriptor, off_t(bytes.count)) == 0 else { throw .last("ftruncate", display) }
    }
}
