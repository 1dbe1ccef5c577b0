import Foundation

/// The `diagnostics` hooks of every ``AppCache`` instance that shares one set of services: a
/// problem the store finds is told to each of them.
///
/// Thread safety: `Sendable`; the hooks sit behind a lock that is released before any runs.
final class DiagnosticsHub: Sendable {
    private let hooks = Locked<[(owner: ObjectIdentifier, hook: @Sendable (AppCacheError) -> Void)]>([])

    /// Tells `hook` of every problem from now on, until ``remove(_:)`` with `owner`.
    func add(_ owner: ObjectIdentifier, _ hook: (@Sendable (AppCacheError) -> Void)?) {
        guard let hook else { return }
        hooks.withLock { $0.append((owner, hook)) }
    }

    /// Stops telling `owner`'s hook.
    func remove(_ owner: ObjectIdentifier) {
        hooks.withLock { $0.removeAll { $0.owner == owner } }
    }

    /// Tells every hook of `problem`, in the order they were added. Call with no lock held.
    func deliver(_ problem: AppCacheError) {
        for entry in hooks.withLock({ $0 }) { entry.hook(problem) }
    }
}
