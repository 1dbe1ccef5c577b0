// The atomics are inline in the header; the futex calls are here, where <sys/syscall.h> stays
// out of Swift's view.
#include "AppCacheAtomics.h"

#if defined(__linux__)
#include <errno.h>
#include <time.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

int appcache_futex_wait(const uint32_t *word, uint32_t expected, uint32_t timeout_seconds) {
    // Shared (not FUTEX_PRIVATE): waiters in other processes mapping the same file are woken.
    struct timespec timeout = { .tv_sec = timeout_seconds, .tv_nsec = 0 };
    long result = syscall(SYS_futex, word, FUTEX_WAIT, expected, timeout_seconds ? &timeout : NULL, NULL, 0);
    if (result == 0) return 0;
    return (errno == EAGAIN || errno == ETIMEDOUT) ? 1 : -1;
}

int appcache_futex_wake(const uint32_t *word) {
    return (int)syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

int appcache_futex_available(void) { return 1; }

#if defined(SYS_openat2) && __has_include(<linux/openat2.h>)
#include <linux/openat2.h>

int appcache_open_beneath(int directory, const char *path, int flags, unsigned int mode) {
    struct open_how how = {
        .flags = (uint64_t)(unsigned int)flags, .mode = mode, .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH
    };
    return (int)syscall(SYS_openat2, directory, path, &how, sizeof how);
}
#else
int appcache_open_beneath(int directory, const char *path, int flags, unsigned int mode) {
    (void)directory; (void)path; (void)flags; (void)mode;
    errno = ENOSYS;
    return -1;
}
#endif
#else
int appcache_futex_wait(const uint32_t *word, uint32_t expected, uint32_t timeout_seconds) {
    (void)word; (void)expected; (void)timeout_seconds; return -1;
}
int appcache_futex_wake(const uint32_t *word) { (void)word; return -1; }
int appcache_futex_available(void) { return 0; }

#include <errno.h>
#include <fcntl.h>

int appcache_open_beneath(int directory, const char *path, int flags, unsigned int mode) {
#if defined(O_NOFOLLOW_ANY)
    return openat(directory, path, flags | O_NOFOLLOW_ANY, mode);
#else
    (void)directory; (void)path; (void)flags; (void)mode;
    errno = ENOSYS;
    return -1;
#endif
}
#endif
