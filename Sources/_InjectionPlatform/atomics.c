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

// Zero pages until used: untouched sets cost no memory.
uintptr_t _injection_disposable_classes[2 << INJECTION_DISPOSABLE_SET_BITS];

void _injection_disposable_class_remember(uintptr_t type, int is_disposable) {
    uintptr_t *set = _injection_disposable_set(type);
    int way = __atomic_load_n(&set[0], __ATOMIC_RELAXED) == 0 ? 0 : (int)((type >> 4) & 1);
    __atomic_store_n(&set[way], type | (is_disposable ? 1 : 0), __ATOMIC_RELAXED);
}

// The file interned last: its address shifted up 16 bits and its index in the low 16; 0 if none. An
// address that does not fit 48 bits (none does today) is never remembered.
static _Atomic uint64_t last_file = 0;

int _injection_file_index_last(const void *file) {
    uint64_t last = atomic_load_explicit(&last_file, memory_order_acquire);
    return last >> 16 == (uint64_t)(uintptr_t)file ? (int)(last & 0xFFFF) : -1;
}

void _injection_file_index_remember(const void *file, uint16_t index) {
    uint64_t address = (uint64_t)(uintptr_t)file;
    if (address >> 48 == 0) atomic_store_explicit(&last_file, address << 16 | index, memory_order_release);
}
