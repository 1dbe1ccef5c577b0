import Foundation

/// The archives a ``DiskStore`` keeps in its user directories' packs (``PackTable``): read,
/// summarised and written like archive files, with the same checks.
extension DiskStore {
    /// Whether an archive of `length` bytes (header and payload) goes into its directory's pack.
    func packs(archiveOf length: Int) -> Bool {
        length <= packs.limit
    }

    /// ``read(at:forKey:versions:change:_:)`` of an archive in a pack: its bytes in one `pread`,
    /// checked exactly as an archive file's; in the compact form (``PackedArchive``), its payload
    /// rebuilt first, with the pack's key table it names (`keyTable`).
    static func readPacked<Found>(
        _ packed: PackTable.Located, forKey key: ArchiveKey, versions: ReadableVersions, keyTable: (UInt64) -> [UInt8]?,
        _ use: (consuming ArchiveRecord, UnsafeRawBufferPointer) -> Found
    ) -> Read<Found> {
        let entry = packed.entry
        let facts = FileFacts(identity: entry.identity, modificationDate: entry.cachedDate)
        if let damage = entry.damage {
            return .damaged(Problem(code: .corruptArchive, message: "The archive's newest record in its pack is damaged (\(damage))."), identity: facts.identity)
        }
        // Room after the body for any key table of the pack read so far (the one the archive
        // shares, if any, most likely), so that its payload is rebuilt in place.
        var room = 0
        for table in packed.keyTables.values { room = max(room, table.count + 4) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: entry.bodyLength + room, alignment: 16)
        defer { buffer.deallocate() }
        if let read = packed.body, read.count == entry.bodyLength {
            read.withUnsafeBytes { buffer.copyMemory(from: $0) }
        } else if packed.file.read(into: buffer, count: entry.bodyLength, at: entry.bodyOffset) != entry.bodyLength {
            return .damaged(Problem(code: .corruptArchive, message: "The archive's record in its pack is cut short."), identity: facts.identity)
        }
        let body = UnsafeRawBufferPointer(rebasing: buffer[..<entry.bodyLength])
        guard PackedArchive.isPacked(body) else { return checked(body, of: facts, forKey: key, versions: versions, use) }
        let header: ArchiveHeader
        let headerLength: Int
        let sharedTable: UInt64?
        do throws(ArchiveDefect) {
            (header, headerLength, sharedTable) = try PackedArchive.parse(body, expecting: key).parts()
        } catch {
            return .damaged(Problem(code: .corruptArchive, message: "Unreadable archive: \(error)."), identity: facts.identity)
        }
        let stored = UnsafeRawBufferPointer(rebasing: body[headerLength...])
        guard let name = sharedTable else { return checked(header, payload: stored, of: facts, forKey: key, versions: versions, use) }
        guard let table = packed.keyTables[name] ?? keyTable(name) else {
            return .damaged(
                Problem(code: .corruptArchive, message: "Unreadable archive: the key table its payload shares with its pack is missing or damaged."),
                identity: facts.identity)
        }
        if table.count + 4 <= room {
            // The table and the offset go after the values, where the buffer has room.
            let payload = UnsafeMutableRawBufferPointer(rebasing: buffer[headerLength..<(entry.bodyLength + table.count + 4)])
            table.withUnsafeBytes { PackedArchive.rebuild(afterValues: stored.count, table: $0, in: payload) }
            return checked(header, payload: UnsafeRawBufferPointer(payload), of: facts, forKey: key, versions: versions, use)
        }
        let payload = UnsafeMutableRawBufferPointer.allocate(byteCount: stored.count + table.count + 4, alignment: 16)
        defer { payload.deallocate() }
        if let values = stored.baseAddress { payload.baseAddress!.copyMemory(from: values, byteCount: stored.count) }
        table.withUnsafeBytes { PackedArchive.rebuild(afterValues: stored.count, table: $0, in: payload) }
        return checked(header, payload: UnsafeRawBufferPointer(payload), of: facts, forKey: key, versions: versions, use)
    }

    /// The header of an archive in a pack, and its date and size (what the record takes).
    static func packedSummary(_ packed: PackTable.Located) -> SummaryRead {
        let entry = packed.entry
        if let damage = entry.damage {
            return .unreadable("its newest record in its pack is damaged (\(damage))", size: entry.length)
        }
        let header = packedHeader(packed)
        // What the body would hold in an archive file's form: a shared key table is not read
        // for a summary, so its length is taken as the header says (a read checks it).
        var archiveLength = entry.bodyLength
        if case .success(let parsed) = header, parsed.keyTable != nil, parsed.holdsPayload(storedLength: entry.bodyLength - parsed.length) {
            archiveLength = parsed.length + Int(parsed.header.payloadLength)
        }
        return summary(
            of: header.map { ($0.header, $0.length) }, archiveLength: archiveLength, size: entry.length, cachedDate: entry.cachedDate,
            identity: entry.identity, isPacked: true)
    }

