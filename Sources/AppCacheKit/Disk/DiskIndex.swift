/// What the disk holds, for usage accounting and the disk budget: every archive's size and pin,
/// in least-recently-used order, without listing a directory.
///
/// Pinned and unpinned archives keep separate orders, so the next archive to remove is always
/// found in O(1): the least recently used unpinned one, else the least recently used pinned one.
/// Sizes come from journal lines, which are untrusted: each is at most ``maximumSize`` and the
/// total is overflow-checked; an index whose numbers do not add up reports itself
/// ``isDamaged`` and is rebuilt from the archives.
struct DiskIndex {
    struct Entry: Equatable {
        var size: Int
        var isPinned: Bool
    }

    /// The largest archive size a journal line may claim (1 PiB).
    static let maximumSize = 1 << 50

    /// One change, as the journal records it.
    enum Record: Equatable {
        /// An archive was written (or its pin changed): it is now the most recently used.
        case set(path: CachePath, size: Int, isPinned: Bool)
        /// An archive was read: it is now the most recently used.
        case touch(path: CachePath)
        /// An archive is gone.
        case remove(path: CachePath)
        /// Every archive in a user directory is gone (`nil`: in every user directory).
        case removeAll(directory: String?)
        /// The first line of a complete journal: one written by a rebuild or a compaction, to
        /// which every later change was appended.
        case begin
        /// Intent: the archive at `path` is about to be replaced through the temporary file
        /// `temporaryName` in its directory, or removed. Settled by a later `set` or `remove` of
        /// the path.
        case willChange(path: CachePath, temporaryName: String)
        /// Intent: a user directory (`nil`: every one) is about to go. Settled by `removeAll`.
        case willRemoveAll(directory: String?)
        /// Intent: a file that is not an archive (the journal, a pack, a root record file) is
        /// about to be rewritten through the temporary file `temporaryName` of `directory`
        /// (`nil`: the version directory). Settled by `temporaryGone`, or for the journal by the
        /// rewritten journal itself.
        case willCompact(temporaryName: String, directory: String? = nil)
        /// The temporary file `name` of `directory` (`nil`: the version directory) is gone.
        case temporaryGone(name: String, directory: String? = nil)
        /// Intent: records are about to be appended to `directory`'s pack (and files they
        /// replace removed): one line for a batch's every small archive of the directory, where
        /// a file of its own takes a `willChange` each. Settled by `appended`, or after a crash by
        /// what the directory holds.
        case willAppend(directory: String)
        /// The appends `willAppend` announced are over (each archive written has its `set`, or
        /// the directory its `unindexed`).
        case appended(directory: String)
        /// `directory`'s pack took records this journal does not list one by one (written while
        /// the root had no disk budget, which alone needs them): an index is made exact by
        /// reading what the directory holds.
        case unindexed(directory: String)

        /// Whether the record says an archive changed on disk (rather than an intent or a use).
        var changesDisk: Bool {
            switch self {
            case .set, .remove, .removeAll, .unindexed: true
            default: false
            }
        }
    }

    private var unpinned = LRUDictionary<CachePath, Entry>()
    private var pinned = LRUDictionary<CachePath, Entry>()

    /// The bytes of all archives.
    private(set) var totalBytes = 0
    /// How many archives each directory holds (`nil`: the version directory itself): the
    /// directories whose packs count toward the disk's usage.
    private(set) var archivesByDirectory: [String?: Int] = [:]
    /// Whether a record made the numbers overflow: the index cannot be trusted.
    private(set) var isDamaged = false

    var count: Int { unpinned.count + pinned.count }

    func entry(_ path: CachePath) -> Entry? {
        unpinned.peekValue(forKey: path) ?? pinned.peekValue(forKey: path)
    }

    /// The paths of every archive, in no particular order.
    var paths: [CachePath] {
        unpinned.elementsFromMostRecent.map(\.key) + pinned.elementsFromMostRecent.map(\.key)
    }

    /// Applies one change; intents change nothing here.
    ///
    /// - Complexity: O(1) on average; O(n) for `removeAll`.
    mutating func apply(_ record: Record) {
        switch record {
        case .set(let path, let size, let isPinned):
            remove(path)
            guard (0...Self.maximumSize).contains(size) else {
                isDamaged = true
                return
            }
            let (total, overflow) = totalBytes.addingReportingOverflow(size)
            guard !overflow else {
                isDamaged = true
                return
            }
            totalBytes = total
            archivesByDirectory[path.directory, default: 0] += 1
            let entry = Entry(size: size, isPinned: isPinned)
            if isPinned { pinned.updateValue(entry, forKey: path) } else { unpinned.updateValue(entry, forKey: path) }
        case .touch(let path):
            if unpinned.value(forKey: path) == nil { _ = pinned.value(forKey: path) }
        case .remove(let path):
            remove(path)
        case .removeAll(let directory):
            for path in paths where directory == nil || path.directory == directory {
                remove(path)
            }
        case .begin:
            self = DiskIndex()
        case .willChange, .willRemoveAll, .willCompact, .temporaryGone, .willAppend, .appended, .unindexed:
            break
        }
    }

