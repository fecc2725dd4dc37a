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
