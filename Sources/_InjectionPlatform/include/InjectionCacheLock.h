// A one-word lock. Each thread's instance cache has one: taken by its own thread on every cache hit
// (uncontended), by other threads only to evict entries or to drop a deinitialized container's table.
// `InjectLazy` keeps one for its resolved value.
#ifndef INJECTION_CACHE_LOCK_H
#define INJECTION_CACHE_LOCK_H

#include <stdint.h>
#if defined(__APPLE__)
#include <os/lock.h>
#else
#include <stdatomic.h>
#endif

/// Takes a cache lock after a failed first attempt: spins briefly (a pause instruction, never
/// `sched_yield`), then waits in the kernel.
/// Called by `_injection_cache_lock`; not meant to be called directly.
void _injection_cache_lock_contended(uint32_t *_Nonnull word);

/// Wakes a thread waiting in `_injection_cache_lock_contended`. Called by `_injection_cache_unlock`; not
/// meant to be called directly.
void _injection_cache_unlock_contended(uint32_t *_Nonnull word);

/// Takes the cache lock whose zero-initialized word is at `word` (a fixed address).
///
/// `os_unfair_lock` on Apple platforms. Elsewhere a futex-style lock: uncontended, one compare-and-swap
/// to take it and one exchange to release it; a contended taker spins briefly, then sleeps in the kernel
/// until woken.
static inline void _injection_cache_lock(uint32_t *_Nonnull word) {
#if defined(__APPLE__)
    os_unfair_lock_lock((os_unfair_lock_t)word);
#else
    uint32_t expected = 0;
    if (__builtin_expect(atomic_compare_exchange_strong_explicit(
            (_Atomic uint32_t *)word, &expected, 1, memory_order_acquire, memory_order_relaxed), 1)) {
        return;
    }
    _injection_cache_lock_contended(word);
#endif
}

/// Releases the cache lock at `word`, taken by the calling thread with `_injection_cache_lock`.
static inline void _injection_cache_unlock(uint32_t *_Nonnull word) {
#if defined(__APPLE__)
    os_unfair_lock_unlock((os_unfair_lock_t)word);
#else
    // 1: held, nobody waiting; 2: held, maybe with waiters, who need a wake-up.
    if (__builtin_expect(atomic_exchange_explicit((_Atomic uint32_t *)word, 0, memory_order_release) != 1, 0)) {
        _injection_cache_unlock_contended(word);
    }
#endif
}

#endif
