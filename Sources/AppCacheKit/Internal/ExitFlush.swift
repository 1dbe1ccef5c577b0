#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Flushes the caches that asked for it when the process exits normally, through one `atexit`
/// handler installed on first use.
enum ExitFlush {
    private struct Registration: Sendable {
        weak var cache: AppCache?
    }

    private struct Registry {
        var caches: [ObjectIdentifier: Registration] = [:]
        var installed = false
    }

    private static let registry = Locked(Registry())

    /// Flushes `cache` at exit, for as long as it lives.
    static func register(_ cache: AppCache) {
        let install = registry.withLock { registry -> Bool in
            registry.caches[ObjectIdentifier(cache)] = Registration(cache: cache)
            defer { registry.installed = true }
            return !registry.installed
        }
        if install {
            atexit { ExitFlush.flushAll() }
        }
    }

    /// Forgets a cache that is going away; its `deinit` calls this after writing what was
    /// dirty.
    static func unregister(_ id: ObjectIdentifier) {
        registry.withLock { _ = $0.caches.removeValue(forKey: id) }
    }

    /// Flushes every live registered cache, reporting failures to its diagnostics hook.
    ///
    /// A cache whose last reference went on another thread just before the exit is in its
    /// `deinit`, writing its dirty collections: its weak reference is already `nil` but it is
    /// still registered. The exit waits for those writes (up to ``deinitWait``), or the process
    /// would end in the middle of them and lose what they were writing.
    static func flushAll() {
        var flushed = Set<ObjectIdentifier>()
        let deadline = ContinuousClock.now + deinitWait
        while true {
            let (live, dying) = registry.withLock { registry -> ([AppCache], Bool) in
                let live = registry.caches.filter { !flushed.contains($0.key) }.values.compactMap(\.cache)
                return (live, registry.caches.values.contains { $0.cache == nil })
            }
            for cache in live {
                flushed.insert(ObjectIdentifier(cache))
                cache.queries.uses.finishRecording()
                cache.store.reportAll(cache.store.writeDirtyEntries())
            }
            guard dying, ContinuousClock.now < deadline else { return }
            usleep(1_000)
        }
    }

    /// The longest an exit waits for caches that are being deinitialised on other threads.
    static let deinitWait = Duration.seconds(5)
}
