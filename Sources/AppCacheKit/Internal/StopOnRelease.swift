/// Runs `stop` when released: what ends the watch of a ``CachedQuery`` or of a `CachedItems`
/// state when its owner goes.
///
/// Thread safety: `Sendable`; `stop` runs once, on the thread that releases the last reference.
final class StopOnRelease: Sendable {
    let stop: @Sendable () -> Void

    init(_ stop: @escaping @Sendable () -> Void) {
        self.stop = stop
    }

    deinit {
        stop()
    }
}
