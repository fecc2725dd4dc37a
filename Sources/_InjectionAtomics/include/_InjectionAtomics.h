#ifndef INJECTION_ATOMICS_H
#define INJECTION_ATOMICS_H

#include <stdint.h>

/// Process-wide count of live resolution contexts (bound containers, running factories, open resets).
/// While it is zero no task can see a context, so the hot path skips the task-local read.
intptr_t _injection_context_count(void);

/// Adds `delta` to the count of live resolution contexts.
void _injection_context_count_add(intptr_t delta);

#endif
