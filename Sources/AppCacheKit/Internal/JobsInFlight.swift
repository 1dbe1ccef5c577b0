import Foundation

/// How many jobs were handed to a queue and have not finished, and a way to wait until none
/// is left, that never enters libdispatch: what a `deinit` waits on instead of `queue.sync {}`.
///
/// An object's `deinit` may run while its thread exits, in a destructor of the thread's
/// specific data (the last reference held by a `Thread`'s closure, released by Foundation as
/// the thread ends). On Linux, libdispatch has already freed its own data of that thread then,
/// without forgetting it: a dispatch call made afterwards sets the thread up again over the
/// freed continuations, and the thread's exit frees them a second time (a corrupted heap, then
/// an abort in `malloc` or a crash in a later dispatch worker). A wait on a condition lock
/// (`pthread` underneath) is safe there.
///
/// Thread safety: `Sendable`; the count sits behind one condition lock, held for a few
/// instructions (unchecked: the compiler cannot see that lock guard it).
final class JobsInFlight: @unchecked Sendable {
    private let condition = NSCondition()
    private var count = 0

    /// Counts one more job; call before handing it to its queue.
    func begin() {
        condition.lock()
        count += 1
        condition.unlock()
    }

    /// Counts a job of ``begin()`` as finished; call as its last step.
    func end() {
        condition.lock()
        count -= 1
        precondition(count >= 0, "a job ended that never began")
        if count == 0 { condition.broadcast() }
        condition.unlock()
    }

    /// Returns once every job begun before the call has ended (at once when none is in flight).
    /// Never call it from one of the jobs: it would wait for itself.
    ///
    /// - Complexity: one lock when nothing is in flight.
    func waitUntilNone() {
        condition.lock()
        while count > 0 { condition.wait() }
        condition.unlock()
    }

    /// The jobs begun and not yet ended.
    var inFlight: Int {
        condition.lock()
        defer { condition.unlock() }
        return count
    }
}
