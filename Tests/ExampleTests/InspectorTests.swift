@_spi(Benchmarks) @testable import AppCacheKit
import AppCacheTestSupport
import Foundation
import MenuModel
import Testing

/// Runs `appcache-inspect` on caches the examples made.
struct InspectorTests {
    let inspect = ExampleProgram(name: "appcache-inspect")

    /// Every file under `root` with its bytes and modification date, to prove nothing changed.
    private func snapshot(_ root: String) throws -> [String: (Data, Date)] {
        var files: [String: (Data, Date)] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let name = enumerator?.nextObject() as? String {
            let path = root + "/" + name
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            let date = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date ?? .distantPast
            files[name] = (try Data(contentsOf: URL(filePath: path)), date)
        }
        return files
    }

    @Test func listsTheChangesQueuedPerUserWithoutDecodingThem() async throws {
        let scratch = try ExampleTests.Scratch()
        _ = try await ExampleProgram(name: "news-feed").run(["--root", scratch.cacheRoot, "--server-delay", "0"], scratch: scratch.url)
        let offline = try await ExampleProgram(name: "news-feed").run(
            ["--root", scratch.cacheRoot, "--bookmark", "2", "--stay-offline"], scratch: scratch.url)
        let id = try #require(ExampleTests.queuedBookmark(in: offline.standardOutput))
        let before = try snapshot(scratch.cacheRoot)

        let table = try await inspect.run([scratch.cacheRoot], scratch: scratch.url)
        #expect(table.status == 0, "\(table.standardError)")
        let lines = table.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.contains("Queued:     1 change(s) waiting for the server"))
        #expect(lines.contains { $0.hasPrefix("VERSION  USER    CHANGE    KEY        ID") })
        let row = try #require(lines.first { $0.contains(String(id)) })
        #expect(row.hasPrefix("1        reader  bookmark  bookmarks  "))
        #expect(row.contains("  1  ") && row.contains("NSURLErrorDomain"), "tried once, with the error")

