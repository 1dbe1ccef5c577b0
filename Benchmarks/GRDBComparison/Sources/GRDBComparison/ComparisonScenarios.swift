import AppCacheKit
import Foundation
import GRDB

/// The table's rows: each AppCache's way of doing the work beside GRDB's.
struct ComparisonScenarios {
    let work: URL
    let quick: Bool

    var rounds: Int { quick ? 3 : 15 }
    let small = Dish.menu(count: 1)
    let large = Dish.menu(count: 100)

    func directory(_ name: String) -> URL {
        work.appending(path: "\(name)-\(UUID().uuidString)", directoryHint: .isDirectory)
    }

    func cache(_ root: URL, writeThrough: Bool = true, memory: Bool = false) throws -> AppCache {
        var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: "bench")
        configuration.writeBackDelay = writeThrough ? .zero : nil
        configuration.memoryEntryLimit = memory ? 20_000 : 0
        configuration.memoryByteLimit = 256 << 20
        configuration.flushesAtExit = false
        configuration.observesApplicationLifecycle = false
        return try AppCache(configuration: configuration)
    }

    func encode(_ items: [Dish]) throws -> Data {
        try PayloadCodec.binary.encodeItems(items)
    }

    // MARK: - Writes

    func writes() throws -> [Row] {
        let appRoot = directory("writes-appcache")
        let appCache = try cache(appRoot)
        let grdb = try GRDBCache(directory: directory("writes-grdb"))
        let perRound = quick ? 20 : 50
        let hundred = try Comparison.run("write-through of `[100]`", rounds: rounds, appCache: {
            for index in 0..<perRound { try appCache.cacheItems(large, forKey: "hundred-\(index % 4)") }
            return perRound
        }, grdb: {
            for index in 0..<perRound { try grdb.write(try encode(large), forKey: "hundred-\(index % 4)") }
            return perRound
        })
        let count = quick ? 200 : 1_000
        let separate = try Comparison.run("\(count.formatted()) writes of `[1]`, each its own write", rounds: rounds, appCache: {
            for index in 0..<count { try appCache.cacheItems(small, forKey: "one-\(index)") }
            return count
        }, grdb: {
            for index in 0..<count { try grdb.write(try encode(small), forKey: "one-\(index)") }
            return count
        })
        let writeBack = try cache(directory("batched-appcache"), writeThrough: false, memory: true)
        let batched = try Comparison.run(
            "the same \(count.formatted()) batched (write-back + `flush()` vs one transaction)", rounds: rounds,
            appCache: {
                for index in 0..<count { try writeBack.cacheItems(small, forKey: "one-\(index)") }
                try writeBack.flush()
                return count
            },
            grdb: {
                try grdb.write(try (0..<count).map { ("one-\($0)", try encode(small)) })
                return count
            })
        return [Row(hundred), Row(separate), Row(batched)]
    }

    // MARK: - Reads

    func reads() throws -> [Row] {
        let keys = (0..<(quick ? 200 : 1_000)).map { "one-\($0)" }
        let appRoot = directory("reads-appcache")
        do {
            let writer = try cache(appRoot)
            for key in keys { try writer.cacheItems(small, forKey: key) }
        }
        let grdb = try GRDBCache(directory: directory("reads-grdb"))
        try grdb.write(try keys.map { ($0, try encode(small)) })
        let fromDisk = try cache(appRoot)  // no memory layer: each read goes to the disk
        let diskHit = try Comparison.run("a one-item disk hit (read and decode)", rounds: rounds, appCache: {
            for key in keys where try fromDisk.getCachedItems(Dish.self, forKey: key)?.count != 1 { throw Missing(key: key) }
            return keys.count
        }, grdb: {
            for key in keys {
                guard let blob = try grdb.read(key), try PayloadCodec.binary.decodeItems(Dish.self, from: blob).count == 1 else { throw Missing(key: key) }
            }
            return keys.count
        })
        let inMemory = try cache(appRoot, memory: true)
        for key in keys { _ = try inMemory.getCachedItems(Dish.self, forKey: key) }
        let memoryHit = try Comparison.run("a memory hit (AppCache) vs a read (GRDB has no memory layer)", rounds: rounds, appCache: {
            for _ in 0..<10 {
                for key in keys where try inMemory.getCachedItems(Dish.self, forKey: key)?.count != 1 { throw Missing(key: key) }
            }
            return 10 * keys.count
        }, grdb: {
            for key in keys {
                guard let blob = try grdb.read(key), try PayloadCodec.binary.decodeItems(Dish.self, from: blob).count == 1 else { throw Missing(key: key) }
            }
            return keys.count
        })
        return [Row(diskHit), Row(memoryHit)]
    }

    /// A cache root and a database, each holding `count` one-item collections, written in one
    /// flush and one transaction, and closed.
    func filled(_ count: Int, _ name: String) throws -> (appCache: URL, grdb: URL) {
        let appRoot = directory("\(name)-appcache")
        do {
            let writer = try cache(appRoot, writeThrough: false, memory: true)
            for index in 0..<count { try writer.cacheItems(small, forKey: "one-\(index)") }
            try writer.flush()
        }
        let grdbDirectory = directory("\(name)-grdb")
        do {
            let grdb = try GRDBCache(directory: grdbDirectory)
            try grdb.write(try (0..<count).map { ("one-\($0)", try encode(small)) })
        }
        return (appRoot, grdbDirectory)
    }

    // MARK: - Opening

    /// Opening a store and reading one collection from it, with few and with many collections
    /// stored: AppCache opens without reading its archives; its first read of a user's small
    /// collections reads the pack's record prefixes (not their bodies).
    func opening() throws -> [Row] {
        var rows: [Row] = []
        for count in quick ? [100, 2_000] : [100, 10_000] {
            let (appRoot, grdbDirectory) = try filled(count, "open")
            let open = try Comparison.run("opening: open + one read, \(count.formatted()) collections stored", rounds: rounds, appCache: {
                let opened = try cache(appRoot)
                guard try opened.getCachedItems(Dish.self, forKey: "one-\(count / 2)")?.count == 1 else { throw Missing(key: "one-\(count / 2)") }
                return 1
            }, grdb: {
                let grdb = try GRDBCache(directory: grdbDirectory)
                guard let blob = try grdb.read("one-\(count / 2)"), try PayloadCodec.binary.decodeItems(Dish.self, from: blob).count == 1 else {
                    throw Missing(key: "one-\(count / 2)")
                }
                return 1
            })
            rows.append(Row(open))
        }
        return rows
    }

    // MARK: - Space and bytes written

    /// The space `count` collections of one item take once written and closed.
    func space() throws -> Row {
        let count = quick ? 2_000 : 10_000
        let (appRoot, grdbDirectory) = try filled(count, "space")
        let appBytes = allocatedBytes(under: appRoot.path(percentEncoded: false))
        let grdbBytes = allocatedBytes(under: grdbDirectory.path(percentEncoded: false))
        return Row(
            work: "space for \(count.formatted()) collections of `[1]` (allocated blocks, closed)",
            appCache: format(bytes: appBytes), grdb: format(bytes: grdbBytes), ratio: format(ratio: Double(appBytes) / Double(grdbBytes)))
    }

    /// The bytes each side had the device write per update of one collection (`/proc/self/io`),
    /// beside the payload's size: one side after the other, each over many updates.
    func bytesPerUpdate() throws -> [Row] {
        guard deviceBytesWritten() != nil else { return [] }
        var rows: [Row] = []
        for (name, items) in [("`[1]`", small), ("`[100]`", large)] {
            let updates = quick ? 200 : 2_000
            let payload = try encode(items).count
            let appCache = try cache(directory("bytes-appcache"))
            let grdb = try GRDBCache(directory: directory("bytes-grdb"))
            try appCache.cacheItems(items, forKey: "updated")
            try grdb.write(try encode(items), forKey: "updated")
            let appBefore = deviceBytesWritten() ?? 0
            for _ in 0..<updates { try appCache.cacheItems(items, forKey: "updated") }
            let appBytes = (deviceBytesWritten() ?? 0) - appBefore
            let grdbBefore = deviceBytesWritten() ?? 0
            for _ in 0..<updates { try grdb.write(try encode(items), forKey: "updated") }
            let grdbBytes = (deviceBytesWritten() ?? 0) - grdbBefore
            rows.append(Row(
                work: "bytes written to the device per write-through update of \(name) (payload \(format(bytes: payload)))",
                appCache: format(bytes: appBytes / updates), grdb: format(bytes: grdbBytes / updates),
                ratio: format(ratio: Double(appBytes) / Double(max(grdbBytes, 1)))))
        }
        return rows
    }
}

struct Missing: Error {
    var key: String
}
