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
        let largeCount = quick ? 40 : 100
        let writeBackLarge = try cache(directory("batched-large-appcache"), writeThrough: false, memory: true)
        let batchedLarge = try Comparison.run(
            "\(largeCount.formatted()) `[100]` batched (write-back + `flush()` vs one transaction)", rounds: rounds,
            appCache: {
                for index in 0..<largeCount { try writeBackLarge.cacheItems(large, forKey: "hundred-\(index)") }
                try writeBackLarge.flush()
                return largeCount
            },
            grdb: {
                try grdb.write(try (0..<largeCount).map { ("hundred-\($0)", try encode(large)) })
                return largeCount
            })
        return [Row(hundred), Row(separate), Row(batched), Row(batchedLarge)]
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

    /// A cache root and a database, each holding `count` collections of `items` (one item
    /// unless given), written in flushes and transactions of at most 10,000, and closed.
    func filled(_ count: Int, _ name: String, items: [Dish]? = nil) throws -> (appCache: URL, grdb: URL) {
        let items = items ?? small
        let appRoot = directory("\(name)-appcache")
        do {
            let writer = try cache(appRoot, writeThrough: false, memory: true)
            for index in 0..<count {
                try writer.cacheItems(items, forKey: "one-\(index)")
                if index % 10_000 == 9_999 { try writer.flush() }
            }
            try writer.flush()
        }
        let grdbDirectory = directory("\(name)-grdb")
        do {
            let grdb = try GRDBCache(directory: grdbDirectory)
            let blob = try encode(items)
            for start in stride(from: 0, to: count, by: 10_000) {
                try grdb.write((start..<min(start + 10_000, count)).map { ("one-\($0)", blob) })
            }
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

    /// The first read of one of the user's small collections after launch, with 1,000, 10,000
    /// and 100,000 stored: the instance (or the pool) is opened untimed, the first read alone
    /// is timed; each round opens afresh.
    func firstRead() throws -> [Row] {
        var rows: [Row] = []
        for count in [1_000, 10_000, 100_000] {
            let (appRoot, grdbDirectory) = try filled(count, "first-read")
            let key = "one-\(count / 2)"
            var opened: AppCache?
            var pool: GRDBCache?
            let clock = ContinuousClock()
            var comparison = Comparison(title: "the first read after launch, \(count.formatted()) `[1]` stored")
            for round in 0..<(rounds + 1) {
                opened = try cache(appRoot)
                pool = try GRDBCache(directory: grdbDirectory)
                let start = clock.now
                guard try opened?.getCachedItems(Dish.self, forKey: key)?.count == 1 else { throw Missing(key: key) }
                let appCacheTime = clock.now - start
                let grdbStart = clock.now
                guard let blob = try pool?.read(key), try PayloadCodec.binary.decodeItems(Dish.self, from: blob).count == 1 else { throw Missing(key: key) }
                let grdbTime = clock.now - grdbStart
                opened = nil
                pool = nil
                guard round > 0 else { continue }  // the first warms code and pages
                comparison.appCache.append(appCacheTime.seconds)
                comparison.grdb.append(grdbTime.seconds)
            }
            rows.append(Row(comparison))
        }
        return rows
    }

    /// A fresh instance's first read (the instance opened untimed, so its first read pays for
    /// whatever opening left lazy) beside what an app would write without a cache: one item
    /// through `.json` beside `Data(contentsOf:)` + `JSONDecoder` of the same item's file; 100
    /// items with the default codec beside the same through `.json`.
    func freshInstanceHits() throws -> [Row] {
        let base = directory("fresh")
        let jsonRoot = base.appending(path: "json", directoryHint: .isDirectory)
        let binaryRoot = base.appending(path: "binary", directoryHint: .isDirectory)
        let plainDirectory = base.appending(path: "plain", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: plainDirectory, withIntermediateDirectories: true)
        func settings(_ root: URL, json: Bool) -> AppCache.Configuration {
            var configuration = AppCache.Configuration(rootDirectory: root, schemaVersion: "1", user: "bench")
            configuration.payloadCodec = json ? .json : .binary
            configuration.flushesAtExit = false
            configuration.observesApplicationLifecycle = false
            return configuration
        }
        let plainFile = plainDirectory.appending(path: "one.json")
        try JSONEncoder().encode(small).write(to: plainFile)
        do {
            let json = try AppCache(configuration: settings(jsonRoot, json: true))
            try json.cacheItems(small, forKey: "one")
            try json.cacheItems(large, forKey: "hundred")
            try json.flush()
            let binary = try AppCache(configuration: settings(binaryRoot, json: false))
            try binary.cacheItems(large, forKey: "hundred")
            try binary.flush()
        }
        let hitRounds = quick ? 21 : 101
        // Each round opens the instances untimed (what `init` costs is the opening rows'),
        // then times the first read of each, alternating which side goes first.
        let clock = ContinuousClock()
        var one = Comparison(title: "a fresh instance's one-item disk hit through `.json` vs `Data(contentsOf:)` + `JSONDecoder`")
        var hundred = Comparison(title: "a fresh instance's disk hit of 100 items, default codec vs `.json`")
        func firstRead(_ settings: AppCache.Configuration, _ key: String, _ count: Int) throws -> Double {
            let fresh = try AppCache(configuration: settings)
            let start = clock.now
            guard try fresh.getCachedItems(Dish.self, forKey: key)?.count == count else { throw Missing(key: key) }
            return (clock.now - start).seconds
        }
        // What an app would write without a cache: the file read and decoded.
        func readPlainFile() throws {
            guard try JSONDecoder().decode([Dish].self, from: Data(contentsOf: plainFile)).count == 1 else { throw Missing(key: "one.json") }
        }
        func foundation() throws -> Double {
            let start = clock.now
            try readPlainFile()
            return (clock.now - start).seconds
        }
        for round in 0..<(hitRounds + 1) {
            let oneJSON: Double, oneFoundation: Double, hundredBinary: Double, hundredJSON: Double
            if round % 2 == 0 {
                oneJSON = try firstRead(settings(jsonRoot, json: true), "one", 1)
                oneFoundation = try foundation()
                hundredBinary = try firstRead(settings(binaryRoot, json: false), "hundred", 100)
                hundredJSON = try firstRead(settings(jsonRoot, json: true), "hundred", 100)
            } else {
                oneFoundation = try foundation()
                oneJSON = try firstRead(settings(jsonRoot, json: true), "one", 1)
                hundredJSON = try firstRead(settings(jsonRoot, json: true), "hundred", 100)
                hundredBinary = try firstRead(settings(binaryRoot, json: false), "hundred", 100)
            }
            guard round > 0 else { continue }  // the first warms code and pages
            one.appCache.append(oneJSON)
            one.grdb.append(oneFoundation)
            hundred.appCache.append(hundredBinary)
            hundred.grdb.append(hundredJSON)
        }
        // The same read in a warm instance, memory off (every read decodes the pack's record):
        // what a read costs once the pack is open and indexed, beside the same floor. The
        // fresh row's difference from it is what a first read after opening pays.
        var warmSettings = settings(jsonRoot, json: true)
        warmSettings.memoryEntryLimit = 0
        let warm = try AppCache(configuration: warmSettings)
        let warmRead = try Comparison.run(
            "the same one-item `.json` disk hit in a warm instance, memory off, vs `Data(contentsOf:)` + `JSONDecoder`",
            rounds: hitRounds,
            appCache: {
                guard try warm.getCachedItems(Dish.self, forKey: "one")?.count == 1 else { throw Missing(key: "one") }
                return 1
            },
            grdb: {
                try readPlainFile()
                return 1
            })
        return [Row(one, baseline: "Foundation"), Row(warmRead, baseline: "Foundation"), Row(hundred, baseline: "`.json`")]
    }

    // MARK: - Space and bytes written

    /// The space collections take once written and closed: 10,000 of one item, 1,000 of 100
    /// (every file of each side: AppCache's packs, index, journal and lock file; SQLite's
    /// database, WAL and shared memory).
    func space() throws -> [Row] {
        var rows: [Row] = []
        for (count, items, name) in [(quick ? 2_000 : 10_000, small, "`[1]`"), (quick ? 200 : 1_000, large, "`[100]`")] {
            let (appRoot, grdbDirectory) = try filled(count, "space", items: items)
            let appBytes = allocatedBytes(under: appRoot.path(percentEncoded: false))
            let grdbBytes = allocatedBytes(under: grdbDirectory.path(percentEncoded: false))
            rows.append(Row(
                work: "space for \(count.formatted()) collections of \(name) (allocated blocks, closed)",
                appCache: Double(appBytes), grdb: Double(grdbBytes), unit: .bytes))
        }
        return rows
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
                appCache: Double(appBytes) / Double(updates), grdb: Double(grdbBytes) / Double(updates),
                ratio: Double(appBytes) / Double(max(grdbBytes, 1)), unit: .bytes))
        }
        return rows
    }
}

struct Missing: Error {
    var key: String
}
