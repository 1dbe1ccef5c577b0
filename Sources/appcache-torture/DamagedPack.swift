import AppCacheKit
import Foundation
import MenuModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Damage to a pack of about 1,000 small collections, some written twice, some removed: bytes
/// flipped in record prefixes and in bodies, 4 KiB pages zeroed, the pack cut in the middle of
/// a record, garbage appended, garbage inserted between records; and, aimed, the newest records
/// of collections written twice (prefix flipped, or prefix and header zeroed) and removal
/// records flipped.
///
/// Through a fresh cache each time (the packed layout, as apps have it): every collection whose
/// newest record the damage leaves alone reads back exactly, before the next write, after it,
/// and after a compaction (forced by a budget that the live records fit but the dead ones do
/// not); a collection whose newest record is damaged misses or reads exactly, never as other
/// data (an older write of its own included), and a removed one stays removed.
struct DamagedPack {
    let root: URL
    let quick: Bool
    /// How many reads found an older write (or a removed collection as it was) where the
    /// damage left a record nothing names any more.
    private let rollbacks = Shared(0)

    /// How many collections the pack holds, how many are written a second time, how many removed.
    static let collections = 1000
    static let rewrites = 100
    static let removals = 20

    /// The undamaged pack and what it holds.
    private struct Pristine {
        var bytes: Data
        /// Every record, in the pack's order.
        var records: [Range<Int>]
        /// Each live collection's newest write and where its record is.
        var live: [String: (sequence: Int, record: Range<Int>)]
        /// Each removed collection's removal record.
        var removed: [String: Range<Int>]
    }

    /// One damage: the pack's bytes after it, and the stretches of the undamaged pack it changed
    /// or cut off.
    private struct Damage {
        var name: String
        var bytes: Data
        var changed: [Range<Int>]
        /// Whether the damage may leave records that nothing names any more: a cut (the
        /// records past it are gone, as a crash's torn append is) or zeroed bytes over a whole
        /// prefix and header. The collections those records held may then read as an older
        /// write of their own, and a removed one as it was before its removal (documented:
        /// "Damage costs the damaged record only" in the archive format); never as other data.
        var mayRollBack = false

        func touches(_ record: Range<Int>) -> Bool {
            changed.contains { $0.overlaps(record) }
        }
    }

    private var template: URL { root.appending(path: "template", directoryHint: .isDirectory) }
    private static let packPath = "version-1/user-u0/.pack"

