#ifndef INJECTION_ATOMICS_H
#define INJECTION_ATOMICS_H

#include <stdint.h>

/// Process-wide count of live resolution contexts (bound containers, running factories, open resets).
/// While it is zero no task can see a context, so the hot path skips the task-local read.
intptr_t _injection_context_count(void);

/// Adds `delta` to the count of live resolution contexts.
void _injection_context_count_add(intptr_t delta);

#endif

#ifndef INJECTION_MAIN_THREAD_H
#define INJECTION_MAIN_THREAD_H
/// Whether the calling thread is the process's main thread (where the main actor runs).
_Bool _injection_is_main_thread(void);
#endif
