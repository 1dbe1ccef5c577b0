#if canImport(AppCacheAtomics)
import AppCacheAtomics
#endif
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// 64-bit words in memory that several processes map, each read and written as one atomic
/// operation: loads acquire, stores release, increments are one read-modify-write.
///
/// Other processes write these words while this one reads them, and so do other threads of
/// this one, so plain Swift loads and stores would be a data race. Swift 6.0 at the iOS 16
/// floor has no atomic type that works on mapped memory (`Synchronization.Atomic` needs iOS 18),
/// so the accesses go through the package's small C target, `AppCacheAtomics`.
///
/// A build that cannot see that C module (a type-check of the Swift sources alone) reads and
/// writes the words through the file instead (`pread`/`pwrite` of the mapped file), which is
/// as sound, only slower.
struct SharedWords: @unchecked Sendable {
    /// The first word of the mapping; stays valid for the mapping's life.
    let base: UnsafeMutablePointer<UInt64>
    /// The mapped file, for builds without the C module.
    let descriptor: Int32

    /// Whether this platform's 64-bit atomics are lock-free, as sharing them between processes
    /// needs; checked once when a coordinator opens.
    static var areLockFree: Bool {
        #if canImport(AppCacheAtomics)
        appcache_atomics_are_lock_free() != 0
        #else
        true
        #endif
    }

    /// The word at `index`, read with acquire ordering.
    ///
    /// - Complexity: one atomic load.
    @inline(__always)
    func load(_ index: Int) -> UInt64 {
        #if canImport(AppCacheAtomics)
        appcache_load_acquire(base + index)
        #else
        var value: UInt64 = 0
        _ = SystemCalls.pread(descriptor, &value, 8, off_t(index * 8))
        return value
        #endif
    }

    /// Writes `value` to the word at `index` with release ordering.
    @inline(__always)
    func store(_ value: UInt64, at index: Int) {
        #if canImport(AppCacheAtomics)
        appcache_store_release(base + index, value)
        #else
        var value = value
        _ = SystemCalls.pwrite(descriptor, &value, 8, off_t(index * 8))
        #endif
    }

    /// Adds one to the word at `index` and returns the new value. Atomic: concurrent increments
    /// are never lost (the coordinator makes them under its lock all the same).
    @inline(__always)
    func increment(_ index: Int) -> UInt64 {
        #if canImport(AppCacheAtomics)
        appcache_increment(base + index)
        #else
        let next = load(index) &+ 1
        store(next, at: index)
        return next
        #endif
    }

    /// Replaces the word at `index` with `desired` if it still holds `expected`, as one atomic
    /// step (without the C module, a type-check-only build, as two steps).
    ///
    /// - Returns: whether it did.
    @inline(__always)
    func compareExchange(_ index: Int, expected: UInt64, desired: UInt64) -> Bool {
        #if canImport(AppCacheAtomics)
        appcache_compare_exchange(base + index, expected, desired) != 0
        #else
        guard load(index) == expected else { return false }
        store(desired, at: index)
        return true
        #endif
    }

    /// Whether a thread can sleep until another process changes a word (Linux futexes on the
    /// mapped file); elsewhere, other means wake the watcher (Darwin notifications).
    static var canWait: Bool {
        #if canImport(AppCacheAtomics)
        appcache_futex_available() != 0
        #else
        false
        #endif
    }

    /// Sleeps until a ``wake(_:)`` of the word at `index`, unless its low half is no longer that
    /// of `seen`, for at most a minute: one wake-up a minute while nothing changes. Spurious
    /// returns happen: the caller compares the word again.
    ///
    /// - Returns: `false` when it could not wait (no futexes here, or the call failed): the
    ///   caller must find another way to learn of changes.
    func wait(_ index: Int, whileStill seen: UInt64) -> Bool {
        #if canImport(AppCacheAtomics)
        // The low half of a little-endian word (every platform the package supports).
        let half = UnsafeRawPointer(base + index).assumingMemoryBound(to: UInt32.self)
        // A minute at most: a stop that raced the start of the wait (its wake-up came before
        // the sleep) costs a minute's wait, never a thread parked forever.
        return appcache_futex_wait(half, UInt32(truncatingIfNeeded: seen), 60) >= 0 || errno == EINTR
        #else
        return false
        #endif
    }

    /// Wakes every thread, of every process, waiting on the word at `index`.
    func wake(_ index: Int) {
        #if canImport(AppCacheAtomics)
        let half = UnsafeRawPointer(base + index).assumingMemoryBound(to: UInt32.self)
        _ = appcache_futex_wake(half)
        #endif
    }
}