    /// The archive to remove next to get under a budget: the least recently used unpinned one,
    /// else the least recently used pinned one.
    var nextVictim: (path: CachePath, entry: Entry)? {
        (unpinned.leastRecentlyUsed ?? pinned.leastRecentlyUsed).map { (path: $0.key, entry: $0.value) }
    }

    /// The records that rebuild this index, oldest use first: what a compacted journal holds.
    var snapshot: [Record] {
        [.begin] + (unpinned.elementsFromMostRecent.reversed() + pinned.elementsFromMostRecent.reversed()).map {
            .set(path: $0.key, size: $0.value.size, isPinned: $0.value.isPinned)
        }
    }

    private mutating func remove(_ path: CachePath) {
        if let old = unpinned.removeValue(forKey: path) ?? pinned.removeValue(forKey: path) {
            totalBytes -= old.size
            if let count = archivesByDirectory[path.directory], count > 1 {
                archivesByDirectory[path.directory] = count - 1
            } else {
                archivesByDirectory[path.directory] = nil
            }
        }
    }
}

extension DiskIndex.Record {
    /// The record as one journal line (without its checksum).
    var line: String {
        switch self {
        case .set(let path, let size, let isPinned): "S \(size) \(isPinned ? 1 : 0) \(path.relative)"
        case .touch(let path): "A \(path.relative)"
        case .remove(let path): "D \(path.relative)"
        case .removeAll(let directory): "X \(directory ?? "*")"
        case .begin: "H 2"
        case .willChange(let path, let temporaryName): "I \(temporaryName) \(path.relative)"
        case .willRemoveAll(let directory): "J \(directory ?? "*")"
        case .willCompact(let temporaryName, let directory): "C \(temporaryName)" + (directory.map { " \($0)" } ?? "")
        case .temporaryGone(let name, let directory): "K \(name)" + (directory.map { " \($0)" } ?? "")
        case .willAppend(let directory): "P \(directory)"
        case .appended(let directory): "Q \(directory)"
        case .unindexed(let directory): "U \(directory)"
        }
    }

    /// The record a journal line holds, or `nil` when the line is not one of the forms above
    /// with paths the layout could have produced (see ``CachePath/init(relative:)``).
    init?(line: Substring) {
        guard line.count >= 3, line.dropFirst().first == " " else { return nil }
        let rest = line.dropFirst(2)
        switch line.first {
        case "S":
            let fields = rest.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, let size = Int(fields[0]), (0...DiskIndex.maximumSize).contains(size),
                fields[1] == "0" || fields[1] == "1", let path = CachePath(relative: fields[2])
            else { return nil }
            self = .set(path: path, size: size, isPinned: fields[1] == "1")
        case "A":
            guard let path = CachePath(relative: rest) else { return nil }
            self = .touch(path: path)
        case "D":
            guard let path = CachePath(relative: rest) else { return nil }
            self = .remove(path: path)
        case "X", "J":
            let directory: String?
            if rest == "*" {
                directory = nil
            } else {
                guard CachePath.isValidDirectory(rest) else { return nil }
                directory = String(rest)
            }
            self = line.first == "X" ? .removeAll(directory: directory) : .willRemoveAll(directory: directory)
        case "H":
            guard rest == "2" else { return nil }
            self = .begin
        case "I":
            let fields = rest.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            guard fields.count == 2, Self.isTemporaryName(fields[0]), let path = CachePath(relative: fields[1]) else { return nil }
            self = .willChange(path: path, temporaryName: String(fields[0]))
        case "P", "Q", "U":
            guard CachePath.isValidDirectory(rest) else { return nil }
            let directory = String(rest)
            self = line.first == "P" ? .willAppend(directory: directory) : line.first == "Q" ? .appended(directory: directory) : .unindexed(directory: directory)
        case "C", "K":
            let fields = rest.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            guard Self.isTemporaryName(fields[0]) else { return nil }
            var directory: String?
            if fields.count == 2 {
                guard CachePath.isValidDirectory(fields[1]) else { return nil }
                directory = String(fields[1])
            }
            self = line.first == "C"
                ? .willCompact(temporaryName: String(fields[0]), directory: directory)
                : .temporaryGone(name: String(fields[0]), directory: directory)
        default:
            return nil
        }
    }

    /// Whether `name` is a temporary file name the cache makes: one file name, no space.
    static func isTemporaryName(_ name: some StringProtocol) -> Bool {
        name.hasPrefix(FileSystem.temporaryPrefix) && CachePath.isValidComponent(name) && !name.contains(" ")
    }
}
