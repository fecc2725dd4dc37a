// Atomic words shared between threads: the count of live resolution contexts, a container's epoch, and
// whether a resolution has ended.
#pragma once

#include <stdint.h>

/// The process-wide count of live task-local resolution contexts. While it is zero no task can see a
/// context, so the hot path skips the task-local read.
intptr_t _injection_context_count(void);

/// Adds `delta` to the count of live task-local resolution contexts.
void _injection_context_count_add(intptr_t delta);

/// Loads, with acquire ordering, a 64-bit word written only with `_injection_store_u64`.
static inline uint64_t _injection_load_u64(const uint64_t *_Nonnull word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

/// Stores, with release ordering, a 64-bit word that other threads read with `_injection_load_u64`.
static inline void _injection_store_u64(uint64_t *_Nonnull word, uint64_t value) {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
}
