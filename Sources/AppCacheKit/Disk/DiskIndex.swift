/// What the disk holds, for usage accounting and the disk budget: every archive's size and pin,
/// in least-recently-used order, without listing a directory.
///
/// Paths are relative to the version directory (`user-alice/%4denu%49tems.archive`). Pinned and
/// unpinned archives keep separate orders, so the next archive to remove is always found in
/// O(1): the least recently used unpinned one, else the least recently used pinned one.
struct DiskIndex {
    struct Entry: Equatable {
        var size: Int
        var isPinned: Bool
    }

    /// One change, as the journal records it.
    enum Record: Equatable {
        /// An archive was written (or its pin changed): it is now the most recently used.
        case set(path: String, size: Int, isPinned: Bool)
        /// An archive was read from disk: it is now the most recently used.
        case touch(path: String)
        /// An archive is gone.
        case remove(path: String)
        /// Every archive under a directory is gone (`""`: all of them).
        case removeAll(prefix: String)
        /// The first line of a complete journal: one written by a rebuild or a compaction, to
        /// which every later change was appended.
        case begin
    }

    private var unpinned = LRUDictionary<String, Entry>()
    private var pinned = LRUDictionary<String, Entry>()

    /// The bytes of all archives.
    private(set) var totalBytes = 0

    var count: Int { unpinned.count + pinned.count }

    func entry(_ path: String) -> Entry? {
        unpinned.peekValue(forKey: path) ?? pinned.peekValue(forKey: path)
    }

    /// Applies one change.
    ///
    /// - Complexity: O(1) on average; O(n) for `removeAll`.
    mutating func apply(_ record: Record) {
        switch record {
        case .set(let path, let size, let isPinned):
            remove(path)
            let entry = Entry(size: size, isPinned: isPinned)
            if isPinned { pinned.updateValue(entry, forKey: path) } else { unpinned.updateValue(entry, forKey: path) }
            totalBytes += size
        case .touch(let path):
            if unpinned.value(forKey: path) == nil { _ = pinned.value(forKey: path) }
        case .remove(let path):
            remove(path)
        case .removeAll(let prefix):
            for (path, _) in unpinned.elementsFromMostRecent + pinned.elementsFromMostRecent where path.hasPrefix(prefix) {
                remove(path)
            }
        case .begin:
            self = DiskIndex()
        }
    }

    /// The archive to remove next to get under a budget: the least recently used unpinned one,
    /// else the least recently used pinned one.
    var nextVictim: (path: String, entry: Entry)? {
        (unpinned.leastRecentlyUsed ?? pinned.leastRecentlyUsed).map { (path: $0.key, entry: $0.value) }
    }

    /// The records that rebuild this index, oldest use first: what a compacted journal holds.
    var snapshot: [Record] {
        [.begin] + (unpinned.elementsFromMostRecent.reversed() + pinned.elementsFromMostRecent.reversed()).map {
            .set(path: $0.key, size: $0.value.size, isPinned: $0.value.isPinned)
        }
    }

    private mutating func remove(_ path: String) {
        if let old = unpinned.removeValue(forKey: path) ?? pinned.removeValue(forKey: path) {
            totalBytes -= old.size
        }
    }
}

extension DiskIndex.Record {
    /// The record as one journal line (without its checksum).
    var line: String {
        switch self {
        case .set(let path, let size, let isPinned): "S \(size) \(isPinned ? 1 : 0) \(path)"
        case .touch(let path): "A \(path)"
        case .remove(let path): "D \(path)"
        case .removeAll(let prefix): "X \(prefix)"
        case .begin: "H 1"
        }
    }

    /// The record a journal line holds, or `nil` when the line is not one.
    init?(line: Substring) {
        let fields = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
        switch (fields.first, fields.count) {
        case ("S", 4):
            guard let size = Int(fields[1]), size >= 0, fields[2] == "0" || fields[2] == "1", !fields[3].isEmpty else { return nil }
            self = .set(path: String(fields[3]), size: size, isPinned: fields[2] == "1")
        case ("A", 2) where !fields[1].isEmpty:
            self = .touch(path: String(line.dropFirst(2)))
        case ("D", 2) where !fields[1].isEmpty:
            self = .remove(path: String(line.dropFirst(2)))
        case ("H", 2) where fields[1] == "1":
            self = .begin
        case ("X", _):
            self = .removeAll(prefix: String(line.dropFirst(2)))
        default:
            return nil
        }
    }
}
