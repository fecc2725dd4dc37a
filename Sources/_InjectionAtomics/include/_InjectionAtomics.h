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

#ifndef INJECTION_MAIN_THREAD_H
#define INJECTION_MAIN_THREAD_H
/// Whether the calling thread is the process's main thread (where the main actor runs).
_Bool _injection_is_main_thread(void);
#endif
