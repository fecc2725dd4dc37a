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

/// The table behind `_injection_disposable_class_lookup`: 4,096 sets of two words, each a class's
/// metadata address (at least 8-aligned, so bit 0 is free) with bit 0 set if the class is disposable, or
/// 0. Read and written only with atomic builtins, by the two functions below.
extern uintptr_t _injection_disposable_classes[];

/// log2 of the number of sets of `_injection_disposable_classes` (two words each).
#define INJECTION_DISPOSABLE_SET_BITS 12

/// The set of `_injection_disposable_classes` that `type` belongs to: Fibonacci hashing, whose high bits
/// are the best mixed.
static inline uintptr_t *_Nonnull _injection_disposable_set(uintptr_t type) {
    return &_injection_disposable_classes[2 * (((uint64_t)type * 0x9E3779B97F4A7C15ull) >> (64 - INJECTION_DISPOSABLE_SET_BITS))];
}

/// What `_injection_disposable_class_remember` last remembered for the class at `type` (its metadata's
/// address): 0 if the table has no answer for it (never asked, or displaced by another class), 1 if it
/// is not disposable, 2 if it is. Lock-free: a two-way set-associative table of 4,096 sets in static
/// storage, read and written one word at a time, so a word another thread overwrote is a miss, never
/// another class's answer. Inline: an eviction asks it of every instance.
static inline int _injection_disposable_class_lookup(uintptr_t type) {
    uintptr_t *set = _injection_disposable_set(type);
    for (int way = 0; way < 2; way++) {
        uintptr_t entry = __atomic_load_n(&set[way], __ATOMIC_RELAXED);
        if ((entry & ~(uintptr_t)1) == type) return 1 + (int)(entry & 1);
    }
    return 0;
}

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
