@_spi(Benchmarks) import AppCacheKit
import Foundation
import MenuModel

/// Every damage an archive can take: each truncation, each bit flipped, and header fields
/// edited with the header's checksum recomputed (so that the deeper checks are what is met);
/// as a file of its own, and as the last record of its user directory's pack (there also its
/// record prefix's fields edited with the prefix checksum recomputed).
/// Each read must be a miss or the very collection written, never a crash or other data: from
/// the disk alone, and into a memory layer that already holds another collection (so that
/// what a header claims about its items meets the memory layer's accounting). Then a pack of
/// about 1,000 collections takes flipped bytes, zeroed pages, cuts and garbage
/// (``DamagedPack``): every collection the damage leaves alone must read back exactly, before
/// the next write, after it and after a compaction.
struct DamagedMode {
    let base: URL
    let quick: Bool
    let report: Report

    func run() throws {
        let root = base.appending(path: "damaged", directoryHint: .isDirectory)
        let child = try ChildProcess(arguments: [
            "--child", "damaged", "--root", root.path(percentEncoded: false), quick ? "--quick" : "--long",
        ])
        report.episodes += 1
        if !child.wait(timeout: 900) { report.violation("damaged archives: hung after \(child.printed.last ?? "start")") }
        if !child.exitedCleanly { report.violation("damaged archives: the child ended with \(child.termination) after \(child.printed.last ?? "start")") }
        for line in child.printed {
            if line.hasPrefix("VIOLATION") { report.violation("damaged archives: \(line)") }
            if line.hasPrefix("DONE ") { report.operations += Int(line.dropFirst(5)) ?? 0 }
            if line.hasPrefix("FIGURE ") { report.figure("damaged: \(line.dropFirst(7))") }
        }
    }
}

/// The child side of the damaged-archive mode.
struct DamagedArchives {
    let root: URL
    let quick: Bool

    func run() throws {
        try runOnFiles()
        try runOnPack()
        try DamagedPack(root: root.appending(path: "large-pack", directoryHint: .isDirectory), quick: quick).run()
    }

