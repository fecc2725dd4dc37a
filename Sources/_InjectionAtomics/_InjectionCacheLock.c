#include "_InjectionAtomics.h"

#if defined(__APPLE__)
// Spin locks invert priorities on Apple platforms; os_unfair_lock is the uncontended-fast lock there.
#include <os/lock.h>
void _injection_cache_lock(uint32_t *word) { os_unfair_lock_lock((os_unfair_lock_t)word); }
void _injection_cache_unlock(uint32_t *word) { os_unfair_lock_unlock((os_unfair_lock_t)word); }
#else
#include <sched.h>
#include <stdatomic.h>
// Uncontended, taking it is one atomic exchange and releasing it one plain store. Contention only comes
// from a thread evicting entries (a register, unregister or reset), which holds it briefly: yield meanwhile.
void _injection_cache_lock(uint32_t *word) {
    _Atomic uint32_t *lock = (_Atomic uint32_t *)word;
    while (atomic_exchange_explicit(lock, 1, memory_order_acquire) != 0) {
        while (atomic_load_explicit(lock, memory_order_relaxed) != 0) sched_yield();
    }
}
void _injection_cache_unlock(uint32_t *word) {
    atomic_store_explicit((_Atomic uint32_t *)word, 0, memory_order_release);
}
#endif
