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

// Each word: a class's metadata address (at least 8-aligned, so bit 0 is free) with bit 0 set if the
// class is disposable; 0 if empty. Zero pages until used: untouched sets cost no memory.
enum { disposable_set_bits = 12 };
static _Atomic uintptr_t disposable_classes[2 << disposable_set_bits];

static _Atomic uintptr_t *disposable_set(uintptr_t type) {
    uint64_t hash = (uint64_t)type * 0x9E3779B97F4A7C15ull;  // Fibonacci hashing: the high bits are the best mixed.
    return &disposable_classes[2 * (hash >> (64 - disposable_set_bits))];
}

int _injection_disposable_class_lookup(uintptr_t type) {
    _Atomic uintptr_t *set = disposable_set(type);
    for (int way = 0; way < 2; way++) {
        uintptr_t entry = atomic_load_explicit(&set[way], memory_order_relaxed);
        if ((entry & ~(uintptr_t)1) == type) return 1 + (int)(entry & 1);
    }
    return 0;
}

void _injection_disposable_class_remember(uintptr_t type, int is_disposable) {
    _Atomic uintptr_t *set = disposable_set(type);
    int way = atomic_load_explicit(&set[0], memory_order_relaxed) == 0 ? 0 : (int)((type >> 4) & 1);
    atomic_store_explicit(&set[way], type | (is_disposable ? 1 : 0), memory_order_relaxed);
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
