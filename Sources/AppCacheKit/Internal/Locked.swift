import Foundation

/// A value guarded by one lock, reachable only inside a closure.
///
/// The closure must be short: no file I/O, encoding or decoding while the lock is held, and no
/// call back into the cache. `NSLock` is used rather than `Mutex` because `Mutex` needs iOS 18 and
/// macOS 15, above this package's floor.
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
