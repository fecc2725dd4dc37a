#if defined(__linux__)
#define _GNU_SOURCE  // syscall()
#endif
#include "InjectionLock.h"
#include "check.h"

// A count per thread, for the tests' check that no user code runs under a lock (debug builds only).
static _Thread_local int locks_held = 0;

void _injection_locks_held_add(int delta) { locks_held += delta; }

int _injection_locks_held(void) { return locks_held; }

#if defined(__APPLE__)

void _injection_lock_contended(uint32_t *word) {
    os_unfair_lock_lock((os_unfair_lock_t)word);
}

void _injection_unlock_contended(uint32_t *word) {
    os_unfair_lock_unlock((os_unfair_lock_t)word);
}

#elif defined(__linux__)

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline void pause_briefly(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
}

// The word is 0 (free), 1 (held) or 2 (held, and a taker may be asleep in the kernel).
void _injection_lock_contended(uint32_t *word) {
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
        if (syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0) == -1 && errno != EAGAIN && errno != EINTR) {
            _injection_check(errno, "futex(FUTEX_WAIT_PRIVATE)");
        }
    }
}

void _injection_unlock_contended(uint32_t *word) {
    if (syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0) == -1) {
        _injection_check(errno, "futex(FUTEX_WAKE_PRIVATE)");
    }
}

#else
#error "Injection: no lock for this platform (add one to lock.c)"
#endif