    /// The archive as a file of its own.
    func runOnFiles() throws {
        let root = root.appending(path: "files", directoryHint: .isDirectory)
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: "u0")
        configuration.packLimit = 0
        configuration.writeBackDelay = .zero
        configuration.memoryEntryLimit = 0  // every read goes to the disk
        configuration.diagnostics = { _ in }
        let cache = try AppCache(configuration: configuration)
        let original = TortureItem.collection(user: "u0", key: "k0", sequence: 7)
        try cache.cacheItems(original, forKey: "k0")
        guard let path = try CacheRootListing.read(root: root).archives.first?.path else {
            emit("VIOLATION no archive was written")
            return
        }
        let good = try Data(contentsOf: URL(filePath: path))
        let other = TortureItem.collection(user: "u0", key: "k1", sequence: 8)
        try cache.cacheItems(other, forKey: "k1")
        var withMemory = configuration
        withMemory.memoryEntryLimit = 10
        withMemory.memoryByteLimit = 1 << 20
        var tried = 0
        func attempt(_ bytes: Data, _ what: String) {
            tried += 1
            do {
                try bytes.write(to: URL(filePath: path))
                _ = cache.cachedDate(TortureItem.self, forKey: "k0")
                if let items = try cache.getCachedItems(TortureItem.self, forKey: "k0"), items != original {
                    emit("VIOLATION \(what) read as other data")
                }
                // Once more, into a memory layer (the read above removed a damaged file, so
                // the damage is written again).
                try bytes.write(to: URL(filePath: path))
                let remembering = try AppCache(configuration: withMemory)
                if try remembering.getCachedItems(TortureItem.self, forKey: "k1") != other {
                    emit("VIOLATION \(what): the undamaged collection did not read back")
                }
                for _ in 0..<2 {  // from the disk, then from memory
                    if let items = try remembering.getCachedItems(TortureItem.self, forKey: "k0"), items != original {
                        emit("VIOLATION \(what) read into memory as other data")
                    }
                }
                if try remembering.getCachedItems(TortureItem.self, forKey: "k1") != other {
                    emit("VIOLATION \(what) took the undamaged collection out of memory")
                }
            } catch let error as AppCacheError where error.code == .permissionDenied || error.code == .ioFailure {
                emit("VIOLATION \(what): \(error)")
            } catch {
                emit("VIOLATION \(what): \(error)")
            }
        }
        for length in 0..<good.count {
            attempt(good.prefix(length), "the archive cut to \(length) bytes")
        }
        attempt(good + Data([0]), "one byte appended")
        attempt(Data([0]) + good, "one byte prepended")
        let headerLength = Self.headerLength(good)
        let flipped = quick ? Array(0..<(headerLength * 8)) + stride(from: headerLength * 8, to: good.count * 8, by: 7).map { $0 } : Array(0..<(good.count * 8))
        for bit in flipped {
            var bytes = good
            bytes[bit / 8] ^= 1 << UInt8(bit % 8)
            attempt(bytes, "bit \(bit) flipped")
        }
        // Header fields edited, with the header checksum made right again.
        let fields = Self.fields(formatVersion: Self.formatVersion(good))
        var generator = SeededRandom(seed: 11)
        for field in fields {
            let original = good[field.offset..<(field.offset + field.size)].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * $1.offset) }
            var values: [UInt64] = [0, 1, original &+ 1, original &- 1, UInt64.max, UInt64.max >> 1, UInt64(1) << (8 * field.size - 1)]
            for _ in 0..<(quick ? 8 : 200) { values.append(generator.next()) }
            for value in values {
                var bytes = good
                for byte in 0..<field.size { bytes[field.offset + byte] = UInt8(truncatingIfNeeded: value >> (8 * byte)) }
                Self.fixHeaderChecksum(&bytes, headerLength: headerLength)
                attempt(bytes, "\(field.name) set to \(value)")
            }
        }
        // The slot is usable again.
        try cache.cacheItems(original, forKey: "k0")
        if try cache.getCachedItems(TortureItem.self, forKey: "k0") != original { emit("VIOLATION the slot could not be used again") }
        emit("DONE \(tried)")
    }

    /// The archive as the last record of its user directory's pack, after another's.
    func runOnPack() throws {
        let root = root.appending(path: "pack", directoryHint: .isDirectory)
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: "u0")
        configuration.writeBackDelay = .zero
        configuration.memoryEntryLimit = 0  // every read goes to the disk
        configuration.diagnostics = { _ in }
        configuration.flushesAtExit = false
        let other = TortureItem.collection(user: "u0", key: "k1", sequence: 8)
        let original = TortureItem.collection(user: "u0", key: "k0", sequence: 7)
        let pack = root.appending(path: "version-1/user-u0/.pack")
        let start: Int
        do {
            let cache = try AppCache(configuration: configuration)
            try cache.cacheItems(other, forKey: "k1")
            start = try Data(contentsOf: pack).count
            try cache.cacheItems(original, forKey: "k0")
        }
        let good = try Data(contentsOf: pack)
        guard good.count > start + 36, try CacheRootListing.read(root: root).archives.allSatisfy(\.isPacked) else {
            emit("VIOLATION the two collections were not written into the pack")
            return
        }
        var withMemory = configuration
        withMemory.memoryEntryLimit = 10
        withMemory.memoryByteLimit = 1 << 20
        var tried = 0
        /// `keepsOther`: the damage leaves the other collection's record and the pack's record
        /// boundaries alone, so it must still read back.
        func attempt(_ bytes: Data, _ what: String, keepsOther: Bool = true) {
            tried += 1
            do {
                try bytes.write(to: pack)
                let cache = try AppCache(configuration: configuration)
                _ = cache.cachedDate(TortureItem.self, forKey: "k0")
                if let items = try cache.getCachedItems(TortureItem.self, forKey: "k0"), items != original {
                    emit("VIOLATION pack: \(what) read as other data")
                }
                if let items = try cache.getCachedItems(TortureItem.self, forKey: "k1"), items != other {
                    emit("VIOLATION pack: \(what) read the other collection as other data")
                }
                // Once more, into a memory layer (the reads above removed what was damaged).
                try bytes.write(to: pack)
                let remembering = try AppCache(configuration: withMemory)
                let otherRead = try remembering.getCachedItems(TortureItem.self, forKey: "k1")
                if otherRead != other && (keepsOther || otherRead != nil) {
                    emit("VIOLATION pack: \(what): the undamaged collection did not read back")
                }
                for _ in 0..<2 {  // from the disk, then from memory
                    if let items = try remembering.getCachedItems(TortureItem.self, forKey: "k0"), items != original {
                        emit("VIOLATION pack: \(what) read into memory as other data")
                    }
                }
                // A write after the damage reads back.
                try remembering.cacheItems(original, forKey: "k0")
                if try AppCache(configuration: configuration).getCachedItems(TortureItem.self, forKey: "k0") != original {
                    emit("VIOLATION pack: \(what): a write after the damage did not read back")
                }
            } catch {
                emit("VIOLATION pack: \(what): \(error)")
            }
        }
        for length in start..<good.count {
            attempt(good.prefix(length), "the pack cut to \(length) bytes")
        }
        attempt(good + Data([0]), "one byte appended")
        attempt(good + Data(repeating: 0xFF, count: 40), "40 bytes of 0xFF appended")
        let body = start + 36
        // A packed archive's header is in the pack's compact form (varints), or (in packs of
        // earlier builds) an archive file's.
        let compactHeader = Self.compactHeaderLength(good.subdata(in: body..<good.count))
        let headerLength = compactHeader ?? Self.headerLength(good.subdata(in: body..<good.count))
        let flipped = quick
            ? Array((start * 8)..<((body + headerLength) * 8)) + stride(from: (body + headerLength) * 8, to: good.count * 8, by: 7).map { $0 }
            : Array((start * 8)..<(good.count * 8))
        for bit in flipped {
            var bytes = good
            bytes[bit / 8] ^= 1 << UInt8(bit % 8)
            attempt(bytes, "bit \(bit) flipped")
        }
        var generator = SeededRandom(seed: 13)
        func edit(_ offset: Int, _ size: Int, _ name: String, fixing fix: (inout Data) -> Void, keepsOther: Bool) {
            let original = good[offset..<(offset + size)].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * $1.offset) }
            var values: [UInt64] = [0, 1, original &+ 1, original &- 1, UInt64.max, UInt64.max >> 1, UInt64(1) << (8 * size - 1)]
            for _ in 0..<(quick ? 8 : 200) { values.append(generator.next()) }
            for value in values {
                var bytes = good
                for byte in 0..<size { bytes[offset + byte] = UInt8(truncatingIfNeeded: value >> (8 * byte)) }
                fix(&bytes)
                attempt(bytes, "\(name) set to \(value)", keepsOther: keepsOther)
            }
        }
        // The record prefix's fields, its checksum made right again: a kind, a length or a name
        // hash that lies (a name hash may now claim the other collection, which then misses).
        func fixPrefix(_ bytes: inout Data) {
            let checksum = CRC32.checksum(bytes[start..<(start + 32)])
            for byte in 0..<4 { bytes[start + 32 + byte] = UInt8(truncatingIfNeeded: checksum >> (8 * UInt32(byte))) }
        }
        for (offset, size, name) in [(2, 1, "record kind"), (4, 4, "body length"), (8, 8, "name hash"), (16, 8, "sequence"), (24, 8, "cached date")] {
            edit(start + offset, size, name, fixing: fixPrefix, keepsOther: false)
        }
        // The archive header's fields, its checksum made right again: in the compact form, each
        // byte of it (its varints then claim other values, lengths and fields).
        let fields = compactHeader.map { length in (2..<(length - 4)).map { (offset: $0, size: 1, name: "compact header byte \($0)") } }
            ?? Self.fields(formatVersion: Self.formatVersion(good.subdata(in: body..<good.count)))
        for field in fields {
            edit(body + field.offset, field.size, field.name, fixing: { bytes in
                let checksum = CRC32.checksum(bytes[body..<(body + headerLength - 4)])
                for byte in 0..<4 { bytes[body + headerLength - 4 + byte] = UInt8(truncatingIfNeeded: checksum >> (8 * UInt32(byte))) }
            }, keepsOther: true)
        }
        emit("DONE \(tried)")
    }

    static func formatVersion(_ bytes: Data) -> UInt16 {
        UInt16(bytes[bytes.startIndex + 4]) | UInt16(bytes[bytes.startIndex + 5]) << 8
    }

    /// The header's fields by format version (see the archive format): offset, size, name.
    static func fields(formatVersion: UInt16) -> [(offset: Int, size: Int, name: String)] {
        let common: [(offset: Int, size: Int, name: String)] = [
            (4, 2, "format version"), (6, 2, "codec"), (8, 4, "flags"), (12, 8, "schema version"), (20, 8, "expiry"),
        ]
        if formatVersion == 1 {
            return common + [(28, 8, "payload length"), (36, 4, "payload checksum"), (40, 4, "user length"), (44, 4, "name length"), (48, 4, "key length")]
        }
        var fields = common + [
            (28, 8, "staleness threshold"), (36, 8, "decoded size"), (44, 8, "payload length"), (52, 4, "payload checksum"),
            (56, 4, "user length"), (60, 4, "name length"), (64, 4, "key length"),
        ]
        if formatVersion >= 3 { fields += [(68, 4, "ETag length"), (72, 4, "Last-Modified length")] }
        return fields
    }

    /// The header's length: fixed part, names (and validators), checksum.
    static func headerLength(_ bytes: Data) -> Int {
        func length(_ offset: Int) -> Int {
            let value = bytes[offset..<(offset + 4)].enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
            return value == UInt32.max ? 0 : Int(value)
        }
        switch formatVersion(bytes) {
        case 1: return 52 + length(40) + length(44) + length(48) + 4
        case 2: return 68 + length(56) + length(60) + length(64) + 4
        default: return 76 + length(56) + length(60) + length(64) + length(68) + length(72) + 4
        }
    }

    /// The length of the compact header (magic `0xAC 0x43`) a pack record's body starts with,
    /// read as the archive format describes it; `nil` for a body in an archive file's form.
    static func compactHeaderLength(_ bytes: Data) -> Int? {
        let bytes = [UInt8](bytes)
        guard bytes.count > 2, bytes[0] == 0xAC, bytes[1] == 0x43 else { return nil }
        var offset = 2
        func varint() -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while offset < bytes.count, shift < 64 {
                let byte = bytes[offset]
                offset += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { break }
                shift += 7
            }
            return value
        }
        _ = varint()  // format version
        let fields = varint()
        for _ in 0..<3 { _ = varint() }  // codec, flags, schema version
        for bit in 0..<3 where fields & (1 << bit) != 0 { _ = varint() }  // expiry, threshold, decoded size
        _ = varint()  // payload length
        offset += 4 + (fields & (1 << 8) != 0 ? 8 : 0)  // payload checksum, key table
        for bit in [3, -1, 4, 5, 6, 7] where bit < 0 || fields & (1 << UInt64(bit)) != 0 { offset += Int(varint()) }  // the names
        return offset + 4
    }

    /// Recomputes the header checksum where the original header had it.
    static func fixHeaderChecksum(_ bytes: inout Data, headerLength: Int) {
        let checksum = CRC32.checksum(bytes.prefix(headerLength - 4))
        for byte in 0..<4 { bytes[headerLength - 4 + byte] = UInt8(truncatingIfNeeded: checksum >> (8 * UInt32(byte))) }
    }
}
