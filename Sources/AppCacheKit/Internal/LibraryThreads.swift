import Dispatch

/// The library's own threads for blocking work that an async caller awaits: disk reads and
/// writes, file locks and the writer's lock never run on a thread of Swift concurrency's
/// cooperative pool, which has one thread per core and stalls every task of the process when
/// those threads wait (in one sanitizer run with both cores busy, an `updates` stream's first
/// value did not arrive within 30 s).
///
/// The work runs on one ``ThreadPool`` of the process, at most ``width`` threads whatever the
/// number of streams, loads and caches: 200 `watch` streams looking at once queue their reads
/// for those threads rather than have a thread each. (Before, each job had a serial Dispatch
/// queue of its own, and Dispatch started an overcommitting thread for every job that found
/// none free: 200 watches started over 200 threads.) The threads end after a second without
/// work. No job waits for another job of the pool (see ``ThreadPool``), so the bound cannot
/// deadlock; a job waiting for a stopped process's lock file holds its thread for at most the
/// configuration's `lockTimeout`.
enum LibraryThreads {
    /// The most threads the library runs blocking work on at once.
    static let width = 4

    /// The pool the work runs on, shared by every cache of the process.
    static let pool = ThreadPool(name: "AppCache.work", width: width, idleTimeout: .seconds(1))

    /// Runs `work` on a library thread and returns what it returns (or throws what it
    /// throws), suspending the calling task meanwhile without blocking its thread.
    ///
    /// `work` (and what it captures, such as the cache) is released before the caller resumes:
    /// the last reference to a cache is never dropped on a library thread behind the caller's
    /// back, where its `deinit` would write while the caller has moved on.
    static func run<Result>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        let box = WorkBox(work)
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Handoff<Result>, any Error>) in
            pool.submit {
                let result = Swift.Result { Handoff(value: try box.run()) }
                continuation.resume(with: result)
            }
        }.value
    }

    /// Runs `work` on a library thread soon, without waiting for it: what a `deinit` does that
    /// cancels or resumes a task.
    ///
    /// Cancelling a suspended task, or resuming it, enqueues it on Swift concurrency's global
    /// executor, which is a Dispatch call; and a `deinit` may run in the exit of a thread whose
    /// closure held the last reference (a cache, a query), after libdispatch freed its data of
    /// the thread: on Linux a Dispatch call there makes the exit free that memory a second time
    /// (heap corruption; see ``JobsInFlight``). Handing the work over takes a lock and signals a
    /// condition, no Dispatch call.
    static func handOff(_ work: @escaping @Sendable () -> Void) {
        pool.submit(work)
    }

    /// Runs `work`, which cannot fail, on a library thread (see ``run(_:)``).
    static func run<Result>(_ work: @escaping @Sendable () -> Result) async -> Result {
        let box = WorkBox(work)
        return await withCheckedContinuation { (continuation: CheckedContinuation<Handoff<Result>, Never>) in
            pool.submit {
                let result = Handoff(value: try! box.run())
                continuation.resume(returning: result)
            }
        }.value
    }

    /// Holds the work until it runs, then lets go of it (and of what it captured).
    private final class WorkBox<Result>: @unchecked Sendable {
        private var work: (@Sendable () throws -> Result)?

        init(_ work: @escaping @Sendable () throws -> Result) {
            self.work = work
        }

        /// Runs the work once, on one thread; the box is not touched by any other.
        func run() throws -> Result {
            let work = work.moveOut()!
            return try work()
        }
    }

    /// A value made on a library thread and handed to the one task that awaits it: it is never
    /// used by two threads at once, so it crosses without being `Sendable` itself (the items
    /// of a model type are `Sendable`; the read structures carrying them are plain values).
    private struct Handoff<Value>: @unchecked Sendable {
        let value: Value
    }
}
