import Foundation

extension CollectionStore {
    /// Counts and (when observed) delivers `kind` for the collection of `archiveKey`.
    func record(_ kind: CacheEvent.Kind, _ archiveKey: ArchiveKey) {
        events.record(kind, for: archiveKey)
    }

    /// Delivers a memory hit of the current user's collection of `type` under `key`, when
    /// observed (memory hits count in their entries, whether observed or not).
    ///
    /// - Complexity: one atomic load when nobody observes.
    @inline(__always)
    func recordMemoryHit(_ type: ObjectIdentifier, _ key: String?) {
        guard events.isObserved else { return }
        let (cacheName, user) = state.withLock { ($0.types[type]?.cacheName, $0.user) }
        events.record(.memoryHit, cacheName: cacheName, key: key, user: user)
    }

    /// Delivers an eviction from memory of each of `keys` (any user's), when observed.
    func recordEvictions(_ keys: [MemoryKey], _ reason: CacheEvent.EvictionReason) {
        guard !keys.isEmpty, events.isObserved else { return }
        let named = state.withLock { state in
            keys.compactMap { key -> (String, String?, String?)? in
                guard let cacheName = state.types[key.type]?.cacheName, case .some(let user) = state.sessions.user(ofSlot: key.user) else { return nil }
                return (cacheName, key.key, user)
            }
        }
        for (cacheName, key, user) in named { events.record(.evicted(reason), cacheName: cacheName, key: key, user: user) }
    }

    /// What the store counted since it opened, memory hits included.
    func statistics() -> CacheStatistics {
        let hits = state.withLock { state -> [ArchiveKey: Int] in
            var named: [ArchiveKey: Int] = [:]
            for (key, count) in state.memory.hitCounts {
                guard let cacheName = state.types[key.type]?.cacheName, case .some(let user) = state.sessions.user(ofSlot: key.user) else { continue }
                named[ArchiveKey(user: user, cacheName: cacheName, key: key.key), default: 0] += Int(clamping: count)
            }
            return named
        }
        return events.statistics(memoryHits: hits)
    }
}
