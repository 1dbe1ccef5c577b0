#if APPCACHE_TSAN
import Foundation
#endif
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
import Synchronization
#elseif canImport(Musl)
import Musl
import Synchronization
#endif

/// A value guarded by one lock, reachable only inside a closure.
///
/// The closure must be short: no file I/O, encoding or decoding while the lock is held, and no
/// call back into the cache. Every memory hit takes this lock once, so it is the fastest lock
/// each platform offers below this package's deployment floor: `os_unfair_lock` on Apple
/// platforms, and on Linux the futex-based lock of the Synchronization module, whose
/// uncontended path is one inlined compare-and-exchange (about a third of a
/// `pthread_mutex_lock`/`unlock` pair, measured with `AppCacheBenchmarks memory-hit`). The
/// value lives in memory this class allocates, so an access needs no exclusivity check.
final class Locked<Value>: @unchecked Sendable {
    private let value: UnsafeMutablePointer<Value>
    #if canImport(Darwin)
    private let lock: UnsafeMutablePointer<os_unfair_lock>
    #elseif APPCACHE_TSAN
    // ThreadSanitizer cannot see the futex-based lock's ordering, and would report every value
    // behind it as a race: `Scripts/sanitize` builds with this flag, and a pthread mutex.
    private let lock = NSLock()
    #else
    private let lock = Mutex<Void>(())
    #endif

    init(_ initial: Value) {
        value = .allocate(capacity: 1)
        value.initialize(to: initial)
        #if canImport(Darwin)
        lock = .allocate(capacity: 1)
        lock.initialize(to: os_unfair_lock())
        #endif
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
        #if canImport(Darwin)
        lock.deinitialize(count: 1)
        lock.deallocate()
        #endif
    }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        #if canImport(Darwin)
        os_unfair_lock_lock(lock)
        defer { os_unfair_lock_unlock(lock) }
        #elseif APPCACHE_TSAN
        lock.lock()
        defer { lock.unlock() }
        #else
        lock._unsafeLock()
        defer { lock._unsafeUnlock() }
        #endif
        return try body(&value.pointee)
    }
}
