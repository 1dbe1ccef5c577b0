import Foundation

/// The observers of ``AppCache/updates(_:forKey:)``: each is a ``ChangeSignal`` woken when the
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

    private struct State {
        var observers: [UInt64: Observer] = [:]
        var lastIdentifier: UInt64 = 0
        var looks: UInt64 = 0
    }

    private let state = Locked(State())

    /// Whether nobody observes (a stream that ended has removed its observer).
    var isEmpty: Bool { state.withLock { $0.observers.isEmpty } }

    /// How many observers there are (each `updates` stream and each watch is one): lets a test
    /// count the watches a SwiftUI property started.
    var count: Int { state.withLock { $0.observers.count } }

    /// How many times observers have looked at their collection after a wake-up (each look
    /// yields a value or decides the collection did not change): lets a test wait until a
    /// change has been seen instead of sleeping.
    var looks: UInt64 { state.withLock { $0.looks } }

    /// Counts a look (see ``looks``); call after it yielded or decided not to.
    func didLook() {
        state.withLock { $0.looks += 1 }
    }

    /// Adds an observer of the collection `cacheName`/`key`.
    ///
    /// - Returns: the identifier that removes it.
    func add(cacheName: String, key: String?, signal: ChangeSignal) -> UInt64 {
        state.withLock { state in
            state.lastIdentifier += 1
            state.observers[state.lastIdentifier] = Observer(cacheName: cacheName, key: key, signal: signal)
            return state.lastIdentifier
        }
    }

    func remove(_ identifier: UInt64) {
        state.withLock { $0.observers[identifier] = nil }
    }

    /// Wakes the observers of one collection.
    func notify(cacheName: String, key: String?) {
        let signals = state.withLock { state in
            state.observers.values.filter { $0.cacheName == cacheName && $0.key == key }.map(\.signal)
        }
        for signal in signals { signal.fire() }
    }

    /// Wakes the observers of every collection of one cache name (a change by id, which
    /// touches every collection holding its items).
    func notify(cacheName: String) {
        let signals = state.withLock { state in
            state.observers.values.filter { $0.cacheName == cacheName }.map(\.signal)
        }
        for signal in signals { signal.fire() }
    }

    /// Wakes every observer.
    func notifyAll() {
        let signals = state.withLock { $0.observers.values.map(\.signal) }
        for signal in signals { signal.fire() }
    }
}
