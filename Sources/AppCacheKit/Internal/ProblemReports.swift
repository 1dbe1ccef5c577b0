/// Problems found while a lock of the cache may be held, kept until they can be delivered to
/// the `diagnostics` hook with no lock held.
///
/// The file system finds planted links and special files in the middle of writes, inside the
/// cache's disk-write lock and the lock file's lock. A hook called right there that calls back
/// into the cache (a flush, a removal) would wait for a lock its own thread holds. So problems
/// are queued here and delivered by ``deliver(to:)``, which the cache calls once its locks are
/// released: at the end of every batch of disk changes and of every read that went to disk.
/// Thread-safe.
final class ProblemReports: Sendable {
    private let queue = Locked<[AppCacheError]>([])

    /// Keeps `problem` for the next delivery.
    func add(_ problem: AppCacheError) {
        queue.withLock { $0.append(problem) }
    }

    /// Hands every kept problem to `hook`, oldest first, and forgets them. Call with no lock
    /// of the cache held.
    func deliver(to hook: (@Sendable (AppCacheError) -> Void)?) {
        let problems = queue.withLock { queue -> [AppCacheError] in
            guard !queue.isEmpty else { return [] }
            defer { queue = [] }
            return queue
        }
        guard let hook else { return }
        for problem in problems { hook(problem) }
    }
}
