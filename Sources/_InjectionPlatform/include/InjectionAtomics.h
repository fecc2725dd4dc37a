// Atomic words shared between threads: the count of live resolution contexts, a container's epoch, the
// process-wide answers to "is this class disposable", and the file that registered last.
#ifndef INJECTION_ATOMICS_H
#define INJECTION_ATOMICS_H

#include <stdint.h>

/// The process-wide count of live task-local resolution contexts. While it is zero no task can see a
/// context, so the hot path skips the task-local read.
intptr_t _injection_context_count(void);

/// Adds `delta` to the count of live task-local resolution contexts.
void _injection_context_count_add(intptr_t delta);

/// Loads, with acquire ordering, a 64-bit word written only with `_injection_store_u64`.
uint64_t _injection_load_u64(const uint64_t *_Nonnull word);

/// Stores, with release ordering, a 64-bit word that other threads read with `_injection_load_u64`.
void _injection_store_u64(uint64_t *_Nonnull word, uint64_t value);

/// What `_injection_disposable_class_remember` last remembered for the class at `type` (its metadata's
/// address): 0 if the table has no answer for it (never asked, or displaced by another class), 1 if it
/// is not disposable, 2 if it is. Lock-free: a two-way set-associative table of 4,096 sets in static
/// storage, read and written one word at a time, so a word another thread overwrote is a miss, never
/// another class's answer.
int _injection_disposable_class_lookup(uintptr_t type);

/// Remembers whether the class at `type` is disposable, over one of its set's words: an empty one if
/// there is one, else the one its address picks.
void _injection_disposable_class_remember(uintptr_t type, int is_disposable);

/// The index `_injection_file_index_remember` last remembered, if it was for `file` (a `#fileID`
/// literal's address); else -1. Registrations come in runs from one file, so this answers nearly every
/// one with a single load.
int _injection_file_index_last(const void *_Nonnull file);

/// Remembers `index` as the index of `file`, the file interned last.
void _injection_file_index_remember(const void *_Nonnull file, uint16_t index);

#endif
