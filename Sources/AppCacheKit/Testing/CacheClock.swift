public import Foundation

/// A clock a test (or a preview) moves by hand: the cache's dates and timers follow it, so a
/// test ages a collection, lets a retry's backoff or a polling interval pass, or reaches a
/// write-back's moment without touching files or sleeping.
///
/// Give it to ``AppCache/Configuration/clock`` (``AppCache/Configuration/testing(rootDirectory:schemaVersion:user:clock:)``
/// does). From then on the cache's cached dates, staleness, expiries and invalidations read
/// ``now``; the waits it makes (a failed fetch's retry backoff, a watch's polling interval, a
/// queued change's send backoff, the write-back delay) end when ``advance(by:)`` moves the
/// clock past them, and only then.
///
/// ```swift
/// let clock = CacheClock()
/// let cache = try AppCache(configuration: .testing(rootDirectory: url, clock: clock))
/// try cache.cacheItems([Post(id: 1, title: "Hello")], forKey: "top")
/// clock.advance(by: .seconds(2 * 86_400))      // two days later, at once
/// assert(cache.isStale(Post.self, forKey: "top"))
/// ```
///
/// Thread safety: `Sendable`; any thread may read or advance it. Timers that come due run
/// after ``advance(by:)`` has moved the clock, on the cache's own threads, never on the
/// caller's.
public final class CacheClock: Sendable {
    private struct Timer {
        var deadline: Duration
        var fire: @Sendable () -> Void
    }

    private struct State {
        var now: Date
        var elapsed: Duration = .zero
        var timers: [UInt64: Timer] = [:]
        var lastTimer: UInt64 = 0
    }

    private let state: Locked<State>

    /// A clock that reads `now` until it is advanced.
    ///
    /// - Parameter now: the moment it starts at; a fixed one by default, so that tests are
    ///   the same on every run.
    public init(now: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        state = Locked(State(now: now))
    }

    /// The moment the clock reads.
    public var now: Date { state.withLock { $0.now } }

    /// How far the clock was moved since it was made: what the cache's timers count in.
    var elapsed: Duration { state.withLock { $0.elapsed } }

    /// Moves the clock forward by `duration`, then runs every timer that came due, earliest
    /// first.
    ///
    /// - Parameter duration: how far; a negative one is taken as zero (the clock never goes
    ///   back).
    public func advance(by duration: Duration) {
        let due = state.withLock { state -> [Timer] in
            let step = max(duration, .zero)
            state.elapsed += step
            state.now = state.now.addingTimeInterval(step.timeInterval)
            let due = state.timers.filter { $0.value.deadline <= state.elapsed }.sorted { $0.value.deadline < $1.value.deadline }
            for (id, _) in due { state.timers[id] = nil }
            return due.map(\.value)
        }
        for timer in due { timer.fire() }
    }

    /// Runs `fire` once the clock has been advanced by `delay` from now (at once for none).
    ///
    /// - Returns: the timer's number, for ``cancel(_:)``.
    @discardableResult
    func schedule(after delay: Duration, _ fire: @escaping @Sendable () -> Void) -> UInt64 {
        let id = state.withLock { state -> UInt64? in
            guard delay > .zero else { return nil }
            state.lastTimer += 1
            state.timers[state.lastTimer] = Timer(deadline: state.elapsed + delay, fire: fire)
            return state.lastTimer
        }
        guard let id else {
            fire()
            return 0
        }
        return id
    }

    /// Forgets the timer `id` if it has not run.
    func cancel(_ id: UInt64) {
        state.withLock { _ = $0.timers.removeValue(forKey: id) }
    }

    /// How many timers wait for the clock to move: a test can wait for a retry or a poll to be
    /// scheduled before it advances the clock.
    public var waitingTimers: Int { state.withLock { $0.timers.count } }
}
