/// A cache, held weakly: what the change watcher reaches it through, so that watching keeps
/// nothing alive.
final class WeakAppCacheReference: Sendable {
    private let box = Locked<Reference>(Reference())

    private struct Reference {
        weak var cache: AppCache?
    }

    var cache: AppCache? {
        get { box.withLock { $0.cache } }
        set { box.withLock { $0.cache = newValue } }
    }
}
