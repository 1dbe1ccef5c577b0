import Foundation

/// Keeps the cross-process lock out of suspension: iOS terminates a suspended process that holds
/// a file lock in an App Group container (`0xdead10cc`), and a stopped peer that holds it stops
/// everyone else's writes.
///
/// Every batch of disk writes passes the gate (``enter()`` before the lock file is locked,
/// ``leave()`` after it is let go):
///
/// - **An assertion around every locked batch.** Where the platform has one (iOS, tvOS, watchOS,
///   visionOS: `ProcessInfo.performExpiringActivity`, allowed in app extensions), the first
///   batch starts a background activity and waits until the system grants it; later batches
///   join it. The activity ends a quarter of a second after the last batch leaves, so a burst of
///   writes asks the system once, not once per write. Elsewhere there is no assertion to take.
/// - **Closed when time is up.** When the system says the activity is expiring, when the
///   extension host goes to the background (after the last flush), or when the system refuses
///   the activity outright, the gate closes: no new batch starts (``enter()`` says `false`)
///   until the app is active again (``open()``), a batch waiting for the lock file gives up at
///   once, and a batch in progress stops between two archives (``isClosed``) and lets go of the
///   lock. The archives it wrote are whole; the rest stay dirty in memory.
///
/// Thread safety: `Sendable`; the state sits behind one condition lock, never held while the
/// platform is asked for an activity or while a batch runs.
final class SuspensionGate: Sendable {
    /// Starts a platform background activity: calls `body(false)` on another thread once the
    /// activity is granted (the activity lasts until `body` returns) and `body(true)` when the
    /// system wants it to end, or refuses it. `ProcessInfo.performExpiringActivity`'s shape.
    typealias Activity = @Sendable (_ body: @escaping @Sendable (_ isExpiring: Bool) -> Void) -> Void

    /// How long an activity outlives the last batch, waiting for the next.
    static let linger: TimeInterval = 0.25

    private let startActivity: Activity?
    private let condition = NSCondition()
    private nonisolated(unsafe) var state = State()

    private struct State {
        /// Batches between ``enter()`` and ``leave()``.
        var holders = 0
        var isClosed = false
        /// The activity under way (0: none), and whether the system has granted it.
        var run = 0
        var grantedRun = 0
        var nextRun = 1
    }

    /// - Parameter startActivity: the platform's background activity; `nil` where there is none
    ///   (then the gate only closes when told to).
    init(startActivity: Activity?) {
        self.startActivity = startActivity
    }

    /// The platform's background activity: `ProcessInfo.performExpiringActivity` where the
    /// system suspends processes (iOS, tvOS, watchOS, visionOS), `nil` elsewhere.
    static var platformActivity: Activity? {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        return { body in
            ProcessInfo.processInfo.performExpiringActivity(withReason: "AppCache: writing shared cache files", using: body)
        }
        #else
        return nil
        #endif
    }

    /// Lets a batch start, inside a background activity where the platform has one (waiting
    /// for the system to grant it, a few milliseconds at most).
    ///
    /// - Returns: `false` when the gate is closed: the batch must not start. After `true`, call
    ///   ``leave()`` once the batch has let go of the lock file.
    func enter() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !state.isClosed else { return false }
        state.holders += 1
        guard let startActivity else { return true }
        if state.run == 0 {
            let run = state.nextRun
            state.nextRun += 1
            state.run = run
            condition.unlock()
            startActivity { [self] isExpiring in activity(run, isExpiring: isExpiring) }
            condition.lock()
        }
        while !state.isClosed && !(state.run != 0 && state.grantedRun == state.run) {
            condition.wait()
        }
        guard !state.isClosed else {
            state.holders -= 1
            condition.broadcast()
            return false
        }
        return true
    }

    /// Ends what ``enter()`` began.
    func leave() {
        condition.lock()
        state.holders -= 1
        if state.holders == 0 { condition.broadcast() }
        condition.unlock()
    }

    /// Whether the gate is closed: a batch in progress stops before its next archive.
    var isClosed: Bool {
        condition.lock()
        defer { condition.unlock() }
        return state.isClosed
    }

    /// Closes the gate (the extension host went to the background, the system said time is up).
    func close() {
        condition.lock()
        state.isClosed = true
        condition.broadcast()
        condition.unlock()
    }

    /// Opens the gate again: the app is active.
    func open() {
        condition.lock()
        state.isClosed = false
        condition.unlock()
    }

    /// The activity's body: `run` is the activity it belongs to.
    private func activity(_ run: Int, isExpiring: Bool) {
        condition.lock()
        defer { condition.unlock() }
        if isExpiring {
            // Time is up (or the activity was refused): close; the batches under way stop
            // between archives, and the granted body below returns once they have left.
            if state.run == run {
                state.isClosed = true
                if state.grantedRun != run { state.run = 0 }
            }
            condition.broadcast()
            return
        }
        guard state.run == run, !state.isClosed else {
            if state.run == run { state.run = 0 }
            condition.broadcast()
            return
        }
        state.grantedRun = run
        condition.broadcast()
        // Held while batches run, and a moment after for the next one.
        while true {
            while state.holders > 0 { condition.wait() }
            if state.isClosed { break }
            if !condition.wait(until: Date(timeIntervalSinceNow: Self.linger)), state.holders == 0 { break }
        }
        state.run = 0
        state.grantedRun = 0
    }
}
