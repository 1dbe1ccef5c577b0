import Foundation

/// A small file beside the archives that is not an archive: the signed-in user, the
/// invalidations, the model mismatches, a user's outbox. Each room keeps its format (how the
/// bytes read and what they mean); the disk layer knows only that it is bytes to read whole,
/// to replace atomically or to append to, inside a batch.
///
/// Like every byte under the root such a file is untrusted when read: a file longer than
/// ``maximumSize``, a link or a special file reads as nothing (``DiskStore/readRecordFile(at:maximumSize:)``),
/// and each format skips what it cannot have written.
protocol RootRecordFile {
    /// The most bytes the file may take; a longer file is damage, read as nothing, and nothing
    /// is allocated for its claim.
    static var maximumSize: Int { get }

    /// The file's bytes.
    func encoded() -> Data
}

/// What reading a root record file found, with the file's identity (for a room that keeps a
/// copy and reads again only when the file changed).
struct RecordFileRead {
    /// The bytes; empty when there is no file, it is not a regular file or it is too long.
    var bytes = Data()
    /// Which file was read; `nil` when there is none.
    var identity: FileVersion?
    /// Whether the file is longer than the format allows (read as empty, and damage).
    var isTooLarge = false
    /// What was there instead of a regular file (a link, which was removed, a FIFO, ...).
    var unsafe: String?
}

extension DiskStore {
    /// The whole of the root record file at `path`, or `nil` when there is none, it is a link
    /// or a special file, it cannot be read, or it is longer than `maximumSize`.
    func readRecordFile(at path: CachePath, maximumSize: Int) -> Data? {
        fileSystem.readSmallFile(path, maximumSize: maximumSize)
    }

    /// The root record file at `path` with its identity, or what stood in its place.
    ///
    /// - Throws: `SystemError` when the file exists but cannot be read.
    func readRecordFileWithIdentity(at path: CachePath, maximumSize: Int) throws(SystemError) -> RecordFileRead {
        try fileSystem.withFileForReading(path) { (opened) throws(SystemError) -> RecordFileRead in
            switch opened {
            case .missing:
                return RecordFileRead()
            case .unsafe(let what):
                return RecordFileRead(unsafe: what)
            case .file(let file):
                guard file.size <= maximumSize else { return RecordFileRead(identity: file.identity, isTooLarge: true) }
                return RecordFileRead(bytes: try file.read(count: file.size, at: 0), identity: file.identity)
            }
        }
    }
}
