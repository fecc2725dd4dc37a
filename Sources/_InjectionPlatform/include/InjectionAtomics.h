// Process-wide counts that a resolve reads with one load, and the atomic word of a resolution that has ended.
// How many task-local bindings are alive (while
// none is, no task can see one, and a resolve skips the task-local read), and how many strict test
// containers are alive (while any is, a resolve bound to no container is reported).
#pragma once

#include <stdint.h>

/// The counts: `_injection_counts[_INJECTION_TASK_BINDINGS]` and `[_INJECTION_STRICT_TESTS]`.
enum { _INJECTION_TASK_BINDINGS = 0, _INJECTION_STRICT_TESTS = 1 };
extern intptr_t _injection_counts[2];

/// The count `which` (relaxed: a binding or a test container made before this code started, on this thread
/// or before this task was created, is ordered before the load, and every decrement follows its increment).
static inline intptr_t _injection_count(int which) {
    return __atomic_load_n(&_injection_counts[which], __ATOMIC_RELAXED);
}

/// Adds `delta` to the count `which`.
static inline void _injection_count_add(int which, intptr_t delta) {
    __atomic_fetch_add(&_injection_counts[which], delta, __ATOMIC_RELAXED);
}

/// Loads, with acquire ordering, a word written only with `_injection_store_u64`.
static inline uint64_t _injection_load_u64(const uint64_t *_Nonnull word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

/// Stores, with release ordering, a word that other threads read with `_injection_load_u64`.
static inline void _injection_store_u64(uint64_t *_Nonnull word, uint64_t value) {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
}