    /// Reads and parses the header at the start of a packed archive, in either form (at most
    /// its first 4 KiB, then the whole body if the header goes on past them).
    static func packedHeader(_ packed: PackTable.Located) -> Result<PackedArchive.Parsed, ArchiveDefect> {
        let entry = packed.entry
        func read(_ count: Int) -> Result<PackedArchive.Parsed, ArchiveDefect> {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 16)
            defer { buffer.deallocate() }
            guard packed.file.read(into: buffer, count: count, at: entry.bodyOffset) == count else { return .failure(.truncated) }
            return Result { () throws(ArchiveDefect) in try PackedArchive.parseBody(UnsafeRawBufferPointer(buffer)) }
        }
        let prefix = min(entry.bodyLength, 4096)
        let first = read(prefix)
        guard case .failure(.truncated) = first, prefix < entry.bodyLength else { return first }
        return read(entry.bodyLength)
    }

    /// The hash of the file name of the archive whose bytes start `bytes` (its header's names
    /// under `layout`, in either form), or `nil` when no archive header reads there: how a pack
    /// names the collection whose damaged record a stretch of damage begins.
    static func nameHash(ofArchive bytes: UnsafeRawBufferPointer, layout: CacheLayout) -> UInt64? {
        guard let header = try? PackedArchive.parseBody(bytes).header else { return nil }
        return StableHash.value64(layout.archivePath(for: ArchiveKey(user: header.user, cacheName: header.cacheName, key: header.key)).name)
    }

    /// The path of the packed archive `packed`, from its header's names: `nil` when its header
    /// does not read, names another directory's collection, or does not hash to the record's
    /// name (damage, which a read of the collection finds and removes).
    func packedPath(of packed: PackTable.Located, in directory: String) -> CachePath? {
        guard case .success(let parsed) = Self.packedHeader(packed) else { return nil }
        let header = parsed.header
        let path = layout.archivePath(for: ArchiveKey(user: header.user, cacheName: header.cacheName, key: header.key))
        guard path.directory == directory, StableHash.value64(path.name) == packed.hash else { return nil }
        return path
    }

    /// Appends each group's archives (by their positions in `archives`, whose headers are
    /// `headers`, by position) to the group's directory's pack: the pack's records built in
    /// one buffer and appended in one `write`, after which a file an archive replaces (written
    /// when it was large) is removed.
    ///
    /// - Returns: by position in `archives`, the size and identity of each record written
    ///   (`nil` for the others, and for those whose pack could not be written); why a pack
    ///   could not be, by directory (`EFBIG`: the pack is full); and the damage cut off the
    ///   packs' tails, to report.
    func writePacked(
        _ archives: UnsafeBufferPointer<ArchiveWrite>, headers: [ArchiveHeader], in groups: [(directory: String, positions: [Int])]
    ) -> (written: [(size: Int, identity: FileVersion)?], failures: [String: SystemError], damage: [AppCacheError]) {
        var damage: [AppCacheError] = []
        var failures: [String: SystemError] = [:]
        var written = [(size: Int, identity: FileVersion)?](repeating: nil, count: archives.count)
        for (directory, positions) in groups {
            var length = 0
            for position in positions {
                length += PackRecord.prefixLength + headers[position].encodedLength + archives[position].record.payload.count
            }
            let shared = packs.sharedTables(in: directory)
            var appending = PackTable.Appending(
                reservingCapacity: length, sharedTables: shared.names,
                sharesNewTables: shared.archives + positions.count >= PackTable.minimumArchivesSharingTables)
            for position in positions {
                appending.addPacked(
                    header: headers[position], payload: archives[position].record.payload, nameHash: StableHash.value64(archives[position].path.name),
                    sequence: UniqueNumbers.next(), cachedDate: archives[position].record.cachedDate)
            }
            do throws(SystemError) {
                let appended = try packs.append(appending, toDirectory: directory, fileSystem: fileSystem)
                if let reason = appended.damage {
                    damage.append(AppCacheError(
                        code: .corruptArchive, message: "A pack of small archives was damaged (\(reason)); the damaged records were cut off.",
                        path: fileSystem.displayPath(PackFile.path(in: directory))))
                }
                for (offset, position) in positions.enumerated() {
                    if !appended.entries[offset].wasLive {
                        // Its first record in the pack: a file it was before goes (a read
                        // prefers the pack, but a removal must not uncover the old file).
                        try? fileSystem.removeFile(archives[position].path)
                    }
                    let entry = appended.entries[offset].entry!
                    written[position] = (entry.length, entry.identity)
                }
            } catch {
                failures[directory] = error
            }
        }
        return (written, failures, damage)
    }

    /// Appends removal or re-dating records for the archive at `path`.
    func appendToPack(_ records: PackTable.Appending, in path: CachePath, key: ArchiveKey?, failure: String) throws(AppCacheError) {
        do throws(SystemError) {
            _ = try packs.append(records, toDirectory: path.directory ?? CacheLayout.sharedDirectoryName, fileSystem: fileSystem)
        } catch {
            throw AppCacheError(
                code: error.code, message: failure, cacheName: key?.cacheName, key: key?.key, path: error.path, underlyingError: error)
        }
    }

    /// After a crash: where both the pack and a file hold the archive at `path` (a crash between
    /// writing one and removing the other), the one cached later stays (the pack's, on a tie).
    func resolveDuplicate(at path: CachePath) {
        guard let packed = packs.locate(path, fileSystem: fileSystem, change: nil), let file = fileSystem.facts(of: path) else { return }
        if file.modificationDate > packed.entry.cachedDate {
            let removal = PackRecord(kind: .removal, bodyLength: 0, nameHash: packed.hash, sequence: UniqueNumbers.next(), cachedDate: file.modificationDate)
            try? appendToPack(PackTable.Appending(removal), in: path, key: nil, failure: "")
        } else {
            try? fileSystem.removeFile(path)
        }
    }
}
