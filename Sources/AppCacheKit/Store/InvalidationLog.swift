import Foundation

/// Which collections were marked stale, and when: ``AppCache/invalidate(_:forKey:)`` and its
/// siblings record here, in the version directory (`.invalidations`), so a relaunch and every
/// other process judge the same. A collection is stale when it was cached at or before the
/// latest moment that matches it; a later write (a fetch, a `cacheItems`) is fresh again. Items
/// are never removed.
///
/// One line per record, tab-separated: the user directory, the cache name (`*`: every type),
/// how the key matches (`=` exactly, `^` by prefix, `*` any key, `-` the default collection),
/// the key, the moment in milliseconds since 1970. At most ``capacity`` records: past that, the
/// oldest of a user merge into one record for all that user's collections at the latest of
/// their moments (marking more stale, never less). Like every byte under the root it is
/// untrusted when read: a file too long or a line of the wrong form is skipped.
struct InvalidationLog: Equatable, Sendable, RootRecordFile {
    static let path = CachePath(directory: nil, name: ".invalidations")
    static let capacity = 256
    static let maximumSize = 1 << 20

    /// Which keys a record covers.
    enum KeyMatch: Equatable, Sendable {
        /// The type's default collection.
        case defaultCollection
        case exactly(String)
        case prefix(String)
        case any

        func matches(_ key: String?) -> Bool {
            switch self {
            case .defaultCollection: key == nil
            case .exactly(let wanted): key == wanted
            case .prefix(let prefix): key.map { $0.hasPrefix(prefix) } ?? false
            case .any: true
            }
        }
    }

    struct Record: Equatable, Sendable {
        var userDirectory: String
        /// `nil`: every type.
        var cacheName: String?
        var key: KeyMatch
        var milliseconds: Int64
    }

    private(set) var records: [Record] = []

    /// The latest moment a record marks the collection `key` stale at; `nil` when none does.
    func latestInvalidation(of key: ArchiveKey) -> Int64? {
        let directory = CacheLayout.userDirectoryName(key.user)
        var latest: Int64?
        for record in records
        where record.userDirectory == directory && (record.cacheName == nil || record.cacheName == key.cacheName) && record.key.matches(key.key) {
            latest = max(latest ?? .min, record.milliseconds)
        }
        return latest
    }

    /// Adds `record`, replacing one that covers the same collections, merging the oldest past
    /// the capacity.
    mutating func add(_ record: Record) {
        records.removeAll { $0.userDirectory == record.userDirectory && $0.cacheName == record.cacheName && $0.key == record.key }
        records.append(record)
        while records.count > Self.capacity {
            let oldest = records.removeFirst()
            let mergedMoment = records.filter { $0.userDirectory == oldest.userDirectory }.map(\.milliseconds).max() ?? oldest.milliseconds
            records.removeAll { $0.userDirectory == oldest.userDirectory }
            records.append(Record(userDirectory: oldest.userDirectory, cacheName: nil, key: .any, milliseconds: max(mergedMoment, oldest.milliseconds)))
        }
    }

    // MARK: - The file

    func encoded() -> Data {
        var text = ""
        for record in records {
            let (mode, key): (String, String) = switch record.key {
            case .defaultCollection: ("-", "")
            case .exactly(let key): ("=", key)
            case .prefix(let prefix): ("^", prefix)
            case .any: ("*", "")
            }
            text += "\(record.userDirectory)\t\(record.cacheName.map(Self.escape) ?? "*")\t\(mode)\t\(Self.escape(key))\t\(record.milliseconds)\n"
        }
        return Data(text.utf8)
    }

    init() {}

    init(decoding bytes: Data) {
        guard bytes.count <= Self.maximumSize else { return }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n").suffix(Self.capacity) {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            // A moment that is no date a write makes is damage: the line is skipped.
            guard fields.count == 5, CachePath.isValidComponent(fields[0]), let milliseconds = Int64(fields[4]),
                DiskDate.isSane(millisecondsSince1970: milliseconds),
                let key = Self.unescape(fields[3]), let cacheName = fields[1] == "*" ? .some(nil) : Self.unescape(fields[1]).map(Optional.some)
            else { continue }
            let match: KeyMatch
            switch fields[2] {
            case "-": match = .defaultCollection
            case "=": match = .exactly(key)
            case "^": match = .prefix(key)
            case "*": match = .any
            default: continue
            }
            records.append(Record(userDirectory: fields[0], cacheName: cacheName, key: match, milliseconds: milliseconds))
        }
    }

    /// Reads the log of `store`'s version directory; empty when there is none (or it is not a
    /// regular file, or too long).
    static func read(from store: DiskStore) -> InvalidationLog {
        store.readRecordFile(at: path, maximumSize: maximumSize).map(InvalidationLog.init(decoding:)) ?? InvalidationLog()
    }

    /// Keys and cache names may hold tabs, newlines and backslashes: those are escaped.
    private static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\\\"
            case "\t": out += "\\t"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            default: out.append(character)
            }
        }
        return out
    }

    private static func unescape(_ text: String) -> String? {
        var out = ""
        var escaping = false
        for character in text {
            if escaping {
                switch character {
                case "\\": out.append("\\")
                case "t": out.append("\t")
                case "n": out.append("\n")
                case "r": out.append("\r")
                default: return nil
                }
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                out.append(character)
            }
        }
        return escaping ? nil : out
    }

    /// Adds `record` to the invalidations on disk, in `batch`, for every process and the next
    /// launch.
    ///
    /// - Throws: `permissionDenied`, `noSpace` or `ioFailure`; nothing is recorded then.
    static func record(_ record: Record, in batch: inout DiskWriter.Batch) throws(AppCacheError) {
        var log = read(from: batch.store)
        log.add(record)
        try batch.replace(log, at: path, failure: "The invalidation could not be recorded.")
    }
}
