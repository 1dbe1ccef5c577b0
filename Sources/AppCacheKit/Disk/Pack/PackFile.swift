import Foundation
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One user directory's pack, `<user dir>/.pack`, held open: the small archives of the
/// directory, appended one record after another (``PackRecord``) rather than each written as a
/// file of its own.
///
/// Why: a file per small collection costs the file system an inode, a directory entry and at
/// least one block (4 KiB for a 350-byte archive), and replacing it means creating a file,
/// writing it, dating it and renaming it over the old one (which makes ext4 and APFS start
/// writing it out at once). An append into a file held open costs one `write`, dirties only the
/// pages it touches and takes no more space than its bytes: what SQLite's write-ahead log and
/// log-structured stores do.
///
/// Records are only ever appended, under the lock file's lock (``DiskWriter``); a pack is
/// replaced whole by its compaction (``PackTable``), so a reader holding an old one open
/// reads a consistent, older pack. The pack is untrusted input: it is read in bounded chunks,
/// every prefix checked (``PackRecord/parse(_:maximumBodyLength:)``); bytes that are no record
/// (damage) are skipped to the next record that checks, so they cost only what they held; a
/// read stops at a record that is not whole (an append under way, or a crash's), and a writer
/// cuts such a tail off (or garbage after the last record) before appending, never a record
/// that checks.
///
/// Thread safety: `Sendable`; the descriptor is closed when the last copy goes
/// (``DescriptorHandle``), so a read holding one never sees it closed or reused.
struct PackFile: Sendable {
    /// The file name of a user directory's pack.
    static let name = ".pack"
    /// The largest pack read: a bigger one is damage. Writers keep below it (a pack holds at
    /// most twice its live archives plus ``PackTable/minimumCompactionWaste``, and archives that
    /// would take it past this are written as files of their own).
    static let maximumSize = 1 << 30
    /// The size of one read while scanning.
    static let chunkSize = 64 << 10
    /// The size of the first read of a scan.
    static let firstChunkSize = 4 << 10

    private let handle: DescriptorHandle
    /// Which file this is: a compaction renames another over it.
    let number: FileID
    /// Whether it was opened for appending.
    let isWritable: Bool

    /// Takes over `descriptor`: it is closed when the last copy of the pack goes.
    init(descriptor: Int32, number: FileID, isWritable: Bool) {
        handle = DescriptorHandle(descriptor: descriptor)
        self.number = number
        self.isWritable = isWritable
    }

    var descriptor: Int32 { handle.descriptor }

    /// The path of `directory`'s pack.
    static func path(in directory: String) -> CachePath {
        CachePath(directory: directory, name: name)
    }

    /// Opens the pack of `directory`: never following a link, never blocking, refusing what is
    /// not a regular file (a writer removes a link or special file planted there).
    ///
    /// - Parameters:
    ///   - writable: opens it for appending, creating it (and the directory) if missing.
    /// - Returns: the pack and its size; `nil` when there is none (or, for a reader, when
    ///   something else is there).
    /// - Throws: `SystemError` when a writer cannot open or create it.
    static func open(in directory: String, writable: Bool, fileSystem: FileSystem) throws(SystemError) -> (PackFile, size: Int)? {
        let path = path(in: directory)
        // Named for errors and reports only: not built on the way to an open pack.
        var display: String { fileSystem.displayPath(path) }
        if !writable {
            switch openForReading(in: directory, fileSystem: fileSystem) {
            case .opened(let pack, let size): return (pack, size)
            case .missing: return nil
            case .fallBack: break
            }
        }
        let held: Int32?
        do {
            held = try fileSystem.openDirectory(of: path, create: writable)
        } catch where !writable {
            return nil
        }
        guard let held else { return nil }
        defer { SystemCalls.close(held) }
        let flags = writable ? O_RDWR | O_APPEND | O_CREAT : O_RDONLY
        for attempt in 0..<2 {
            let descriptor = SystemCalls.openat(held, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
            var info = stat()
            if descriptor >= 0 {
                if SystemCalls.fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
                    if writable { fileSystem.protection?.apply(toDescriptor: descriptor) }
                    return (PackFile(descriptor: descriptor, number: FileID(info), isWritable: writable), Int(clamping: info.st_size))
                }
                SystemCalls.close(descriptor)
            } else if errno == ENOENT {
                return nil
            }
            guard writable, attempt == 0 else { break }
            if !fileSystem.removeIfUnsafe(in: held, name, display) {
                // A directory planted where the pack belongs: ours to clear, following no link
                // inside it.
                var planted = stat()
                guard SystemCalls.fstatat(held, name, &planted) == 0, planted.st_mode & S_IFMT == S_IFDIR else { break }
                try fileSystem.removeTree(in: held, name, display)
                fileSystem.onDamage(display, "a directory where the pack belongs")
            }
        }
        if writable { throw SystemError(operation: "open", errorNumber: EINVAL, path: display) }
        return nil
    }