        let json = try await inspect.run([scratch.cacheRoot, "--json"], scratch: scratch.url)
        let document = try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any]
        let queued = try #require(document?["queuedChanges"] as? [[String: Any]])
        #expect(queued.count == 1 && queued.first?["id"] as? String == String(id) && queued.first?["user"] as? String == "reader")
        #expect(try snapshot(scratch.cacheRoot).mapValues(\.0) == before.mapValues(\.0), "read-only")
    }

    @Test func listsACacheMadeByTheExamplesAsATable() async throws {
        let scratch = try ExampleTests.Scratch()
        _ = try await ExampleProgram(name: "hotel-menu").run(["--root", scratch.cacheRoot, "--server-delay", "0", "--items", "3"], scratch: scratch.url)
        _ = try await ExampleProgram(name: "hotel-menu").run(["--root", scratch.cacheRoot, "--server-delay", "0", "--user", "Zoë Q"], scratch: scratch.url)
        let before = try snapshot(scratch.cacheRoot)

        let result = try await inspect.run([scratch.cacheRoot, "--verify"], scratch: scratch.url)
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.contains("Versions:   1"))
        #expect(lines.contains("Users:      Zoë Q, guest"))
        #expect(lines.contains { $0.hasPrefix("VERSION  USER") && $0.hasSuffix("CHECKSUM") })
        let rows = lines.filter { $0.hasPrefix("1  ") }
        #expect(rows.count == 2)
        #expect(rows.allSatisfy { $0.contains("MenuItems") && $0.contains("(default)") && $0.hasSuffix("ok") && $0.contains("never") })
        #expect(rows.contains { $0.contains("Zoë Q") })
        #expect(try snapshot(scratch.cacheRoot).mapValues(\.0) == before.mapValues(\.0), "read-only: bytes unchanged")
        #expect(try snapshot(scratch.cacheRoot).mapValues(\.1) == before.mapValues(\.1), "read-only: dates unchanged")
    }

    @Test func printsJSONWithStalenessAgainstTheThreshold() async throws {
        let scratch = try ExampleTests.Scratch()
        _ = try await ExampleProgram(name: "switch-user").run(["--root", scratch.cacheRoot], scratch: scratch.url)
        // Bob's menu cached two hours ago, by a cache whose clock says so (small archives are
        // records of their user's pack, dated by the cache's clock, not a file's date).
        let twoHoursAgo = CacheClock(now: Date().addingTimeInterval(-7200))
        let configuration = AppCache.Configuration.testing(rootDirectory: URL(filePath: scratch.cacheRoot), user: "bob", clock: twoHoursAgo)
        try AppCache(configuration: configuration).cacheItems(MenuItem.sampleMenu(count: 3))

        let result = try await inspect.run([scratch.cacheRoot, "--json", "--threshold", "3600"], scratch: scratch.url)
        #expect(result.status == 0, "\(result.standardError)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(document["schemaVersions"] as? [String] == ["1"])
        #expect(document["thresholdSeconds"] as? Double == 3600)
        let archives = try #require(document["archives"] as? [[String: Any]])
        #expect(archives.count == 1)
        let bob = try #require(archives.first)
        #expect(bob["user"] as? String == "bob")
        #expect(bob["cacheName"] as? String == "MenuItems")
        #expect(bob["stale"] as? Bool == true)
        #expect((bob["ageSeconds"] as? Double).map { $0 > 7100 && $0 < 7300 } == true)
        #expect(bob["pinned"] as? Bool == false)
        #expect(bob["checksumVerified"] == nil, "not verified unless asked")
        #expect(bob["items"] as? Int == 3, "told from the payload's framing")
        #expect(bob["packed"] as? Bool == true, "a small collection is a record of bob's pack")
        #expect((bob["path"] as? String)?.hasSuffix("/version-1/user-bob/MenuItems.archive") == true, "named as its file would be")
    }

    @Test func verifyFindsADamagedArchiveAndShowsProgress() async throws {
        let scratch = try ExampleTests.Scratch()
        var configuration = AppCache.Configuration(rootDirectory: URL(filePath: scratch.cacheRoot), schemaVersion: "3", user: "many")
        configuration.writeBackDelay = .zero
        let cache = try AppCache(configuration: configuration)
        for index in 0..<60 {
            try cache.cacheItems(MenuItem.sampleMenu(count: 2, seed: index), forKey: "menu-\(index)", expiresAfter: index == 0 ? .seconds(3600) : nil)
        }
        try cache.pin(MenuItem.self, forKey: "menu-0")
        // A bit flipped in menu-7's payload, inside the user's pack: just past its header's
        // key and checksum.
        let pack = URL(filePath: scratch.cacheRoot + "/version-3/user-many/.pack")
        var bytes = try Data(contentsOf: pack)
        let key = try #require(bytes.firstRange(of: Data("menu-7".utf8)))
        bytes[key.upperBound + 4 + 8] ^= 0x20
        try bytes.write(to: pack)

        let result = try await inspect.run([scratch.cacheRoot, "--verify"], scratch: scratch.url)
        #expect(result.status == 3, "damage is reported in the exit status")
        #expect(result.standardError.contains("verifying 60/60 archives (100%)"))
        let rows = result.standardOutput.split(separator: "\n").filter { $0.hasPrefix("3  ") }
        #expect(rows.count == 60)
        #expect(rows.filter { $0.hasSuffix("BAD") }.map { $0.contains("menu-7") } == [true])
        #expect(rows.contains { $0.contains("menu-0") && $0.contains("pinned") && $0.contains("yes") })
        // Inspecting did not remove the damaged archive, as a cache read would.
        #expect(try Data(contentsOf: pack) == bytes)
    }

    /// A pack record whose date is no date (a hostile writer's, its checksum made right): the
    /// inspector lists it as damaged, in its table and in JSON that parses, and lists the rest.
    @Test(arguments: [Double.nan, .infinity, -.infinity, 1e300])
    func aPackRecordWhoseDateIsNoDateIsListedAsDamaged(_ seconds: Double) async throws {
        let scratch = try ExampleTests.Scratch()
        var configuration = AppCache.Configuration(rootDirectory: URL(filePath: scratch.cacheRoot), schemaVersion: "1", user: "ann")
        configuration.writeBackDelay = .zero
        configuration.flushesAtExit = false
        let cache = try AppCache(configuration: configuration)
        try cache.cacheItems(MenuItem.sampleMenu(count: 1), forKey: "dated")
        try cache.cacheItems(MenuItem.sampleMenu(count: 1), forKey: "fine")
        let pack = URL(filePath: scratch.cacheRoot + "/version-1/user-ann/.pack")
        var bytes = try Data(contentsOf: pack)
        // The first archive's record (kind 1), after the key table records (kind 4) its payload
        // shares with the others.
        var record = 0
        while bytes[record + 2] != 1 {
            record += 36 + Int(bytes[record + 4 ..< record + 8].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
        }
        withUnsafeBytes(of: seconds.bitPattern.littleEndian) { bytes.replaceSubrange(record + 24 ..< record + 32, with: $0) }
        let checksum = bytes[record ..< record + 32].withUnsafeBytes { CRC32.checksum($0) }
        withUnsafeBytes(of: checksum.littleEndian) { bytes.replaceSubrange(record + 32 ..< record + 36, with: $0) }
        try bytes.write(to: pack)

        let table = try await inspect.run([scratch.cacheRoot], scratch: scratch.url)
        #expect(table.status == 0 || table.status == 3, "\(table.standardError)")
        #expect(table.standardOutput.contains("fine"))
        #expect(table.standardOutput.contains("no date a write makes"), "\(table.standardOutput)")
        let json = try await inspect.run([scratch.cacheRoot, "--json"], scratch: scratch.url)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let archives = try #require(document["archives"] as? [[String: Any]])
        #expect(archives.count == 1 && archives.first?["key"] as? String == "fine")
        #expect((document["unreadable"] as? [Any])?.count == 1)
        #expect(try Data(contentsOf: pack) == bytes, "read-only")
    }

    /// A menu item whose `name` became a number without a schema version bump.
    struct ChangedMenuItem: CacheableModel {
        var itemId: String
        var name: Int
        static var cacheName: String { "MenuItems" }
    }

    @Test func verifyShowsThePinnedArchiveTheAppCouldNotDecode() async throws {
        let scratch = try ExampleTests.Scratch()
        var configuration = AppCache.Configuration(rootDirectory: URL(filePath: scratch.cacheRoot), schemaVersion: "1", user: "ann")
        configuration.writeBackDelay = .zero
        configuration.flushesAtExit = false
        let cache = try AppCache(configuration: configuration)
        try cache.cacheItems(MenuItem.sampleMenu(count: 3), forKey: "saved")
        try cache.pin(MenuItem.self, forKey: "saved")
        // The updated app reads it as the changed model: a miss, the pinned file kept, the
        // reason recorded for the inspector on the cache's own thread.
        #expect(try cache.getCachedItems(ChangedMenuItem.self, forKey: "saved") == nil)
        let log = scratch.cacheRoot + "/version-1/.model-mismatches"
        #expect(await eventually { FileManager.default.fileExists(atPath: log) })

        let result = try await inspect.run([scratch.cacheRoot, "--verify"], scratch: scratch.url)
        #expect(result.status == 3, "an undecodable archive is reported in the exit status")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("VERSION  USER  CACHE      KEY    MODEL") })
        #expect(lines.contains { $0.hasPrefix("1  ") && $0.contains("saved") && $0.contains("v1") && $0.hasSuffix("ok") })
        let undecodable = try #require(lines.first { $0.hasPrefix("UNDECODABLE") })
        #expect(undecodable.contains("MenuItems+saved.archive"))
        #expect(undecodable.contains("modelMismatch"))
        #expect(undecodable.contains("`items[0].name`: expected Int, found String"))

        // Rewritten (the app decodes it again and writes): the old record no longer matches.
        try cache.cacheItems(MenuItem.sampleMenu(count: 1), forKey: "saved")
        let after = try await inspect.run([scratch.cacheRoot, "--verify"], scratch: scratch.url)
        #expect(after.status == 0)
        #expect(!after.standardOutput.contains("UNDECODABLE"))
    }

    /// `--stats` on a root with two types, two users, an archive file and pack records, one
    /// stale and one damaged: per type and user, and a total, in a table and in JSON.
    @Test func statsSumsEachTypePerUserWithItemCounts() async throws {
        let scratch = try ExampleTests.Scratch()
        // Dates from a clock three hours back, moved by hand (the inspector ages by real time:
        // the ages it reports grow by the time the test takes, minutes under a sanitizer).
        let started = Date()
        let clock = CacheClock(now: started.addingTimeInterval(-3 * 3600))
        func configuration(user: String, packed: Bool) -> AppCache.Configuration {
            var configuration = AppCache.Configuration(rootDirectory: URL(filePath: scratch.cacheRoot), schemaVersion: "1", user: user)
            configuration.clock = clock
            configuration.writeBackDelay = .zero
            configuration.flushesAtExit = false
            if !packed { configuration.packLimit = 0 }
            return configuration
        }
        // ann: 5 menu items in a file of their own, three hours old (past the 10 minutes they
        // were written with); bob: two menus (2 and 3 items) and a feed of 4 posts in his pack,
        // recent; his "broken" menu is damaged.
        try AppCache(configuration: configuration(user: "ann", packed: false)).cacheItems(MenuItem.sampleMenu(count: 5))
        clock.advance(by: .seconds(3 * 3600 - 60))
        let bob = try AppCache(configuration: configuration(user: "bob", packed: true))
        try bob.cacheItems(MenuItem.sampleMenu(count: 2), forKey: "lunch")
        try bob.cacheItems(MenuItem.sampleMenu(count: 3), forKey: "broken")
        try bob.cacheItems(FeedPost.sampleFeed(count: 4))
        let pack = URL(filePath: scratch.cacheRoot + "/version-1/user-bob/.pack")
        var bytes = try Data(contentsOf: pack)
        let key = try #require(bytes.firstRange(of: Data("broken".utf8)))
        bytes[key.upperBound + 4 + 8] ^= 0x20
        try bytes.write(to: pack)
        let before = try snapshot(scratch.cacheRoot)

        let table = try await inspect.run([scratch.cacheRoot, "--stats", "--verify"], scratch: scratch.url)
        #expect(table.status == 3, "the damage is reported in the exit status")
        let lines = table.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("VERSION  USER  CACHE      COLLECTIONS  BYTES  ITEMS  OLDEST  STALEST") })
        let ann = try #require(lines.first { $0.hasPrefix("1        ann   MenuItems") })
        #expect(ann.contains("  1  ") && ann.contains("  5  ") && ann.contains("(default), 2 h past 10 min"), "\(ann)")
        let bobMenus = try #require(lines.first { $0.hasPrefix("1        bob   MenuItems") })
        #expect(bobMenus.contains("  2  ") && bobMenus.contains("  2+?  ") && bobMenus.hasSuffix("-"), "\(bobMenus)")
        let bobFeed = try #require(lines.first { $0.hasPrefix("1        bob   FeedPosts") })
        #expect(bobFeed.contains("  4  ") && bobFeed.hasSuffix("-"), "\(bobFeed)")
        let total = try #require(lines.first { $0.hasPrefix("TOTAL") })
        #expect(total.contains("  4  ") && total.contains("  11+?  ") && total.contains("MenuItems (default), 2 h past 10 min"), "\(total)")

        let json = try await inspect.run([scratch.cacheRoot, "--json", "--stats", "--verify"], scratch: scratch.url)
        #expect(json.status == 3)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let groups = try #require(document["groups"] as? [[String: Any]])
        #expect(groups.map { "\($0["user"] ?? "-") \($0["cacheName"] ?? "-")" } == ["ann MenuItems", "bob FeedPosts", "bob MenuItems"])
        let totals = groups.compactMap { $0["totals"] as? [String: Any] }
        #expect(totals.map { $0["collections"] as? Int } == [1, 1, 2])
        #expect(totals.map { $0["items"] as? Int } == [5, 4, 2])
        #expect(totals.map { $0["collectionsWithUnknownItemCount"] as? Int } == [0, 0, 1])
        let sum = try #require(document["total"] as? [String: Any])
        #expect(sum["collections"] as? Int == 4 && sum["items"] as? Int == 11)
        let archives = try #require(try JSONSerialization.jsonObject(with: Data(try await inspect.run([scratch.cacheRoot, "--json"], scratch: scratch.url).standardOutput.utf8)) as? [String: Any])["archives"] as? [[String: Any]]
        #expect(sum["bytes"] as? Int == archives?.reduce(0) { $0 + ($1["bytes"] as? Int ?? 0) }, "the archives' bytes, summed")
        // Three hours, and up to the seconds the test has run since it wrote them.
        let since = (started.timeIntervalSinceNow * -1).rounded(.up)
        let stalest = try #require(sum["stalest"] as? [String: Any])
        #expect((stalest["overdueSeconds"] as? Double).map { (10_195...(10_205 + since)).contains($0) } == true, "\(stalest)")
        #expect(stalest["thresholdSeconds"] as? Double == 600)
        #expect((stalest["archive"] as? [String: Any])?["user"] as? String == "ann")
        let oldest = try #require(sum["oldest"] as? [String: Any])
        #expect((oldest["ageSeconds"] as? Double).map { (10_795...(10_805 + since)).contains($0) } == true, "\(oldest)")
        #expect(try snapshot(scratch.cacheRoot).mapValues(\.0) == before.mapValues(\.0), "read-only")
    }

    @Test func neverWipesOtherVersions() async throws {
        let scratch = try ExampleTests.Scratch()
        _ = try await ExampleProgram(name: "hotel-menu").run(["--root", scratch.cacheRoot, "--server-delay", "0", "--schema-version", "1"], scratch: scratch.url)
        try FileManager.default.createDirectory(atPath: scratch.cacheRoot + "/version-2/shared", withIntermediateDirectories: true)
        let result = try await inspect.run([scratch.cacheRoot], scratch: scratch.url)
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("Versions:   1, 2"))
        #expect(FileManager.default.fileExists(atPath: scratch.cacheRoot + "/version-1/user-guest/.pack"))
        #expect(result.standardOutput.contains("guest"))
    }

    @Test func refusesWhatIsNotACache() async throws {
        let scratch = try ExampleTests.Scratch()
        let plain = try await inspect.run([scratch.url.path(percentEncoded: false)], scratch: scratch.url)
        #expect(plain.status == 1)
        #expect(plain.standardError.contains("AppCacheError.notACache"))
        #expect(plain.standardError.contains("holds no version-* directory"))
        let missing = try await inspect.run([scratch.url.appending(path: "nope").path(percentEncoded: false)], scratch: scratch.url)
        #expect(missing.status == 1)
        #expect(missing.standardError.contains("does not exist"))
        let usage = try await inspect.run(["--frobnicate"], scratch: scratch.url)
        #expect(usage.status == 2)
        #expect(usage.standardError.contains("usage: appcache-inspect"))
    }
}
