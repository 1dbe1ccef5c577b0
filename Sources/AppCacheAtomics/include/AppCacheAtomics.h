// Atomic access to 64-bit words in memory that several processes map (the lock file's shared
// words, see ProcessCoordinator). Swift 6.0 at the package's iOS 16 floor has no atomics that
// work on such memory (the Synchronization module's `Atomic` needs iOS 18), so these few C11
// functions give every access one atomic instruction with the ordering it needs. Plain Swift
// loads and stores of memory another thread or process writes are a data race.
#ifndef APPCACHE_ATOMICS_H
#define APPCACHE_ATOMICS_H

#include <stdint.h>
#include <stdatomic.h>

/// Reads the word at `word` with acquire ordering: what its writer wrote before the matching
/// release store is visible after this load.
static inline uint64_t appcache_load_acquire(const uint64_t *word) {
    return atomic_load_explicit((const _Atomic(uint64_t) *)word, memory_order_acquire);
}

/// Writes `value` to the word at `word` with release ordering.
static inline void appcache_store_release(uint64_t *word, uint64_t value) {
    atomic_store_explicit((_Atomic(uint64_t) *)word, value, memory_order_release);
}

/// Adds one to the word at `word` in one atomic step and returns the new value.
static inline uint64_t appcache_increment(uint64_t *word) {
    return atomic_fetch_add_explicit((_Atomic(uint64_t) *)word, 1, memory_order_acq_rel) + 1;
}

/// Replaces the word at `word` with `desired` if it still holds `expected`, in one atomic step.
/// Returns 1 when it did, 0 when the word held something else.
static inline int appcache_compare_exchange(uint64_t *word, uint64_t expected, uint64_t desired) {
    return atomic_compare_exchange_strong_explicit(
        (_Atomic(uint64_t) *)word, &expected, desired, memory_order_acq_rel, memory_order_acquire);
}

/// Whether 64-bit atomics on this platform are lock-free, as memory shared between processes
/// requires (a lock inside the library would not be shared).
static inline int appcache_atomics_are_lock_free(void) {
    _Atomic(uint64_t) probe = 0;
    return atomic_is_lock_free(&probe);
}

/// Sleeps until another thread or process calls `appcache_futex_wake` on `word` (the low half
/// of a shared word), unless `*word` is no longer `expected`, for at most `timeout_seconds`
/// (0: no limit). Returns 0 when woken, 1 when the word had already changed or the time ran
/// out, -1 on an error or where futexes do not exist (not Linux).
int appcache_futex_wait(const uint32_t *word, uint32_t expected, uint32_t timeout_seconds);

/// Wakes every waiter on `word`, in every process that maps it. Returns how many were woken,
/// or -1.
int appcache_futex_wake(const uint32_t *word);

/// Whether this platform has the futex calls above (Linux).
int appcache_futex_available(void);

/// Opens `path` (relative, one or more components) under the directory `directory`, following
/// no symbolic link in any component and never leaving `directory`: `openat2` with
/// `RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH` on Linux, `O_NOFOLLOW_ANY` on Apple platforms.
/// Returns the descriptor, or -1 with `errno` set: `ELOOP` (or `EXDEV`) when a link is in the
/// way, `ENOSYS` where the system cannot open this way (Linux before 5.6, `seccomp` filters).
int appcache_open_beneath(int directory, const char *path, int flags, unsigned int mode);

#endif
