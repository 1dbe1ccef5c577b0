import Foundation

/// One thread with a 64 MiB stack on which long, blocking test bodies run, one after another.
///
/// Swift Testing runs a synchronous test on a thread of Swift concurrency's cooperative pool,
/// which has one thread per core: two here. A test that computes or blocks for many seconds
/// (an exhaustive damage sweep, a thousand writes, hundreds of codec shapes) holds one, and two
/// such tests hold the pool, so the asynchronous tests (loads, watches, the outbox), which need
/// a pool thread for each step, make no progress and miss their waits, the more so under the
/// sanitizers. Run through ``heavy(_:)``, such a body runs here instead, as a job of its test's
/// own task (so `#expect` still records against it): at most one core goes to heavy bodies, and
/// the pool stays free. The large stack takes the deepest codec shapes, whose frames the
/// sanitizers enlarge.
public final class HeavyTestThread: TaskExecutor, @unchecked Sendable {
    public static let shared = HeavyTestThread()

    /// Guards `jobs`; signalled when one is added.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    private init() {
        let thread = Thread { [self] in serve() }
        thread.stackSize = 64 << 20
        thread.name = "heavy tests"
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func serve() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// Runs `body`, a long or blocking test body, on ``HeavyTestThread`` and suspends the caller's
/// task meanwhile, leaving the cooperative pool to the tests that wait on other tasks.
public func heavy<Result>(_ body: () throws -> Result) async rethrows -> Result {
    try await withTaskExecutorPreference(HeavyTestThread.shared) { try body() }
}
