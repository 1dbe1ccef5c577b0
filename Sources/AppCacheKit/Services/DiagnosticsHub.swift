import Foundation

/// The `diagnostics` hooks of every ``AppCache`` instance that shares one set of services: a
/// problem the store finds is told to each of them.
///
/// The services start working before the first instance has added its hook (the disk index
/// loads in the background as the store opens): what is found until then is kept, up to
/// ``earlyLimit`` problems, and told to the first hook added.
///
/// Thread safety: `Sendable`; the hooks sit behind a lock that is released before any runs.
final class DiagnosticsHub: Sendable {
    private struct State {
        var hooks: [(owner: ObjectIdentifier, hook: @Sendable (AppCacheError) -> Void)] = []
        /// Problems found before any hook was added.
        var early: [AppCacheError] = []
        /// Whether a hook was ever added (or an instance without one opened): from then on
        /// nothing is kept.
        var opened = false
    }

    private let state = Locked(State())

    /// The most problems kept for the first hook.
    static let earlyLimit = 64

    /// Tells `hook` of every problem from now on, until ``remove(_:)`` with `owner`; the first
    /// instance's hook (or its lack of one) also takes the problems found while it opened.
    func add(_ owner: ObjectIdentifier, _ hook: (@Sendable (AppCacheError) -> Void)?) {
        let early = state.withLock { state -> [AppCacheError] in
            if let hook { state.hooks.append((owner, hook)) }
            guard !state.opened else { return [] }
            state.opened = true
            defer { state.early = [] }
            return state.early
        }
        guard let hook else { return }
        for problem in early { hook(problem) }
    }

    /// Stops telling the hook `owner` added.
    func remove(_ owner: ObjectIdentifier) {
        state.withLock { $0.hooks.removeAll { $0.owner == owner } }
    }

    /// Tells every hook of `problem`, with no lock held.
    func deliver(_ problem: AppCacheError) {
        let hooks = state.withLock { state -> [@Sendable (AppCacheError) -> Void] in
            guard state.opened else {
                if state.early.count < Self.earlyLimit { state.early.append(problem) }
                return []
            }
            return state.hooks.map(\.hook)
        }
        for hook in hooks { hook(problem) }
    }
}
