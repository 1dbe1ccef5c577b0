import Foundation

/// A fixed number of threads at most, taking jobs in the order they came: what
/// ``LibraryThreads`` runs blocking work on.
///
/// A thread starts when a job finds no idle thread and fewer than ``width`` are running, and
/// ends once it has had nothing to do for ``idleTimeout``: a process that stops using the cache
/// (every stream cancelled) is left with none. However many jobs are queued (200 watches
/// looking at once), no more than ``width`` threads run them.
///
/// No job waits for another job of the pool, so a bounded pool cannot deadlock: a job is
/// synchronous and cannot await ``LibraryThreads/run(_:)``; what it may wait for is held by a
/// thread that is already running (an in-process lock, the write-back queue), by another process
/// (the lock file, given up after the configuration's `lockTimeout`), or by the platform
/// (a background activity). A job that waits for the lock file holds its thread meanwhile: while
/// a stopped process holds the root's lock, up to ``width`` writes wait at most `lockTimeout`
/// each, and later jobs queue behind them.
///
/// Thread safety: `Sendable`; the queue sits behind one condition lock, never held while a
/// job runs (unchecked: the compiler cannot see that lock guard the state's memory).
final class ThreadPool: @unchecked Sendable {
    /// The most threads the pool runs at once.
    let width: Int
    /// How long a thread waits for a job before it ends.
    let idleTimeout: Duration
    private let name: String
    private let condition = NSCondition()
    /// Read and changed only with `condition` locked. It lives in memory the pool allocates,
    /// as `Locked`'s value does, so an access needs no exclusivity check (with a stored
    /// property, an optimised build reported the accesses of one thread's loop as overlapping).
    private let state: UnsafeMutablePointer<State>

    private struct State {
        /// The jobs not yet taken, oldest first from `head`.
        var jobs: [(@Sendable () -> Void)?] = []
        var head = 0
        /// The threads running, and how many of them wait for a job.
        var threads = 0
        var idle = 0
        /// The most threads that ran at once.
        var peak = 0

        var queued: Int { jobs.count - head }

        mutating func take() -> (@Sendable () -> Void)? {
            guard head < jobs.count else { return nil }
            let job = jobs[head]
            jobs[head] = nil
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: jobs.capacity <= 1024)
                head = 0
            } else if head >= 1024, head * 2 >= jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            return job
        }
    }

    /// - Parameters:
    ///   - name: the threads' name (as a debugger and `/proc/self/task/*/comm` show it).
    ///   - width: the most threads at once; at least 1.
    ///   - idleTimeout: how long an idle thread lives.
    init(name: String, width: Int, idleTimeout: Duration) {
        precondition(width >= 1, "a thread pool needs a thread")
        self.name = name
        self.width = width
        self.idleTimeout = idleTimeout
        state = .allocate(capacity: 1)
        state.initialize(to: State())
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Queues `job`; a thread of the pool runs it as soon as one is free.
    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        state.pointee.jobs.append(job)
        // More jobs waiting than idle threads to take them: one more thread, if allowed.
        let start = state.pointee.queued > state.pointee.idle && state.pointee.threads < width
        if start {
            state.pointee.threads += 1
            state.pointee.peak = max(state.pointee.peak, state.pointee.threads)
        }
        if state.pointee.idle > 0 { condition.signal() }
        condition.unlock()
        if start {
            let name = name
            let thread = Thread { [self] in
                // Set on the thread itself: on Linux a name given before the start is not applied.
                Thread.current.name = name
                work()
            }
            thread.qualityOfService = .userInitiated
            thread.start()
        }
    }

    /// A thread's life: jobs until there have been none for ``idleTimeout``.
    private func work() {
        condition.lock()
        while true {
            var job = state.pointee.take()
            if job != nil {
                condition.unlock()
                Self.runAndRelease(&job)
                condition.lock()
                continue
            }
            state.pointee.idle += 1
            let woken = condition.wait(until: Date(timeIntervalSinceNow: idleTimeout.timeInterval))
            state.pointee.idle -= 1
            if !woken && state.pointee.queued == 0 {
                state.pointee.threads -= 1
                condition.unlock()
                return
            }
        }
    }

    /// Runs `job` and lets go of it (and of what it captured) before returning, so before the
    /// caller takes the lock again: a capture's last reference may end in a `deinit` that hands
    /// work to this pool (``LibraryThreads/handOff(_:)``), and with the lock held that `submit`
    /// would wait for itself. (Left to the optimiser, the release could come after the lock.)
    @inline(never)
    private static func runAndRelease(_ job: inout (@Sendable () -> Void)?) {
        job?()
        job = nil
    }

    /// The threads running now, the most that ever ran at once, and the jobs waiting for one.
    var census: (threads: Int, peak: Int, queued: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (state.pointee.threads, state.pointee.peak, state.pointee.queued)
    }
}
