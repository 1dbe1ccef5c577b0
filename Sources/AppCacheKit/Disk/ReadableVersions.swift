/// Which schema versions of a model type this build reads: its current one, and every older
/// one it declares an upgrade for (``init(of:)``, with the upgrades). What a disk read checks
/// an archive header's schema version against.
///
/// Thread safety: a value.
struct ReadableVersions: Sendable, Hashable {
    /// The type's ``CacheableModel/schemaVersion``.
    let current: Int64
    /// The older versions with an upgrade.
    let older: Set<Int64>

    init(current: Int64, older: Set<Int64> = []) {
        self.current = current
        self.older = older.filter { $0 < current }
    }

    /// Exactly `version` (what reading a file's record as it is needs).
    static func only(_ version: Int64) -> ReadableVersions {
        ReadableVersions(current: version)
    }

    /// Whether an archive of `version` is read.
    func reads(_ version: Int64) -> Bool {
        version == current || older.contains(version)
    }
}
