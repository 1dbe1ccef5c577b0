/// The app-wide events watches refetch on (see ``RefreshTriggers``): the app becoming active,
/// the network coming back, and whether the app is in the background (polling pauses there).
///
/// Each watch registers its triggers and its ``ChangeSignal``; an event marks the watches it
/// concerns and fires their signals, and each watch takes its marks when it wakes. Nothing runs
/// while no event comes.
///
/// Thread safety: `Sendable`; signals are fired outside the lock.
final class RefreshTriggerHub: Sendable {
    private struct Watch {
        var triggers: RefreshTriggers
        var signal: ChangeSignal
        var foreground = false
        var reconnect = false
    }

    private struct State {
        var watches: [UInt64: Watch] = [:]
        var next: UInt64 = 0
        var isInBackground = false
        var pathMonitorClaimed = false
    }

    private let state = Locked(State())

    /// Adds a watch.
    ///
    /// - Returns: its identifier, for ``take(_:)`` and ``remove(_:)``.
    func register(_ triggers: RefreshTriggers, signal: ChangeSignal) -> UInt64 {
        state.withLock { state in
            state.next += 1
            state.watches[state.next] = Watch(triggers: triggers, signal: signal)
            return state.next
        }
    }

    func remove(_ identifier: UInt64) {
        state.withLock { $0.watches[identifier] = nil }
    }

    /// The app became active: watches refetching on foreground are marked; polling resumes.
    func foreground() {
        let signals = state.withLock { state -> [ChangeSignal] in
            state.isInBackground = false
            var signals: [ChangeSignal] = []
            for (identifier, watch) in state.watches where watch.triggers.onForeground || watch.triggers.every != nil {
                if watch.triggers.onForeground { state.watches[identifier]?.foreground = true }
                signals.append(watch.signal)
            }
            return signals
        }
        for signal in signals { signal.fire() }
    }

    /// The app went to the background: polling pauses.
    func background() {
        state.withLock { $0.isInBackground = true }
    }

    /// The network is available again: watches refetching on reconnect are marked.
    func reconnect() {
        let signals = state.withLock { state -> [ChangeSignal] in
            var signals: [ChangeSignal] = []
            for (identifier, watch) in state.watches where watch.triggers.onReconnect {
                state.watches[identifier]?.reconnect = true
                signals.append(watch.signal)
            }
            return signals
        }
        for signal in signals { signal.fire() }
    }

    /// The marks of watch `identifier` since it last looked, cleared.
    func take(_ identifier: UInt64) -> (foreground: Bool, reconnect: Bool) {
        state.withLock { state in
            guard let watch = state.watches[identifier] else { return (false, false) }
            state.watches[identifier]?.foreground = false
            state.watches[identifier]?.reconnect = false
            return (watch.foreground, watch.reconnect)
        }
    }

    /// Whether the app is in the background (as last told).
    var isInBackground: Bool {
        state.withLock { $0.isInBackground }
    }

    /// `true` once: whoever gets it starts the platform's network path monitor.
    func claimPathMonitor() -> Bool {
        state.withLock { state in
            defer { state.pathMonitorClaimed = true }
            return !state.pathMonitorClaimed
        }
    }
}
