import AppCacheKit
import Foundation

/// `appcache-inspect ROOT [--json] [--verify] [--stats] [--threshold SECONDS]`
///
/// Prints what an AppCache root holds: its version directories, its users and, for each
/// archive, its cache name, key, model schema version, size, item count, age, staleness (against the
/// threshold it was written with, recorded in its header, unless `--threshold` says otherwise),
/// expiry, pin and, with `--verify`, whether its checksums hold and, for archives the app kept
/// but could not decode as its model, why; then, per user, the changes queued for the server
/// (`AppCache.enqueue`), from the outbox's records, without decoding them. With `--stats`, a
/// summary per model type, version and user instead of the archives (``CacheRootStatistics``).
/// Read-only: it never changes the cache.
@main
struct AppCacheInspect {
    static let usage = """
        usage: appcache-inspect ROOT [--json] [--verify] [--stats] [--threshold SECONDS]

          ROOT                  a cache root directory (AppCache.Configuration.rootDirectory)
          --json                print JSON instead of a table
          --verify              read every payload and check its length and checksum; show
                                why the app could not decode an archive it kept
          --stats               per model type, version and user: collections, bytes,
                                items, the oldest and the stalest (with --json: as JSON)
          --threshold SECONDS   the age past which an archive counts as stale (default: the
                                threshold each archive was written with; 3600 when none)
        """

    struct Options {
        var root: URL?
        var json = false
        var verify = false
        var stats = false
        /// An override of every archive's own threshold.
        var threshold: Double?
    }

    static func main() {
        var options = Options()
        var arguments = CommandLine.arguments.dropFirst()
        while let argument = arguments.popFirst() {
            switch argument {
            case "--json": options.json = true
            case "--verify": options.verify = true
            case "--stats": options.stats = true
            case "--threshold":
                guard let value = arguments.popFirst().flatMap(Double.init), value >= 0 else {
                    fail("--threshold takes a number of seconds", status: 2)
                }
                options.threshold = value
            case "--help", "-h":
                print(usage)
                return
            default:
                guard !argument.hasPrefix("-"), options.root == nil else {
                    fail(argument.hasPrefix("-") ? "unknown option '\(argument)'" : "only one ROOT, please", status: 2)
                }
                options.root = URL(filePath: argument, directoryHint: .isDirectory)
            }
        }
        guard let root = options.root else { fail("a ROOT is needed", status: 2) }

        let listing: CacheRootListing
        do {
            var lastShown = -1
            listing = try CacheRootListing.read(root: root, verifyChecksums: options.verify) { done, total in
                // A progress line for long verifications, on stderr so JSON stays clean.
                guard options.verify, total >= 50 else { return }
                let percent = done * 100 / total
                if percent != lastShown || done == total {
                    lastShown = percent
                    printError("\rverifying \(done)/\(total) archives (\(percent)%)", newline: done == total)
                }
            }
        } catch {
            fail("\(error)", status: 1)
        }
        let now = Date()
        if options.stats {
            let statistics = listing.statistics(at: now, threshold: options.threshold.map { .milliseconds(Int64(($0 * 1000).rounded())) })
            if options.json {
                printStatisticsJSON(statistics, listing: listing, root: root, threshold: options.threshold)
            } else {
                printStatistics(statistics, listing: listing, root: root, threshold: options.threshold)
            }
        } else if options.json {
            printJSON(listing, root: root, now: now, threshold: options.threshold)
        } else {
            printTable(listing, root: root, now: now, threshold: options.threshold, verified: options.verify)
        }
        if listing.archives.contains(where: { $0.checksumVerified == false || $0.modelProblem != nil }) || !listing.unreadable.isEmpty {
            exit(3)
        }
    }

    // MARK: - Table

