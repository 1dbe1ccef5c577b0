import Foundation

/// The disk index on disk: an append-only journal of ``DiskIndex/Record`` lines in the version
/// directory, each line prefixed with its CRC-32, compacted when it grows.
///
/// Appending costs one `write` per batch of changes (the cache batches them per flush, write or
/// removal). Loading replays the lines in order, which restores sizes, pins and the
/// least-recently-used order across relaunches. A torn last line (a crash mid-append) is
/// dropped; any other damage, or a missing journal, makes the caller rebuild the index from the
/// archives themselves: the journal is never a reason to touch an archive.
struct IndexJournal: Sendable {
    /// The journal's file name in the version directory; hidden, so never taken for an archive.
    static let fileName = ".index"

    let path: String
    let fileSystem: FileSystem

    /// The records of the journal, or `nil` when it is missing or damaged.
    func load() -> [DiskIndex.Record]? {
        guard let contents = try? fileSystem.read(path) else { return nil }
        guard let text = String(data: contents.bytes, encoding: .utf8) else { return nil }
        let endsCleanly = text.hasSuffix("\n")
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        var records: [DiskIndex.Record] = []
        for (number, line) in lines.enumerated() {
            guard let record = Self.record(from: line) else {
                // Only the last line may be torn, and only if the file does not end cleanly.
                if number == lines.count - 1 && !endsCleanly { break }
                return nil
            }
            records.append(record)
        }
        // Complete only if it starts where a rebuild or compaction started it.
        return records.first == .begin ? records : nil
    }

    /// Appends `records`.
    func append(_ records: [DiskIndex.Record]) throws(SystemError) {
        guard !records.isEmpty else { return }
        try fileSystem.append(Data(records.map(Self.line).joined().utf8), to: path)
    }

    /// Replaces the journal with `records`, atomically.
    func rewrite(_ records: [DiskIndex.Record], in directory: String) throws(SystemError) {
        try fileSystem.writeAtomically(
            header: [], payload: Data(records.map(Self.line).joined().utf8), to: path, in: directory,
            modificationDate: Date())
    }

    static func line(_ record: DiskIndex.Record) -> String {
        let body = record.line
        let checksum = String(CRC32.checksum(Array(body.utf8)), radix: 16)
        return String(repeating: "0", count: 8 - checksum.count) + checksum + " " + body + "\n"
    }

    static func record(from line: Substring) -> DiskIndex.Record? {
        guard line.count > 9, line.dropFirst(8).first == " ", let checksum = UInt32(line.prefix(8), radix: 16) else { return nil }
        let body = line.dropFirst(9)
        guard CRC32.checksum(Array(body.utf8)) == checksum else { return nil }
        return DiskIndex.Record(line: body)
    }
}