    private func configuration(_ root: URL) -> AppCache.Configuration {
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: "u0")
        configuration.writeBackDelay = .zero
        configuration.memoryEntryLimit = 0  // every read goes to the disk
        configuration.flushesAtExit = false
        configuration.diagnostics = { _ in }  // damage is expected here, and reported
        return configuration
    }

    /// Writes the pack once, then damages copies of it, kind by kind; prints `VIOLATION text`,
    /// a `FIGURE` and `DONE count`.
    func run() throws {
        let started = Date()
        guard let pristine = try write() else { return }
        var random = SeededRandom(seed: 17)
        let perKind = quick ? 3 : 25
        var tried = 0
        var touched = 0
        var compactions = 0
        for kind in 0..<9 {
            for _ in 0..<perKind {
                let damage = make(kind, of: pristine, &random)
                touched += pristine.live.values.filter { damage.touches($0.record) }.count
                if try check(damage, number: tried, of: pristine) { compactions += 1 }
                tried += 1
            }
        }
        emit("FIGURE a pack of \(pristine.live.count + pristine.removed.count) collections (\(pristine.bytes.count) bytes, \(pristine.records.count) records): \(tried) damages touching \(touched) collections' newest records, each read through three fresh caches (before a write, after it, after a compaction; \(compactions) compacted; \(rollbacks.withLock { $0 }) reads of a collection whose newest record a cut or zeroed bytes left unnamed found its older write) in \(Int(Date().timeIntervalSince(started))) s")
        emit("DONE \(tried)")
    }

    // MARK: - The undamaged pack

    /// Writes the collections, one write-through each, noting where each record lands.
    private func write() throws -> Pristine? {
        var random = SeededRandom(seed: 23)
        let pack = template.path(percentEncoded: false) + "/" + Self.packPath
        func size() -> Int { (try? FileManager.default.attributesOfItem(atPath: pack)[.size] as? Int) ?? 0 }
        var live: [String: (sequence: Int, record: Range<Int>)] = [:]
        var removed: [String: Range<Int>] = [:]
        weak var written: AppCache?
        do {
            let cache = try AppCache(configuration: configuration(template))
            written = cache
            func put(_ key: String, _ sequence: Int) throws {
                let before = size()
                try cache.cacheItems(TortureItem.collection(user: "u0", key: key, sequence: sequence), forKey: key)
                live[key] = (sequence, before..<size())
            }
            for number in 0..<Self.collections { try put("c\(number)", number + 1) }
            for number in 0..<Self.rewrites { try put("c\(random.next() % UInt64(Self.collections))", 100_000 + number) }
            for _ in 0..<Self.removals {
                let key = "c\(random.next() % UInt64(Self.collections))"
                let before = size()
                try cache.removeItems(TortureItem.self, forKey: key)
                if live.removeValue(forKey: key) != nil { removed[key] = before..<size() }
            }
        }
        // Its last batch on its own thread holds it until done.
        let deadline = Date().addingTimeInterval(10)
        while written != nil && Date() < deadline { usleep(1000) }
        let bytes = try Data(contentsOf: URL(filePath: pack))
        // The records, from each prefix's body length: they must tile the pack, and every write
        // must have appended whole records.
        var records: [Range<Int>] = []
        var offset = 0
        while offset + 36 <= bytes.count {
            let length = bytes[(offset + 4)..<(offset + 8)].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
            records.append(offset..<(offset + 36 + length))
            offset += 36 + length
        }
        let starts = Set(records.map(\.lowerBound))
        let tracked = live.values.map(\.record) + removed.values
        guard offset == bytes.count, tracked.allSatisfy({ !$0.isEmpty && starts.contains($0.lowerBound) }) else {
            emit("VIOLATION the pack of \(Self.collections) collections is not one record after another (\(bytes.count) bytes, records to \(offset))")
            return nil
        }
        if removed.values.contains(where: { $0.count != 36 }) { emit("VIOLATION a removal appended other than one 36-byte record") }
        return Pristine(bytes: bytes, records: records, live: live, removed: removed)
    }

    // MARK: - Damage

    private func make(_ kind: Int, of pristine: Pristine, _ random: inout SeededRandom) -> Damage {
        var bytes = pristine.bytes
        func pick(_ count: Int) -> Int { Int(random.next() % UInt64(max(count, 1))) }
        func garbage(_ length: Int) -> Data {
            switch pick(4) {
            case 0: return Data(repeating: 0, count: length)
            case 1: return Data(repeating: 0xFF, count: length)
            case 2:
                // Record magic again and again, no checksum right.
                return Data((0..<length).map { $0 % 36 == 0 ? 0xAC : $0 % 36 == 1 ? 0x50 : UInt8(truncatingIfNeeded: random.next()) })
            default: return Data((0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            }
        }
        switch kind {
        case 0:
            var changed: [Range<Int>] = []
            for _ in 0...pick(5) {
                let record = pristine.records[pick(pristine.records.count)]
                let offset = record.lowerBound + pick(36)
                bytes[offset] ^= 1 << UInt8(pick(8))
                changed.append(offset..<(offset + 1))
            }
            return Damage(name: "bits flipped in \(changed.count) record prefixes at \(changed.map(\.lowerBound))", bytes: bytes, changed: changed)
        case 1:
            var changed: [Range<Int>] = []
            for _ in 0...pick(5) {
                let record = pristine.records[pick(pristine.records.count)]
                guard record.count > 36 else { continue }
                let offset = record.lowerBound + 36 + pick(record.count - 36)
                bytes[offset] ^= 1 << UInt8(pick(8))
                changed.append(offset..<(offset + 1))
            }
            return Damage(name: "bits flipped in \(changed.count) record bodies at \(changed.map(\.lowerBound))", bytes: bytes, changed: changed)
        case 2:
            var changed: [Range<Int>] = []
            for _ in 0...pick(3) {
                let page = pick(bytes.count / 4096 + 1) * 4096
                let end = min(page + 4096, bytes.count)
                guard page < end else { continue }
                bytes.replaceSubrange(page..<end, with: Data(count: end - page))
                changed.append(page..<end)
            }
            return Damage(name: "4 KiB pages zeroed at \(changed.map(\.lowerBound))", bytes: bytes, changed: changed, mayRollBack: true)
        case 3:
            let record = pristine.records[pick(pristine.records.count)]
            let cut = record.lowerBound + 1 + pick(record.count - 1)
            return Damage(name: "the pack cut to \(cut) bytes, in a record", bytes: bytes.prefix(cut), changed: [cut..<bytes.count], mayRollBack: true)
        case 4:
            let added = garbage(1 + pick(8192))
            return Damage(name: "\(added.count) bytes of garbage appended", bytes: bytes + added, changed: [])
        case 5:
            let boundary = pristine.records[pick(pristine.records.count)].lowerBound
            let added = garbage(1 + pick(4096))
            bytes.insert(contentsOf: added, at: boundary)
            return Damage(name: "\(added.count) bytes of garbage inserted at \(boundary), between records", bytes: bytes, changed: [])
        case 6, 7:
            // The newest records of collections written twice, whose older records are intact:
            // a prefix flipped (the header still names the collection), or prefix and header
            // zeroed (nothing names it any more). Neither may bring the older write back.
            let rewritten = pristine.live.values.filter { $0.sequence >= 100_000 }.map(\.record).sorted { $0.lowerBound < $1.lowerBound }
            var changed: [Range<Int>] = []
            for _ in 0...pick(kind == 6 ? 6 : 3) {
                let record = rewritten[pick(rewritten.count)]
                if kind == 6 {
                    let offset = record.lowerBound + pick(36)
                    bytes[offset] ^= 1 << UInt8(pick(8))
                    changed.append(offset..<(offset + 1))
                } else {
                    let end = min(record.lowerBound + 36 + 160, record.upperBound)
                    bytes.replaceSubrange(record.lowerBound..<end, with: Data(count: end - record.lowerBound))
                    changed.append(record.lowerBound..<end)
                }
            }
            let what = kind == 6 ? "bits flipped in the prefixes of" : "prefix and header zeroed in"
            return Damage(
                name: "\(what) \(changed.count) rewritten collections' newest records at \(changed.map(\.lowerBound))", bytes: bytes, changed: changed,
                mayRollBack: kind == 7)
        default:
            // Removal records: the collection removed must not come back.
            let removals = pristine.removed.values.sorted { $0.lowerBound < $1.lowerBound }
            var changed: [Range<Int>] = []
            for _ in 0...pick(3) {
                let offset = removals[pick(removals.count)].lowerBound + pick(36)
                bytes[offset] ^= 1 << UInt8(pick(8))
                changed.append(offset..<(offset + 1))
            }
            return Damage(name: "bits flipped in \(changed.count) removal records at \(changed.map(\.lowerBound))", bytes: bytes, changed: changed)
        }
    }

    // MARK: - Checks

    /// Plants the damage in a copy of the undamaged root and reads every collection back
    /// through fresh caches: before a write, after one, after a compaction.
    ///
    /// - Returns: whether the pack was compacted.
    private func check(_ damage: Damage, number: Int, of pristine: Pristine) throws -> Bool {
        let root = root.appending(path: "case-\(number)", directoryHint: .isDirectory)
        try? FileManager.default.removeItem(at: root)
        try FileManager.default.copyItem(at: template, to: root)
        defer { try? FileManager.default.removeItem(at: root) }
        let pack = root.appending(path: Self.packPath)
        try damage.bytes.write(to: pack)
        var expected = pristine.live.mapValues { (sequence: $0.sequence, intact: !damage.touches($0.record)) }
        func read(_ phase: String) throws {
            let cache = try AppCache(configuration: configuration(root))
            var wrong: [String: [String]] = [:]
            for (key, write) in expected.sorted(by: { $0.key < $1.key }) {
                let items = try cache.getCachedItems(TortureItem.self, forKey: key)
                if items == nil, !write.intact { continue }
                if items != TortureItem.collection(user: "u0", key: key, sequence: write.sequence) {
                    let found = items.map { TortureItem.problem(with: $0, user: "u0", key: key) ?? ($0[0].sequence < write.sequence ? "an older write" : "another write") } ?? "nothing"
                    if found == "an older write", !write.intact, damage.mayRollBack {
                        rollbacks.withLock { $0 += 1 }
                        continue
                    }
                    wrong["\(write.intact ? "untouched" : "damaged") collections read as \(found)", default: []].append(key)
                }
            }
            for (key, record) in pristine.removed.sorted(by: { $0.key < $1.key }) {
                if let items = try cache.getCachedItems(TortureItem.self, forKey: key) {
                    if damage.mayRollBack, damage.touches(record), TortureItem.problem(with: items, user: "u0", key: key) == nil {
                        rollbacks.withLock { $0 += 1 }
                        continue
                    }
                    wrong["removed collections (removal record \(damage.touches(record) ? "damaged" : "untouched")) read back", default: []].append(key)
                }
            }
            for (what, keys) in wrong.sorted(by: { $0.key < $1.key }) {
                emit("VIOLATION pack, \(damage.name), \(phase): \(keys.count) \(what): \(keys.prefix(6).joined(separator: ", "))\(keys.count > 6 ? ", ..." : "")")
            }
        }
        try read("before any write")
        do {
            let cache = try AppCache(configuration: configuration(root))
            try cache.cacheItems(TortureItem.collection(user: "u0", key: "fresh", sequence: 7_000_000 + number), forKey: "fresh")
            let usage = try cache.bytesOnDisk()
            let measured = RootChecks(root: root).measuredUsage()
            if usage != measured { emit("VIOLATION pack, \(damage.name): after a write, diskUsage \(usage) but the pack takes \(measured) bytes") }
        }
        expected["fresh"] = (7_000_000 + number, true)
        try read("after a write")
        // A budget the live records (as the inspector reads them) fit with room for one more:
        // past it, the next write must compact the pack (the rewritten and removed
        // collections' old records, and the damage, are the rest).
        let before = try FileManager.default.attributesOfItem(atPath: pack.path(percentEncoded: false))
        let live = try CacheRootListing.read(root: root).archives.filter(\.isPacked).reduce(0) { $0 + $1.bytes }
        let budget = live + 16_384
        do {
            var configuration = configuration(root)
            configuration.diskByteLimit = budget
            let cache = try AppCache(configuration: configuration)
            try cache.cacheItems(TortureItem.collection(user: "u0", key: "compacting", sequence: 8_000_000 + number), forKey: "compacting")
        }
        expected["compacting"] = (8_000_000 + number, true)
        let after = try FileManager.default.attributesOfItem(atPath: pack.path(percentEncoded: false))
        let size = after[.size] as? Int ?? 0
        if (before[.size] as? Int ?? 0) > budget, after[.systemFileNumber] as? Int == before[.systemFileNumber] as? Int || size > budget {
            emit("VIOLATION pack, \(damage.name): no compaction under a budget of \(budget) bytes (the pack takes \(size))")
        }
        try read("after a compaction")
        return after[.systemFileNumber] as? Int != before[.systemFileNumber] as? Int
    }
}
