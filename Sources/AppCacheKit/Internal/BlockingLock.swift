import Foundation

/// A value guarded by a lock whose documented job is to be held across file I/O: it orders the
/// disk writes of one process (``DiskWriter``).
///
/// Unlike ``Locked``, a waiter sleeps in the kernel (a `pthread_mutex` behind `NSLock`) rather
/// than spinning, since the holder may take milliseconds. Memory hits never take it, and the
/// cache never waits for it on a task of Swift concurrency's cooperative pool: async callers
/// reach it through ``LibraryThreads``.
final class BlockingLock<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    init(_ initial: Value) {
        value = initial
    }

    /// Runs `body` with exclusive access to the value, waiting for the lock as long as it takes.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
