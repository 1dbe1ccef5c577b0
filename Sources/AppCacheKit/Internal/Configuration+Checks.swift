import Foundation

/// What the cache checks and derives from a configuration before it opens anything.
extension AppCache.Configuration {
    /// Checks the values that may come from outside the code (a build setting, remote
    /// configuration, a server's user id).
    ///
    /// - Throws: `invalidConfiguration` or `invalidUser`, naming the value.
    func validate() throws {
        func invalid(_ message: String) -> AppCacheError {
            AppCacheError(code: .invalidConfiguration, message: message)
        }
        guard !schemaVersion.isEmpty else { throw invalid("The schema version is empty; give the cache schema version the app bundles, such as \"1\".") }
        guard schemaVersion.utf8.count <= 128 else { throw invalid("The schema version is \(schemaVersion.utf8.count) bytes long; at most 128 are allowed.") }
        guard memoryByteLimit >= 0 else { throw invalid("memoryByteLimit is \(memoryByteLimit); it must not be negative.") }
        guard memoryEntryLimit >= 0 else { throw invalid("memoryEntryLimit is \(memoryEntryLimit); it must not be negative.") }
        if let diskByteLimit, diskByteLimit < 0 { throw invalid("diskByteLimit is \(diskByteLimit); it must not be negative.") }
        if let writeBackDelay, writeBackDelay < .zero { throw invalid("writeBackDelay is \(writeBackDelay); it must not be negative.") }
        guard lockTimeout >= .zero else { throw invalid("lockTimeout is \(lockTimeout); it must not be negative.") }
        guard defaultStalenessThreshold >= .zero else { throw invalid("defaultStalenessThreshold is negative.") }
        if let (name, _) = stalenessThresholds.first(where: { $0.value < .zero }) {
            throw invalid("The staleness threshold of \(name) is negative.")
        }
        try Self.checkUser(user)
    }

    /// Throws `invalidUser` for a user id no archive can hold.
    static func checkUser(_ user: String?) throws {
        guard let user else { return }
        guard !user.isEmpty else {
            throw AppCacheError(code: .invalidUser, message: "The user id is empty; use nil for the signed-out space.")
        }
        guard user.utf8.count <= ArchiveHeader.maximumNameLength else {
            throw AppCacheError(
                code: .invalidUser,
                message: "The user id is \(user.utf8.count) bytes long; at most \(ArchiveHeader.maximumNameLength) are allowed.")
        }
    }

    /// `faults`, with the simulated delay before each operation.
    var effectiveFaults: DiskFaults? {
        guard let delay = simulatedFileOperationDelay, delay > .zero else { return faults }
        let faults = faults
        let microseconds = UInt32(clamping: Int64(delay.timeInterval * 1_000_000))
        return { operation, path in
            usleep(microseconds)
            return faults?(operation, path)
        }
    }
}
