public import Foundation

/// What a cache root holds on disk, summed per model type in each app schema version and user,
/// and over everything: how many collections, their bytes and items, the oldest and the one
/// most past its staleness threshold. For tools such as `appcache-inspect --stats`.
///
/// Made from a ``CacheRootListing`` (``CacheRootListing/statistics(at:threshold:defaultThreshold:)``),
/// so it reads nothing itself. What is in memory in a running app is not here.
///
/// ```swift
/// let statistics = try CacheRootListing.read(root: url).statistics()
/// for group in statistics.groups {
///     print(group.cacheName, group.totals.collections, group.totals.bytes, group.totals.items)
/// }
/// if let stalest = statistics.total.stalest { print("stalest:", stalest.archive.path, stalest.overdue) }
/// ```
public struct CacheRootStatistics: Sendable, Hashable {
    /// An archive past its staleness threshold, and by how much.
    public struct Overdue: Sendable, Hashable {
        /// The archive.
        public var archive: CacheRootListing.Archive
        /// The threshold it was judged by.
        public var threshold: Duration
        /// How far its age is past ``threshold`` (always more than zero).
        public var overdue: Duration
    }

    /// Sums over a set of archives.
    public struct Totals: Sendable, Hashable {
        /// How many collections (archives, files and pack records alike), damaged payloads
        /// included.
        public var collections = 0
        /// The bytes they take: the sum of their archives' ``CacheRootListing/Archive/bytes``.
        public var bytes = 0
        /// The items in the collections whose count could be told
        /// (``CacheRootListing/Archive/itemCount``).
        public var items = 0
        /// How many collections' item counts could not be told (damaged or unknown payloads):
        /// when more than zero, ``items`` is a lower bound.
        public var collectionsWithUnknownItemCount = 0
        /// The archive cached longest ago; `nil` when there are none.
        public var oldest: CacheRootListing.Archive?
        /// The archive most past its staleness threshold; `nil` when none is stale.
        public var stalest: Overdue?

        /// Adds `archive`, which is `overdue` (or not stale: `nil`).
        mutating func add(_ archive: CacheRootListing.Archive, overdue: Overdue?) {
            collections += 1
            bytes += archive.bytes
            if let count = archive.itemCount {
                items += count
            } else {
                collectionsWithUnknownItemCount += 1
            }
            if oldest.map({ archive.cachedDate < $0.cachedDate }) ?? true {
                oldest = archive
            }
            if let overdue, stalest.map({ overdue.overdue > $0.overdue }) ?? true {
                stalest = overdue
            }
        }
    }

    /// The archives of one model type, in one app schema version and user directory.
    public struct Group: Sendable, Hashable {
        /// The app schema version of the directory.
        public var schemaVersion: String
        /// The user; `nil` for the shared space.
        public var user: String?
        /// The cache name of the model type.
        public var cacheName: String
        /// Their sums.
        public var totals: Totals
    }

    /// The moment ages and staleness were judged at.
    public var date: Date
    /// One group per model type, app schema version and user, sorted by version, user (the
    /// shared space first) and cache name.
    public var groups: [Group]
    /// The sums over every archive.
    public var total: Totals
    /// How many files could not be read as archives (their type is unknown, so they are in no
    /// group): ``CacheRootListing/unreadable``.
    public var unreadableFiles: Int
}

extension CacheRootListing {
    /// Sums the listed archives per model type, app schema version and user, and over all.
    ///
    /// An archive counts as stale when its age (either way: a date in the future counts too)
    /// is past its threshold: `threshold` when given, else the one it was written with
    /// (``Archive/stalenessThreshold``), else `defaultThreshold`.
    ///
    /// ```swift
    /// let listing = try CacheRootListing.read(root: url)
    /// let statistics = listing.statistics(threshold: .seconds(600))
    /// print(statistics.total.collections, statistics.total.bytes, statistics.total.items)
    /// ```
    ///
    /// - Parameters:
    ///   - date: the moment ages are taken at; now by default.
    ///   - threshold: a threshold for every archive, in place of each one's own.
    ///   - defaultThreshold: the threshold of an archive that records none (the first archive
    ///     format); an hour, as ``AppCache/Configuration/defaultStalenessThreshold``.
    /// - Returns: the sums; reads nothing from disk.
    /// - Complexity: O(n log n) in the number of archives.
    public func statistics(at date: Date = Date(), threshold: Duration? = nil, defaultThreshold: Duration = .seconds(3600)) -> CacheRootStatistics {
        struct GroupKey: Hashable {
            var schemaVersion: String
            var user: String?
            var cacheName: String
        }
        var groups: [GroupKey: CacheRootStatistics.Totals] = [:]
        var total = CacheRootStatistics.Totals()
        for archive in archives {
            let judgedBy = threshold ?? archive.stalenessThreshold ?? defaultThreshold
            let age = Duration.seconds(abs(date.timeIntervalSince(archive.cachedDate)))
            let overdue = age > judgedBy ? CacheRootStatistics.Overdue(archive: archive, threshold: judgedBy, overdue: age - judgedBy) : nil
            groups[GroupKey(schemaVersion: archive.schemaVersion, user: archive.user, cacheName: archive.cacheName), default: .init()]
                .add(archive, overdue: overdue)
            total.add(archive, overdue: overdue)
        }
        let sorted = groups.sorted { left, right in
            let (a, b) = (left.key, right.key)
            if a.schemaVersion != b.schemaVersion { return a.schemaVersion < b.schemaVersion }
            if a.user != b.user {
                guard let first = a.user else { return true }
                guard let second = b.user else { return false }
                return first < second
            }
            return a.cacheName < b.cacheName
        }
        return CacheRootStatistics(
            date: date,
            groups: sorted.map { CacheRootStatistics.Group(schemaVersion: $0.key.schemaVersion, user: $0.key.user, cacheName: $0.key.cacheName, totals: $0.value) },
            total: total, unreadableFiles: unreadable.count)
    }
}
