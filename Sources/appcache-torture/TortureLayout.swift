@_spi(Benchmarks) import AppCacheKit
import Foundation

/// Which layout the caches of the crash, two-process and budget modes use, from `--layout`:
/// `packs` (small archives in their user directory's pack, as apps run, the default) or `files`
/// (every archive a file of its own). The children inherit it through the environment. (The
/// damaged and hostile modes run both layouts of their own accord.)
enum TortureLayout {
    static let variable = "APPCACHE_TORTURE_LAYOUT"

    /// Whether every archive is a file of its own in this run.
    static var isFiles: Bool {
        ProcessInfo.processInfo.environment[variable] == "files"
    }

    /// Gives `configuration` the run's layout.
    static func apply(to configuration: inout AppCache.Configuration) {
        if isFiles { configuration.packLimit = 0 }
    }
}
