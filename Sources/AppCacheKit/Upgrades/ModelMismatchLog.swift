import Foundation

/// The pinned archives this app kept but could not decode, recorded in the version directory
/// (`.model-mismatches`) so that the inspector's `--verify` can show them beside the archives:
/// which file, as it was (size and cached date: a rewritten file no longer matches), and why
/// ("`items[3].price`: expected Double, found String").
///
/// One line per archive, tab-separated: the archive's path in the version directory, its size,
/// its cached date in milliseconds, the reason. At most ``capacity`` lines, the newest kept.
/// Written atomically inside a batch of disk changes; like every byte under the root it is
/// untrusted when read: a file too long, a line of the wrong form or a path the layout could
/// not have made is skipped.
enum ModelMismatchLog {
    static let path = CachePath(directory: nil, name: ".model-mismatches")
    static let capacity = 64
    static let maximumSize = 256 << 10
    static let maximumReasonLength = 1000

    /// One archive that does not decode.
    struct Entry: Equatable {
        var archive: CachePath
        var size: Int
        var cachedMilliseconds: Int64
        var reason: String
    }

    static func encode(_ entries: [Entry]) -> Data {
        var text = ""
        for entry in entries.suffix(capacity) {
            let reason = String(entry.reason.map { $0 == "\t" || $0 == "\n" || $0 == "\r" ? " " : $0 }.prefix(maximumReasonLength))
            text += "\(entry.archive.directory ?? "")/\(entry.archive.name)\t\(entry.size)\t\(entry.cachedMilliseconds)\t\(reason)\n"
        }
        return Data(text.utf8)
    }

    static func decode(_ bytes: Data) -> [Entry] {
        guard bytes.count <= maximumSize else { return [] }
        var entries: [Entry] = []
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n").suffix(capacity) {
            let fields = line.split(separator: "\t", maxSplits: 3, omittingEmptySubsequences: false)
            guard fields.count == 4, let size = Int(fields[1]), size >= 0, let milliseconds = Int64(fields[2]),
                DiskDate.isSane(millisecondsSince1970: milliseconds)
            else { continue }
            let parts = fields[0].split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2, CachePath.isValidComponent(parts[1]), parts[0].isEmpty || CachePath.isValidComponent(parts[0]) else { continue }
            entries.append(Entry(
                archive: CachePath(directory: parts[0].isEmpty ? nil : parts[0], name: parts[1]), size: size,
                cachedMilliseconds: milliseconds, reason: String(fields[3].prefix(maximumReasonLength))))
        }
        return entries
    }

    /// The entries recorded in `store`'s version directory.
    static func read(from store: DiskStore) -> [Entry] {
        store.readRecordFile(at: path, maximumSize: maximumSize).map(decode) ?? []
    }

    /// `entries` with `entry` in place of any older one of its archive, the newest last.
    static func adding(_ entry: Entry, to entries: [Entry]) -> [Entry] {
        Array((entries.filter { $0.archive != entry.archive } + [entry]).suffix(capacity))
    }

    /// Records `entry` in `batch`, in place of any older entry of its archive.
    ///
    /// - Throws: `permissionDenied`, `noSpace` or `ioFailure`; nothing is recorded then.
    static func record(_ entry: Entry, in batch: inout DiskWriter.Batch) throws(AppCacheError) {
        try batch.replace(
            File(entries: adding(entry, to: read(from: batch.store))), at: path,
            failure: "The model mismatch could not be recorded for the inspector.")
    }

    /// The entries as one root record file.
    struct File: RootRecordFile {
        static var maximumSize: Int { ModelMismatchLog.maximumSize }
        var entries: [Entry]
        func encoded() -> Data { ModelMismatchLog.encode(entries) }
    }
}
