#if defined(__linux__)
#define _GNU_SOURCE
#endif
#include "InjectionCacheLock.h"
#include "check.h"

#if defined(__APPLE__)

void _injection_cache_lock_contended(uint32_t *word) {
    os_unfair_lock_lock((os_unfair_lock_t)word);
}

void _injection_cache_unlock_contended(uint32_t *word) {
    os_unfair_lock_unlock((os_unfair_lock_t)word);
}

#elif defined(__linux__)

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

// The word: 0 free, 1 held, 2 held and maybe waited for. A contended taker marks the word 2 and sleeps
// on it in the kernel; an unlock that finds 2 wakes one sleeper, which takes the lock marked 2 again
// (it cannot know whether others still sleep). The owner holds the lock for a few nanoseconds on a
// cache hit, so a taker first spins briefly; an evicting thread may hold it for milliseconds, which is
// what the kernel wait is for.

static inline void pause_briefly(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
}

void _injection_cache_lock_contended(uint32_t *word) {
    _Atomic uint32_t *lock = (_Atomic uint32_t *)word;
    for (int spin = 0; spin < 100; spin++) {
        uint32_t expected = 0;
        if (atomic_load_explicit(lock, memory_order_relaxed) == 0
            && atomic_compare_exchange_weak_explicit(lock, &expected, 1, memory_order_acquire, memory_order_relaxed)) {
            return;
        }
        pause_briefly();
    }
    while (atomic_exchange_explicit(lock, 2, memory_order_acquire) != 0) {
        // Returns at once (EAGAIN) if the word is no longer 2; EINTR and EAGAIN just mean "look again".
        if (syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0) == -1 && errno != EAGAIN && errno != EINTR) {
            _injection_check(errno, "futex(FUTEX_WAIT_PRIVATE)");
        }
    }
}

void _injection_cache_unlock_contended(uint32_t *word) {
    if (syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0) == -1) {
        _injection_check(errno, "futex(FUTEX_WAKE_PRIVATE)");
    }
}

#else
#error "Injection: no cache lock for this platform (add one to cache_lock.c)"
#endif
