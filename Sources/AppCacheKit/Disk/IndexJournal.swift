import Foundation

/// The disk index on disk: an append-only journal of ``DiskIndex/Record`` lines in the version
/// directory (`.index`), each line prefixed with its CRC-32, compacted when it grows.
///
/// Every process sharing the version directory appends to it (through ``JournalAppender``), a
/// `write` per step of a batch, while holding the write lock (``ProcessCoordinator``), and each
/// keeps a ``Cursor``: where it has read
/// up to. Before a batch, a process reads what others appended since (``read(after:)``), so its
/// index and its view of unsettled intents stay exact without ever listing a directory. A
/// compaction replaces the file: a cursor on the old file then reads the new one from its start.
///
/// The journal is untrusted input. It is read in bounded chunks whatever its size; a line that
/// fails its checksum, or names a path the layout could not have made, makes the whole journal
/// damaged, and the caller rebuilds it from the archives themselves: the journal is never a
/// reason to touch a file. A torn last line (a process killed mid-append) is not read; the next
/// writer cuts it off (``truncate(to:)``) before appending.
struct IndexJournal: Sendable {
    let fileSystem: FileSystem

    static var path: CachePath { CacheLayout.journalPath }

    /// How far one process has read the journal.
    struct Cursor: Equatable {
        /// Which file was read: a compaction replaces it.
        var file: FileID
        /// The byte after the last complete line read.
        var offset: Int
        /// The number of complete lines up to `offset`.
        var lines: Int
    }

    /// What reading the journal found.
    enum Tail {
        /// The records after the cursor (all of them when `fromStart`), and the new cursor.
        /// `tornBytes` counts bytes after the last complete line: a torn append.
        case records([DiskIndex.Record], cursor: Cursor, fromStart: Bool, tornBytes: Int)
        case missing
        case damaged(String)
    }

    /// The size of one read: the journal is parsed in chunks, never held whole. A chunk is
    /// briefly held twice (as read, and in the line buffer), so this bounds what reading even a
    /// huge journal costs, on a background thread, at about half a megabyte.
    static let chunkSize = 256 << 10
    /// The longest line the journal may hold: a longer one is damage.
    static let maximumLineLength = 4096

    /// Reads the records after `cursor`, or every record when `cursor` is `nil` or names a file
    /// that is no longer there (a compaction replaced it).
    func read(after cursor: Cursor?) -> Tail {
        do {
            return try fileSystem.withFileForReading(Self.path) { opened in
                switch opened {
                case .missing: .missing
                case .unsafe(let what): .damaged("the journal is \(what)")
                case .file(let file): Self.tail(of: file, after: cursor)
                }
            }
        } catch {
            return .damaged("the journal cannot be opened: \(error)")
        }
    }

    /// The records of the open journal `file` after `cursor` (see ``read(after:)``).
    private static func tail(of file: FileSystem.ReadableFile, after cursor: Cursor?) -> Tail {
        let fromStart = cursor?.file != file.number || cursor!.offset > file.size
        var offset = fromStart ? 0 : cursor!.offset
        var lines = fromStart ? 0 : cursor!.lines
        var records: [DiskIndex.Record] = []
        var pending: [UInt8] = []
        while offset + pending.count < file.size {
            let start = offset + pending.count
            let chunk: Data
            do {
                chunk = try file.read(count: min(chunkSize, file.size - start), at: start)
            } catch {
                return .damaged("the journal cannot be read: \(error)")
            }
            if chunk.isEmpty { break }
            pending.append(contentsOf: chunk)
            var lineStart = 0
            while let newline = pending[lineStart...].firstIndex(of: UInt8(ascii: "\n")) {
                guard let record = Self.record(from: pending[lineStart..<newline]) else {
                    return .damaged("line \(lines + 1) of the journal is not a valid record")
                }
                if fromStart && lines == 0 && record != .begin {
                    return .damaged("the journal does not start with its header line")
                }
                records.append(record)
                lines += 1
                lineStart = newline + 1
            }
            offset += lineStart
            pending.removeFirst(lineStart)
            if pending.count > maximumLineLength {
                return .damaged("the journal holds a line longer than \(maximumLineLength) bytes")
            }
        }
        if fromStart && lines == 0 {
            return .damaged(file.size == 0 ? "the journal is empty" : "the journal does not start with its header line")
        }
        return .records(records, cursor: Cursor(file: file.number, offset: offset, lines: lines), fromStart: fromStart, tornBytes: pending.count)
    }

    /// Starts a new journal holding `records` (the first is ``DiskIndex/Record/begin``): written
    /// to `temporaryName` and renamed over the old one in one step.
    func rewrite(_ records: [DiskIndex.Record], temporaryName: String) throws(SystemError) -> Cursor {
        let bytes = Self.bytes(records)
        _ = try fileSystem.writeAtomically(
            header: [], payload: bytes, to: Self.path, temporaryName: temporaryName, modificationDate: Date())
        guard case .records(_, let cursor, _, _) = read(after: nil) else {
            throw SystemError(operation: "read", errorNumber: EIO, path: fileSystem.displayPath(Self.path))
        }
        return cursor
    }

    /// Cuts a torn last line off.
    func truncate(to offset: Int) throws(SystemError) {
        try fileSystem.truncate(Self.path, to: offset)
    }

    static func bytes(_ records: [DiskIndex.Record]) -> Data {
        Data(records.map(line).joined().utf8)
    }

    static func line(_ record: DiskIndex.Record) -> String {
        let body = record.line
        let checksum = String(CRC32.checksum(Array(body.utf8)), radix: 16)
        return String(repeating: "0", count: 8 - checksum.count) + checksum + " " + body + "\n"
    }

    static func record(from line: some Collection<UInt8>) -> DiskIndex.Record? {
        guard line.count > 9, line.count <= maximumLineLength else { return nil }
        let bytes = Array(line)
        guard bytes[8] == UInt8(ascii: " "), let text = UTF8Text.string(validating: bytes),
            let checksum = UInt32(text.prefix(8), radix: 16)
        else { return nil }
        let body = bytes[9...]
        guard CRC32.checksum(Array(body)) == checksum else { return nil }
        return DiskIndex.Record(line: text.dropFirst(9))
    }
}
