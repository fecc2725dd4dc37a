// The one lock primitive of the library: a word, taken inline when uncontended. Every `LockedState` (a
// container's state, a reset block's log, the wait-for graph, the diagnostics) keeps one beside its value.
#pragma once

#include <stdint.h>
#if defined(__APPLE__)
#include <os/lock.h>
#else
#include <stdatomic.h>
#endif

/// Takes a lock after a failed first attempt: spins briefly (a pause instruction, never `sched_yield`),
/// then waits in the kernel. Called by `_injection_lock`; not meant to be called directly.
void _injection_lock_contended(uint32_t *_Nonnull word);

/// Wakes a thread waiting in `_injection_lock_contended`. Called by `_injection_unlock`; not meant to be
/// called directly.
void _injection_unlock_contended(uint32_t *_Nonnull word);

/// Takes the lock whose zero-initialized word is at `word` (a fixed address); blocks while another thread
/// holds it. Not recursive.
///
/// `os_unfair_lock` on Apple platforms. Elsewhere a futex lock: uncontended, one compare-and-swap to take
/// it and one exchange to release it; a contended taker spins briefly, then sleeps in the kernel until
/// woken (a plain glibc mutex goes to the kernel at once when two threads hammer it).
static inline void _injection_lock(uint32_t *_Nonnull word) {
#if defined(__APPLE__)
    os_unfair_lock_lock((os_unfair_lock_t)word);
#else
    uint32_t expected = 0;
    if (__builtin_expect(atomic_compare_exchange_strong_explicit(
            (_Atomic uint32_t *)word, &expected, 1, memory_order_acquire, memory_order_relaxed), 1)) {
        return;
    }
    _injection_lock_contended(word);
#endif
}

/// Releases the lock at `word`, which the calling thread took with `_injection_lock`.
static inline void _injection_unlock(uint32_t *_Nonnull word) {
#if defined(__APPLE__)
    os_unfair_lock_unlock((os_unfair_lock_t)word);
#else
    // 1: held, nobody waiting; 2: held, maybe with waiters, who need a wake-up.
    if (__builtin_expect(atomic_exchange_explicit((_Atomic uint32_t *)word, 0, memory_order_release) != 1, 0)) {
        _injection_unlock_contended(word);
    }
#endif
}

/// Adds `delta` to the count of locks the calling thread holds (debug builds call it around every hold).
void _injection_locks_held_add(int delta);

/// How many locks the calling thread holds, as counted by `_injection_locks_held_add`.
int _injection_locks_held(void);
