#ifndef INJECTION_ATOMICS_H
#define INJECTION_ATOMICS_H

#include <stdint.h>

/// Process-wide count of live resolution contexts (bound containers, running factories, open resets).
/// While it is zero no task can see a context, so the hot path skips the task-local read.
intptr_t _injection_context_count(void);

/// Adds `delta` to the count of live resolution contexts.
void _injection_context_count_add(intptr_t delta);

/// Loads a 64-bit word written only with `_injection_store_u64` (a container's scope number).
uint64_t _injection_load_u64(const uint64_t *word);

/// Stores a 64-bit word that other threads read with `_injection_load_u64`.
void _injection_store_u64(uint64_t *word, uint64_t value);

/// The calling thread's Injection state (a retained `_ThreadState`), or NULL: a C thread-local, read
/// with one load, where `pthread_getspecific` is a call and a Swift global a lazy-initialization check.
/// The state's pthread key still exists for its destructor.
extern __thread void *_injection_thread_state_word;

static inline void *_injection_thread_state(void) {
    return _injection_thread_state_word;
}

static inline void _injection_set_thread_state(void *state) {
    _injection_thread_state_word = state;
}

#endif

#ifndef INJECTION_CACHE_LOCK_H
#define INJECTION_CACHE_LOCK_H
// A small lock for per-thread caches: taken by the owning thread on every cache hit (uncontended), by
// other threads only to evict. `word` must be zero-initialized and stay at a fixed address. Inline, so
// taking it costs no call.
#if defined(__APPLE__)
// Spin locks invert priorities on Apple platforms; os_unfair_lock is the uncontended-fast lock there.
#include <os/lock.h>
static inline void _injection_cache_lock(uint32_t *word) { os_unfair_lock_lock((os_unfair_lock_t)word); }
static inline void _injection_cache_unlock(uint32_t *word) { os_unfair_lock_unlock((os_unfair_lock_t)word); }
#else
#include <sched.h>
#include <stdatomic.h>
// Uncontended, taking it is one atomic exchange and releasing it one plain store (a glibc mutex costs two
// atomic read-modify-writes and two calls once the process has a second thread). Contention only comes
// from a thread evicting entries (a register, unregister or reset), which holds it briefly: yield meanwhile.
static inline void _injection_cache_lock(uint32_t *word) {
    _Atomic uint32_t *lock = (_Atomic uint32_t *)word;
    while (atomic_exchange_explicit(lock, 1, memory_order_acquire) != 0) {
        while (atomic_load_explicit(lock, memory_order_relaxed) != 0) sched_yield();
    }
}
static inline void _injection_cache_unlock(uint32_t *word) {
    atomic_store_explicit((_Atomic uint32_t *)word, 0, memory_order_release);
}
#endif
#endif

#ifndef INJECTION_MAIN_THREAD_H
#define INJECTION_MAIN_THREAD_H
/// Whether the calling thread is the process's main thread (where the main actor runs).
_Bool _injection_is_main_thread(void);
#endif
