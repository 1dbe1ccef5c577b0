import Foundation

/// The archives this process already told `diagnostics` it keeps but cannot read (pinned ones
/// of an unreadable version or shape): every read of one misses, and says so once per process,
/// not on every read.
///
/// Thread safety: a process-wide set behind a lock; bounded (a process that meets more than
/// ``capacity`` such archives reports the others each time rather than grow).
enum ModelMismatchReports {
    static let capacity = 4096
    private static let reported = Locked<Set<String>>([])

    /// Whether reporting `code` for the archive at `path` is news to this process; notes it.
    static func isNews(_ path: String, code: AppCacheError.Code) -> Bool {
        reported.withLock { reported in
            guard reported.count < capacity else { return true }
            return reported.insert("\(code) \(path)").inserted
        }
    }
}
