import Foundation

/// One thread with a 64 MiB stack that runs the conformance shapes one after another.
///
/// The deepest shapes recurse through both coders hundreds of levels deep, which the
/// sanitizers' larger frames would take past a worker thread's stack. One thread, not one per
/// shape: the suite's hundreds of shapes then take at most one core, and never a thread of
/// Swift concurrency's cooperative pool, which the suite's asynchronous tests (loads, watches,
/// the outbox) need to make progress within their waits on a two-core machine.
final class LargeStackWorker: @unchecked Sendable {
    static let shared = LargeStackWorker()

    /// Guards `jobs`; signalled when one is added.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []

    private init() {
        let thread = Thread { [self] in serve() }
        thread.stackSize = 64 << 20
        thread.name = "conformance shapes"
        thread.start()
    }

    /// Runs `body` on the worker's thread after the jobs queued before it; the caller's task
    /// is suspended meanwhile, holding no thread.
    func run<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
        await withCheckedContinuation { continuation in
            condition.lock()
            jobs.append { continuation.resume(returning: body()) }
            condition.signal()
            condition.unlock()
        }
    }

    private func serve() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }
}
