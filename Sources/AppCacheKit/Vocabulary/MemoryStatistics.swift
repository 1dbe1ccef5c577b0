extension AppCache {
    /// What the memory layer holds and how it has served, as ``AppCache/memoryStatistics``
    /// reports it.
    public struct MemoryStatistics: Sendable, Hashable, CustomStringConvertible {
        /// Collections held in memory, including dirty ones being or waiting to be written.
        public var entries: Int
        /// The memory they take, as ``AppCache/Configuration/memoryByteLimit`` counts it: their
        /// decoded items, plus the encoded bytes of those not yet written.
        public var bytes: Int
        /// Collections whose archive on disk is older than what memory holds.
        public var dirtyEntries: Int
        /// Reads answered from memory.
        public var hits: Int
        /// Reads memory could not answer (they went to disk).
        public var misses: Int
        /// Dirty collections written to disk because they left memory (limits, memory warnings,
        /// user switches).
        public var spills: Int

        /// Creates statistics; the cache reports its own.
        public init(entries: Int, bytes: Int, dirtyEntries: Int, hits: Int, misses: Int, spills: Int) {
            self.entries = entries
            self.bytes = bytes
            self.dirtyEntries = dirtyEntries
            self.hits = hits
            self.misses = misses
            self.spills = spills
        }

        /// All six figures on one line.
        public var description: String {
            "entries \(entries), bytes \(bytes), dirty \(dirtyEntries), hits \(hits), misses \(misses), spills \(spills)"
        }
    }
}
