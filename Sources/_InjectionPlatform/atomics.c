#include "InjectionAtomics.h"
#include <stdatomic.h>

static _Atomic intptr_t context_count = 0;

// Relaxed is enough: a context created on this thread, or before this task started, is ordered before
// the load by program order or task creation, and every decrement follows its own increment in the
// counter's modification order, so the load never sees zero while such a context is alive.
intptr_t _injection_context_count(void) {
    return atomic_load_explicit(&context_count, memory_order_relaxed);
}

void _injection_context_count_add(intptr_t delta) {
    atomic_fetch_add_explicit(&context_count, delta, memory_order_relaxed);
}

// The word is only ever accessed through these two functions, so treating it as atomic is sound.
uint64_t _injection_load_u64(const uint64_t *word) {
    return atomic_load_explicit((const _Atomic uint64_t *)word, memory_order_acquire);
}

void _injection_store_u64(uint64_t *word, uint64_t value) {
    atomic_store_explicit((_Atomic uint64_t *)word, value, memory_order_release);
}
