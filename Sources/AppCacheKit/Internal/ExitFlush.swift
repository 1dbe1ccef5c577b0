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

    /// Forgets a cache that is going away.
    static func unregister(_ id: ObjectIdentifier) {
        registry.withLock { _ = $0.caches.removeValue(forKey: id) }
    }

    /// Flushes every live registered cache, reporting failures to its diagnostics hook.
    static func flushAll() {
        let caches = registry.withLock { registry in registry.caches.values.compactMap(\.cache) }
        for cache in caches {
            cache.reportAll(cache.writeDirtyEntries())
        }
    }
}
