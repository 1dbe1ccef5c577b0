import Foundation

/// The observers of ``AppCache/updates(of:forKey:)``: each is a ``ChangeSignal`` woken when the
/// collection it follows may have changed.
///
/// Telling is cheap and never blocks: an observer re-reads the collection on its own task. A
/// change to one collection wakes the observers of that cache name and key; a change whose
/// reach is wider (a user switch, a wipe, a batch of disk changes) wakes them all.
final class ChangeObservers: Sendable {
    private struct Observer {
        var cacheName: String
        var key: String?
        var signal: ChangeSignal
    }

    private let observers = Locked<[UInt64: Observer]>([:])
    private let lastIdentifier = Locked<UInt64>(0)

    /// Whether anyone observes; lets writers skip the work of telling.
    var isEmpty: Bool { observers.withLock { $0.isEmpty } }

    /// Adds an observer of the collection `cacheName`/`key`.
    ///
    /// - Returns: the identifier that removes it.
    func add(cacheName: String, key: String?, signal: ChangeSignal) -> UInt64 {
        let identifier = lastIdentifier.withLock { last in
            last += 1
            return last
        }
        observers.withLock { $0[identifier] = Observer(cacheName: cacheName, key: key, signal: signal) }
        return identifier
    }

    func remove(_ identifier: UInt64) {
        observers.withLock { $0[identifier] = nil }
    }

    /// Wakes the observers of one collection.
    func notify(cacheName: String, key: String?) {
        let signals = observers.withLock { observers in
            observers.values.filter { $0.cacheName == cacheName && $0.key == key }.map(\.signal)
        }
        for signal in signals { signal.fire() }
    }

    /// Wakes every observer.
    func notifyAll() {
        let signals = observers.withLock { $0.values.map(\.signal) }
        for signal in signals { signal.fire() }
    }
}