    /// The threshold an archive is judged by: the override, else the one it was written with,
    /// else an hour (archives of the first format record none).
    static func threshold(of archive: CacheRootListing.Archive, override: Double?) -> Double {
        override ?? archive.stalenessThreshold.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 } ?? 3600
    }

    static func printTable(_ listing: CacheRootListing, root: URL, now: Date, threshold: Double?, verified: Bool) {
        printHeading(listing, root: root, threshold: threshold)
        defer { printQueued(listing, now: now) }
        guard !listing.archives.isEmpty || !listing.unreadable.isEmpty else { return }
        print("")
        var rows = [["VERSION", "USER", "CACHE", "KEY", "MODEL", "BYTES", "ITEMS", "AGE", "THRESHOLD", "STALE", "EXPIRES", "PINNED"] + (verified ? ["CHECKSUM"] : [])]
        for archive in listing.archives {
            let age = now.timeIntervalSince(archive.cachedDate)
            let expires: String
            if let expiry = archive.expiry {
                let left = expiry.timeIntervalSince(now)
                expires = archive.isPinned ? "pinned" : left > 0 ? "in \(describe(left))" : "expired"
            } else {
                expires = "never"
            }
            var row = [
                display(archive.schemaVersion), archive.user.map(display) ?? "(shared)", display(archive.cacheName),
                archive.key.map(display) ?? "(default)", "v\(archive.modelSchemaVersion)", "\(archive.bytes)",
                archive.itemCount.map(String.init) ?? "-", describe(age),
                describe(Self.threshold(of: archive, override: threshold)),
                abs(age) > Self.threshold(of: archive, override: threshold) ? "yes" : "no", expires, archive.isPinned ? "yes" : "no",
            ]
            if verified { row.append(archive.checksumVerified == true ? "ok" : "BAD") }
            rows.append(row)
        }
        printRows(rows, rightAligned: [5, 6])
        for archive in listing.archives {
            if let problem = archive.modelProblem { print("UNDECODABLE \(archive.path): \(problem)") }
        }
        for file in listing.unreadable {
            print("UNREADABLE  \(file.path): \(file.reason)")
        }
    }

    /// Prints `rows` (the first the headings) in columns, those in `rightAligned` (numbers)
    /// aligned right.
    static func printRows(_ rows: [[String]], rightAligned: Set<Int>) {
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let cells = row.enumerated().map { column, cell in
                rightAligned.contains(column) ? String(repeating: " ", count: widths[column] - cell.count) + cell
                    : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }
            print(cells.joined(separator: "  ").trimmingTrailingSpaces())
        }
    }

    // MARK: - Statistics

    /// The summary lines every table starts with.
    static func printHeading(_ listing: CacheRootListing, root: URL, threshold: Double?) {
        print("Cache root: \(root.path(percentEncoded: false))")
        print("Versions:   \(listing.schemaVersions.map(display).joined(separator: ", "))")
        print("Users:      \(listing.users.isEmpty ? "(none)" : listing.users.map { $0.map(display) ?? "(shared)" }.joined(separator: ", "))")
        print("Archives:   \(listing.archives.count), \(listing.archives.reduce(0) { $0 + $1.bytes }) bytes; stale past \(threshold.map(describe) ?? "each one's own threshold")")
        print("Queued:     \(listing.queuedMutations.count) change(s) waiting for the server")
    }

    /// `--stats`: one row per model type, version and user, and a total.
    static func printStatistics(_ statistics: CacheRootStatistics, listing: CacheRootListing, root: URL, threshold: Double?) {
        printHeading(listing, root: root, threshold: threshold)
        print("")
        var rows = [["VERSION", "USER", "CACHE", "COLLECTIONS", "BYTES", "ITEMS", "OLDEST", "STALEST"]]
        func cells(_ totals: CacheRootStatistics.Totals, naming: Bool) -> [String] {
            let items = totals.collectionsWithUnknownItemCount > 0 ? "\(totals.items)+?" : "\(totals.items)"
            let oldest = totals.oldest.map { describe(statistics.date.timeIntervalSince($0.cachedDate)) } ?? "-"
            let stalest = totals.stalest.map { stale in
                let key = stale.archive.key.map(display) ?? "(default)"
                let name = naming ? display(stale.archive.cacheName) + " " + key : key
                return "\(name), \(describe(seconds(stale.overdue))) past \(describe(seconds(stale.threshold)))"
            } ?? "-"
            return ["\(totals.collections)", "\(totals.bytes)", items, oldest, stalest]
        }
        for group in statistics.groups {
            rows.append([display(group.schemaVersion), group.user.map(display) ?? "(shared)", display(group.cacheName)] + cells(group.totals, naming: false))
        }
        rows.append(["TOTAL", "", ""] + cells(statistics.total, naming: true))
        printRows(rows, rightAligned: [3, 4, 5])
        if statistics.total.collectionsWithUnknownItemCount > 0 {
            print("\(statistics.total.collectionsWithUnknownItemCount) collection(s) of unknown item count (n+?: at least n items)")
        }
        for file in listing.unreadable {
            print("UNREADABLE  \(file.path): \(file.reason)")
        }
    }

    /// A duration in seconds.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    struct StatisticsDocument: Encodable {
        struct Archive: Encodable {
            var key: String?
            var cacheName: String
            var user: String?
            var schemaVersion: String
            var cachedDate: String
            var ageSeconds: Double
            var path: String
        }

        struct Stalest: Encodable {
            var archive: Archive
            var thresholdSeconds: Double
            var overdueSeconds: Double
        }

        struct Totals: Encodable {
            var collections: Int
            var bytes: Int
            var items: Int
            /// Collections whose count could not be told: `items` is then a lower bound.
            var collectionsWithUnknownItemCount: Int
            var oldest: Archive?
            var stalest: Stalest?
        }

        struct Group: Encodable {
            var schemaVersion: String
            var user: String?
            var cacheName: String
            var totals: Totals
        }

        var root: String
        var date: String
        /// The `--threshold` override; `nil` when each archive is judged by its own.
        var thresholdSeconds: Double?
        var groups: [Group]
        var total: Totals
        var unreadable: [Document.Unreadable]
    }

    /// `--json --stats`.
    static func printStatisticsJSON(_ statistics: CacheRootStatistics, listing: CacheRootListing, root: URL, threshold: Double?) {
        let dates = ISO8601DateFormatter()
        dates.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
        func archive(_ archive: CacheRootListing.Archive) -> StatisticsDocument.Archive {
            StatisticsDocument.Archive(
                key: archive.key, cacheName: archive.cacheName, user: archive.user, schemaVersion: archive.schemaVersion,
                cachedDate: dates.string(from: archive.cachedDate), ageSeconds: rounded(statistics.date.timeIntervalSince(archive.cachedDate)),
                path: archive.path)
        }
        func totals(_ totals: CacheRootStatistics.Totals) -> StatisticsDocument.Totals {
            StatisticsDocument.Totals(
                collections: totals.collections, bytes: totals.bytes, items: totals.items,
                collectionsWithUnknownItemCount: totals.collectionsWithUnknownItemCount, oldest: totals.oldest.map(archive),
                stalest: totals.stalest.map {
                    StatisticsDocument.Stalest(archive: archive($0.archive), thresholdSeconds: rounded(seconds($0.threshold)), overdueSeconds: rounded(seconds($0.overdue)))
                })
        }
        let document = StatisticsDocument(
            root: root.path(percentEncoded: false), date: dates.string(from: statistics.date), thresholdSeconds: threshold,
            groups: statistics.groups.map { StatisticsDocument.Group(schemaVersion: $0.schemaVersion, user: $0.user, cacheName: $0.cacheName, totals: totals($0.totals)) },
            total: totals(statistics.total),
            unreadable: listing.unreadable.map { Document.Unreadable(path: $0.path, reason: $0.reason) })
        printEncoded(document)
    }

    // MARK: - Queued changes

    /// The changes waiting for the server, oldest first per user.
    static func printQueued(_ listing: CacheRootListing, now: Date) {
        guard !listing.queuedMutations.isEmpty else { return }
        print("")
        var rows = [["VERSION", "USER", "CHANGE", "KEY", "ID", "QUEUED", "ATTEMPTS", "LAST ERROR"]]
        for queued in listing.queuedMutations {
            let change = queued.mutation
            rows.append([
                display(queued.schemaVersion), queued.user.map(display) ?? "(shared)", display(change.mutationName),
                change.key.map(display) ?? "(default)", change.id.uuidString, describe(now.timeIntervalSince(change.enqueuedAt)) + " ago",
                "\(change.attempts)", change.lastError.map(display) ?? "-",
            ])
        }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            print(row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ").trimmingTrailingSpaces())
        }
    }

    /// A name made safe for one table cell: control characters escaped, long names cut.
    static func display(_ name: String) -> String {
        var out = ""
        for scalar in name.unicodeScalars {
            if scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}" {
                out += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out.count > 40 ? String(out.prefix(39)) + "…" : out
    }

    static func describe(_ seconds: Double) -> String {
        let magnitude = abs(seconds)
        let sign = seconds < 0 ? "-" : ""
        switch magnitude {
        case ..<120: return sign + "\(Int(magnitude)) s"
        case ..<7200: return sign + "\(Int(magnitude / 60)) min"
        case ..<172_800: return sign + "\(Int(magnitude / 3600)) h"
        default: return sign + "\(Int(magnitude / 86_400)) d"
        }
    }

    // MARK: - JSON

    struct Document: Encodable {
        struct Archive: Encodable {
            var schemaVersion: String
            var user: String?
            var cacheName: String
            var key: String?
            var bytes: Int
            /// How many items it holds; absent when that cannot be told.
            var items: Int?
            var cachedDate: String
            var ageSeconds: Double
            var thresholdSeconds: Double
            var stale: Bool
            var expiry: String?
            var expired: Bool
            var pinned: Bool
            var modelSchemaVersion: Int
            var checksumVerified: Bool?
            /// With `--verify`: why the app could not decode it as its model, as it recorded.
            var modelProblem: String?
            var path: String
            /// Whether it is a record of its user directory's pack rather than a file.
            var packed: Bool
        }

        struct Unreadable: Encodable {
            var path: String
            var reason: String
        }

        var root: String
        var schemaVersions: [String]
        var users: [String?]
        /// The `--threshold` override; `nil` when each archive is judged by its own.
        var thresholdSeconds: Double?
        var archives: [Archive]
        var unreadable: [Unreadable]
        var queuedChanges: [QueuedChange]

        struct QueuedChange: Encodable {
            var schemaVersion: String
            var user: String?
            var mutationName: String
            var key: String?
            var id: String
            var enqueuedAt: String
            var attempts: Int
            var lastError: String?
            var path: String
        }
    }

    static func printJSON(_ listing: CacheRootListing, root: URL, now: Date, threshold: Double?) {
        let dates = ISO8601DateFormatter()
        dates.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let document = Document(
            root: root.path(percentEncoded: false), schemaVersions: listing.schemaVersions, users: listing.users,
            thresholdSeconds: threshold,
            archives: listing.archives.map { archive in
                let age = now.timeIntervalSince(archive.cachedDate)
                let own = Self.threshold(of: archive, override: threshold)
                return Document.Archive(
                    schemaVersion: archive.schemaVersion, user: archive.user, cacheName: archive.cacheName,
                    key: archive.key, bytes: archive.bytes, items: archive.itemCount, cachedDate: dates.string(from: archive.cachedDate),
                    ageSeconds: (age * 1000).rounded() / 1000, thresholdSeconds: own, stale: abs(age) > own,
                    expiry: archive.expiry.map { dates.string(from: $0) },
                    expired: !archive.isPinned && archive.expiry.map { $0 <= now } == true, pinned: archive.isPinned,
                    modelSchemaVersion: archive.modelSchemaVersion, checksumVerified: archive.checksumVerified,
                    modelProblem: archive.modelProblem, path: archive.path, packed: archive.isPacked)
            },
            unreadable: listing.unreadable.map { Document.Unreadable(path: $0.path, reason: $0.reason) },
            queuedChanges: listing.queuedMutations.map { queued in
                Document.QueuedChange(
                    schemaVersion: queued.schemaVersion, user: queued.user, mutationName: queued.mutation.mutationName,
                    key: queued.mutation.key, id: queued.mutation.id.uuidString, enqueuedAt: dates.string(from: queued.mutation.enqueuedAt),
                    attempts: queued.mutation.attempts, lastError: queued.mutation.lastError, path: queued.path)
            })
        printEncoded(document)
    }

    /// Prints `document` as sorted, indented JSON.
    static func printEncoded(_ document: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            print(String(decoding: try encoder.encode(document), as: UTF8.self))
        } catch {
            fail("could not encode JSON: \(error)", status: 1)
        }
    }

    // MARK: - Output

    static func printError(_ message: String, newline: Bool = true) {
        FileHandle.standardError.write(Data((message + (newline ? "\n" : "")).utf8))
    }

    static func fail(_ message: String, status: Int32) -> Never {
        printError("appcache-inspect: \(message)")
        if status == 2 { printError(usage) }
        exit(status)
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}
