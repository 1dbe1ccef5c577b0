/// Runs `stop` when released: what ends the watch of a ``CachedQuery`` or of a `CachedItems`
/// state when its owner goes.
///
/// Thread safety: `Sendable`; `stop` runs once, on a library thread soon after the last
/// reference goes: it cancels tasks, which must not happen on the releasing thread, as that may
/// be exiting (see ``LibraryThreads/handOff(_:)``).
final class StopOnRelease: Sendable {
    let stop: @Sendable () -> Void

    init(_ stop: @escaping @Sendable () -> Void) {
        self.stop = stop
    }

    deinit {
        LibraryThreads.handOff(stop)
    }
}
