import Foundation

/// Keeps a cache root out of device backups when it is not in a caches directory.
///
/// Apple backs up everything in an app's (or App Group container's) data except
/// `Library/Caches` and `tmp`, and App Review rejects apps that back up data they can download
/// again (guideline 2.23). A root inside a `Library/Caches` (the default root, or the one in an
/// App Group container that the App Extensions article recommends) is excluded already; any
/// other root gets `isExcludedFromBackup` set on its directory when the cache opens. Elsewhere
/// (Linux) there is no such backup and nothing is done.
enum BackupExclusion {
    /// Whether a root at `path` needs the exclusion: it is not inside a caches directory.
    static func isNeeded(forRootPath path: String) -> Bool {
        let components = URL(filePath: path).standardizedFileURL.pathComponents
        let insideCaches = zip(components, components.dropFirst()).contains { $0 == "Library" && $1 == "Caches" }
        let insideTemporary = components.contains("tmp")
        return !insideCaches && !insideTemporary
    }

    /// Marks the root directory excluded from backups if it needs it (Apple platforms only).
    static func apply(toRoot root: URL) {
        #if canImport(Darwin)
        let path = root.path(percentEncoded: false)
        guard !MemoryVolume.claims(path), isNeeded(forRootPath: path) else { return }
        var url = root
        var values = URLResourceValues()
        values.isExcludedFromBackup = true
        try? url.setResourceValues(values)
        #endif
    }
}
