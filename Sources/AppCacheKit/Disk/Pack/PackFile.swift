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
        let display = fileSystem.displayPath(path)
        let held: Int32?
        do {
            held = try fileSystem.openDirectory(of: path, create: writable)
        } catch where !writable {
            return nil
        }
        guard let held else { return nil }
        defer { close(held) }
        let flags = writable ? O_RDWR | O_APPEND | O_CREAT : O_RDONLY
        for attempt in 0..<2 {
            let descriptor = openat(held, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
            var info = stat()
            if descriptor >= 0 {
                if fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
                    if writable { fileSystem.protection?.apply(toDescriptor: descriptor) }
                    return (PackFile(descriptor: descriptor, number: FileID(info), isWritable: writable), Int(clamping: info.st_size))
                }
                close(descriptor)
            } else if errno == ENOENT {
                return nil
            }
            guard writable, attempt == 0 else { break }
            if !fileSystem.removeIfUnsafe(in: held, name, display) {
                // A directory planted where the pack belongs: ours to clear, following no link
                // inside it.
                var planted = stat()
                guard fstatat(held, name, &planted, AT_SYMLINK_NOFOLLOW) == 0, planted.st_mode & S_IFMT == S_IFDIR else { break }
                try fileSystem.removeTree(in: held, name, display)
                fileSystem.onDamage(display, "a directory where the pack belongs")
            }
        }
        if writable { throw SystemError(operation: "open", errorNumber: EINVAL, path: display) }
        return nil
    }

    /// Which file is at `directory`'s pack path now, and its size: one `fstatat`. The path is
    /// resolved from the version directory, so a linked user directory is followed here: the
    /// answer is only ever compared with a pack opened safely (``open(in:writable:fileSystem:)``).
    static func current(in directory: String, fileSystem: FileSystem) -> (number: FileID, size: Int)? {
        var info = stat()
        let relative = directory + "/" + name
        guard fstatat(fileSystem.version.descriptor, relative, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFREG else {
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
    /// into the index as damage, naming the archive whose record they begin when
    /// `identify` still finds its name in the archive header after the prefix.
    ///
    /// - Parameter identify: the hash of the file name of the archive whose bytes (header
    ///   first) are given, or `nil` when they are no archive's.
    func scan(
        into index: inout PackIndex, upTo size: Int, maximumBodyLength: Int, identify: (UnsafeRawBufferPointer) -> UInt64? = { _ in nil }
    ) -> Stop {
        guard size <= Self.maximumSize else { return .damaged("the pack is larger than any pack can be") }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while index.end < size {
            let start = index.end
            let filled = read(into: buffer, count: min(Self.chunkSize, size - start), at: start)
            guard filled > 0 else { return filled < 0 ? .damaged("the pack cannot be read") : .incomplete }
            var position = 0
            scanning: while position < filled {
                switch PackRecord.parse(UnsafeRawBufferPointer(rebasing: buffer[position..<filled]), maximumBodyLength: maximumBodyLength) {
                case .damaged(let reason):
                    let damaged = start + position
                    guard let next = nextRecord(after: damaged, upTo: size, maximumBodyLength: maximumBodyLength) else {
                        return .damaged(reason)
                    }
                    index.skipDamage(from: damaged, to: next, reason: reason, naming: name(ofDamagedRecordAt: damaged, before: next, identify))
                    break scanning
                case .incomplete:
                    // The prefix goes on in the next chunk (read from it), or the pack ends.
                    if start + filled >= size { return .incomplete }
                    break scanning
                case .record(let record):
                    guard start + position + record.length <= size else { return .incomplete }
                    index.apply(record, at: start + position)
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

    /// The hash of the archive whose record begins at `damaged` (its prefix damaged, its body
    /// perhaps whole), from the header where its body would start; `nil` when none reads there.
    private func name(ofDamagedRecordAt damaged: Int, before next: Int, _ identify: (UnsafeRawBufferPointer) -> UInt64?) -> UInt64? {
        let bodyStart = damaged + PackRecord.prefixLength
        let count = min(next - bodyStart, 4096)
        guard count > 0 else { return nil }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 16)
        defer { buffer.deallocate() }
        guard read(into: buffer, count: count, at: bodyStart) == count else { return nil }
        return identify(UnsafeRawBufferPointer(buffer))
    }

    /// Reads `count` bytes at `offset` into `buffer`, retrying interrupted reads.
    ///
    /// - Returns: the bytes read (fewer when the file ends first), or -1 on an error.
    func read(into buffer: UnsafeMutableRawBufferPointer, count: Int, at offset: Int) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var filled = 0
        while filled < count {
            let got = pread(descriptor, base + filled, count - filled, off_t(offset + filled))
            if got < 0 && errno == EINTR { continue }
            if got <= 0 { return got < 0 ? -1 : filled }
            filled += got
        }
        return filled
    }
}