    /// What a reader's one-call open of a pack found.
    private enum ReaderOpen {
        case opened(PackFile, size: Int)
        /// No pack (or no user directory), or something other than a regular file there.
        case missing
        /// A link in the way, or a system that cannot open so.
        case fallBack
    }

    /// A reader's open of `directory`'s pack in one system call, from the version directory,
    /// following no link on the way (``SystemCalls/openBeneath(_:_:_:_:)``): what the directory's
    /// own open and close would cost again on every first read of a pack. On `.fallBack`,
    /// ``open(in:writable:fileSystem:)`` opens the directory first, as a writer does, and deals
    /// with the link.
    private static func openForReading(in directory: String, fileSystem: FileSystem) -> ReaderOpen {
        let descriptor = SystemCalls.openBeneath(
            fileSystem.version.descriptor, directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return errno == ENOENT ? .missing : .fallBack }
        var info = stat()
        guard SystemCalls.fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            SystemCalls.close(descriptor)
            return .missing
        }
        return .opened(PackFile(descriptor: descriptor, number: FileID(info), isWritable: false), size: Int(clamping: info.st_size))
    }

    /// Which file is at `directory`'s pack path now, and its size: one `fstatat`. The path is
    /// resolved from the version directory, so a linked user directory is followed here: the
    /// answer is only ever compared with a pack opened safely (``open(in:writable:fileSystem:)``).
    static func current(in directory: String, fileSystem: FileSystem) -> (number: FileID, size: Int)? {
        var info = stat()
        guard SystemCalls.fstatat(fileSystem.version.descriptor, directory, name, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            return nil
        }
        return (FileID(info), Int(clamping: info.st_size))
    }

    /// Where reading the pack stopped.
    enum Stop: Equatable {
        /// At its end, every record whole (damage between records skipped).
        case end
        /// At a record not yet (or never) wholly written: an append under way or a crash's.
        case incomplete
        /// At bytes that are no record, with no record that checks after them: garbage at the
        /// end of the pack (or an append under way that a reader saw half copied), and why.
        case damaged(String)
    }

    /// Reads the records from `index.end` up to `size` into `index`, in chunks of
    /// ``chunkSize``; the body of a record is not read.
    ///
    /// Bytes that are no record (a prefix that fails its checksum, a kind or a length that no
    /// record has) cost only themselves: reading goes on at the next offset where a prefix
    /// checks and its record fits in the pack, as log-structured stores recover their logs (the
    /// magic and the prefix's CRC-32 make a false match vanishingly rare, and the name hash,
    /// sequence and archive header check a record again when it is read). The skipped bytes go
    /// into the index as damage, naming the archives whose records they held as far as their
    /// damaged prefixes or their archive headers still tell (see
    /// ``names(inDamagedStretch:before:maximumBodyLength:_:)``).
    ///
    /// - Parameter identify: the hash of the file name of the archive whose bytes (header
    ///   first) are given, or `nil` when they are no archive's.
    func scan(
        into index: inout PackIndex, upTo size: Int, maximumBodyLength: Int, identify: (UnsafeRawBufferPointer) -> UInt64? = { _ in nil }
    ) -> Stop {
        var unwanted: ReadBody?
        return scan(into: &index, upTo: size, maximumBodyLength: maximumBodyLength, identify: identify, keeping: nil, &unwanted)
    }

    /// The body of an archive's record as a scan read it: the bytes from `offset`.
    struct ReadBody {
        /// Where the body is in the pack.
        var offset: Int
        var bytes: [UInt8]
    }

    /// ``scan(into:upTo:maximumBodyLength:identify:)``, keeping in `kept` the body of the last
    /// archive record it read whose name hashes to `wanted`, when the scan's reads held the body
    /// whole: the read that follows a lookup then needs no `pread` of its own.
    func scan(
        into index: inout PackIndex, upTo size: Int, maximumBodyLength: Int, identify: (UnsafeRawBufferPointer) -> UInt64?,
        keeping wanted: UInt64?, _ kept: inout ReadBody?
    ) -> Stop {
        guard size <= Self.maximumSize else { return .damaged("the pack is larger than any pack can be") }
        // The first read is small: a pack of a few records, some of them large, is read for its
        // prefixes without copying the large bodies (the next read starts after a record). Its
        // buffer is as small: a fresh 64 KiB could take the heap past its top, and a first read
        // would pay for the pages.
        var chunk = Self.firstChunkSize
        var buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        while index.end < size {
            if buffer.count < chunk {
                buffer.deallocate()
                buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
            }
            let start = index.end
            let filled = read(into: buffer, count: min(chunk, size - start), at: start)
            chunk = Self.chunkSize
            guard filled > 0 else { return filled < 0 ? .damaged("the pack cannot be read") : .incomplete }
            var position = 0
            scanning: while position < filled {
                switch PackRecord.parse(UnsafeRawBufferPointer(rebasing: buffer[position..<filled]), maximumBodyLength: maximumBodyLength) {
                case .damaged(let reason):
                    let damaged = start + position
                    guard let next = nextRecord(after: damaged, upTo: size, maximumBodyLength: maximumBodyLength) else {
                        // The last record, whole but for a damaged byte of its prefix, is damage,
                        // not a torn append: named, and kept (a writer cuts only a torn tail), so
                        // that its collection goes on missing rather than reading an older record.
                        if let record = correctedRecord(at: damaged, maximumBodyLength: maximumBodyLength), damaged + record.length == size {
                            index.skipDamage(from: damaged, to: size, reason: reason, naming: [record.nameHash])
                            return .end
                        }
                        return .damaged(reason)
                    }
                    index.skipDamage(
                        from: damaged, to: next, reason: reason,
                        naming: names(inDamagedStretch: damaged, before: next, maximumBodyLength: maximumBodyLength, identify))
                    break scanning
                case .incomplete:
                    // The prefix goes on in the next chunk (read from it), or the pack ends.
                    if start + filled >= size { return .incomplete }
                    break scanning
                case .record(let record):
                    guard start + position + record.length <= size else { return .incomplete }
                    index.apply(record, at: start + position)
                    if record.nameHash == wanted, record.kind == .archive {
                        let body = position + PackRecord.prefixLength
                        kept = position + record.length <= filled
                            ? ReadBody(offset: start + body, bytes: Array(buffer[body..<(position + record.length)])) : nil
                    }
                    position += record.length
                }
            }
        }
        return .end
    }

    /// The offset of the first record after `damaged` whose prefix checks and whose record
    /// fits within `size`; `nil` when there is none.
    private func nextRecord(after damaged: Int, upTo size: Int, maximumBodyLength: Int) -> Int? {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var from = damaged + 1
        while from + PackRecord.prefixLength <= size {
            let filled = read(into: buffer, count: min(Self.chunkSize, size - from), at: from)
            guard filled >= PackRecord.prefixLength else { return nil }
            var position = 0
            while position + PackRecord.prefixLength <= filled {
                if buffer[position] == PackRecord.magic.0, buffer[position + 1] == PackRecord.magic.1,
                    case .record(let record) = PackRecord.parse(
                        UnsafeRawBufferPointer(rebasing: buffer[position..<position + PackRecord.prefixLength]),
                        maximumBodyLength: maximumBodyLength),
                    from + position + record.length <= size
                {
                    return from + position
                }
                position += 1
            }
            // The next chunk starts where a prefix could still begin unseen.
            from += position
        }
        return nil
    }

    /// The record whose prefix at `offset` took one damaged byte, as it was before
    /// (``PackRecord/corrected(_:maximumBodyLength:)``); `nil` when no single change makes it check.
    private func correctedRecord(at offset: Int, maximumBodyLength: Int) -> PackRecord? {
        var prefix = [UInt8](repeating: 0, count: PackRecord.prefixLength)
        let filled = prefix.withUnsafeMutableBytes { read(into: $0, count: PackRecord.prefixLength, at: offset) }
        guard filled == PackRecord.prefixLength else { return nil }
        return prefix.withUnsafeBytes { PackRecord.corrected($0, maximumBodyLength: maximumBodyLength) }
    }

    /// The most bytes of a stretch of damage read to name the records it held.
    private static let maximumNamedStretch = 4 << 20

    /// The hashes of the archives whose records the damaged stretch from `damaged` to `next`
    /// held, as far as anything there still names them:
    ///
    /// - record by record from the start, through each prefix as it was before one of its
    ///   bytes was damaged (``PackRecord/corrected(_:maximumBodyLength:)``), which gives the
    ///   next record's start too: a run of records with damaged prefixes is named whole;
    /// - where no prefix can be corrected, the archive header after it (`identify`), the name
    ///   hash the damaged prefix still holds, and then every record prefix magic and archive
    ///   header magic further in the stretch, each likewise.
    ///
    /// A hash that names no archive the pack holds costs nothing; a record destroyed so
    /// completely that nothing names it (a zeroed page over its prefix and header) cannot be
    /// told from garbage.
    private func names(
        inDamagedStretch damaged: Int, before next: Int, maximumBodyLength: Int, _ identify: (UnsafeRawBufferPointer) -> UInt64?
    ) -> [UInt64] {
        let count = min(next - damaged, Self.maximumNamedStretch)
        guard count > 0 else { return [] }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 16)
        defer { buffer.deallocate() }
        guard read(into: buffer, count: count, at: damaged) == count else { return [] }
        let bytes = UnsafeRawBufferPointer(buffer)
        var names: [UInt64] = []
        var offset = 0
        while offset + PackRecord.prefixLength <= count,
            let record = PackRecord.corrected(UnsafeRawBufferPointer(rebasing: bytes[offset...]), maximumBodyLength: maximumBodyLength)
        {
            names.append(record.nameHash)
            offset += record.length
        }
        guard offset + PackRecord.prefixLength <= count else { return names }
        if let hash = identify(UnsafeRawBufferPointer(rebasing: bytes[(offset + PackRecord.prefixLength)...])) { names.append(hash) }
        for position in offset..<count - 3 {
            if bytes[position] == PackRecord.magic.0, bytes[position + 1] == PackRecord.magic.1, position + 16 <= count {
                var hash: UInt64 = 0
                withUnsafeMutableBytes(of: &hash) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[position + 8..<position + 16])) }
                names.append(UInt64(littleEndian: hash))
            } else if position == offset, position + 16 <= count {
                // The prefix at the start of the stretch, whatever damaged its magic.
                var hash: UInt64 = 0
                withUnsafeMutableBytes(of: &hash) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[position + 8..<position + 16])) }
                names.append(UInt64(littleEndian: hash))
            }
            let startsHeader = bytes[position] == ArchiveHeader.magic[0] && bytes[position + 1] == ArchiveHeader.magic[1]
                && bytes[position + 2] == ArchiveHeader.magic[2] && bytes[position + 3] == ArchiveHeader.magic[3]
            if position > offset, startsHeader || PackedArchive.isPacked(UnsafeRawBufferPointer(rebasing: bytes[position...])),
                let hash = identify(UnsafeRawBufferPointer(rebasing: bytes[position...]))
            {
                names.append(hash)
            }
        }
        return names
    }

    /// The record whose prefix is at `offset`, if a prefix that checks is there, and the
    /// prefix's own checksum (its bytes 32..<36): one `pread` of 36 bytes.
    func record(at offset: Int) -> (record: PackRecord, checksum: UInt32)? {
        var bytes = [UInt8](repeating: 0, count: PackRecord.prefixLength)
        guard bytes.withUnsafeMutableBytes({ read(into: $0, count: PackRecord.prefixLength, at: offset) }) == PackRecord.prefixLength,
            case .record(let record) = bytes.withUnsafeBytes({ PackRecord.parse($0, maximumBodyLength: PackTable.maximumBodyLength) })
        else { return nil }
        return (record, bytes.readLittleEndian(at: 32))
    }

    /// Reads `count` bytes at `offset` into `buffer`, retrying interrupted reads.
    ///
    /// - Returns: the bytes read (fewer when the file ends first), or -1 on an error.
    func read(into buffer: UnsafeMutableRawBufferPointer, count: Int, at offset: Int) -> Int {
        SystemCalls.preadFully(descriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<count]), at: offset)
    }
}
