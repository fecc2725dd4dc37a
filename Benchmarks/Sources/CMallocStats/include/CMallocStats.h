#ifndef CMALLOCSTATS_H
#define CMALLOCSTATS_H

#include <stddef.h>

/// Bytes malloc has handed out and not had back (glibc `mallinfo2().uordblks`, plus `hblkhd`, the blocks
/// it mapped on their own, 128 KiB and up), or -1 where glibc's mallinfo2 is not available. Swift's Glibc module does not export mallinfo2, hence this shim.
long long cmallocstats_heap_in_use(void);

/// Merges malloc's free chunks and gives free memory back to the system (glibc `malloc_trim(0)`; elsewhere
/// it does nothing), so a timed run does not pay for sorting the chunks the run before it freed.
void cmallocstats_settle_heap(void);

/// Pins the calling thread to processor `index` modulo the online processors (Linux; elsewhere it does
/// nothing). Returns 0 on success. Swift's Glibc module does not export sched_setaffinity (a GNU extension).
int cmallocstats_pin_thread(int index);

/// The size in bytes of the calling thread's stack (Linux: `pthread_getattr_np`), or 0 where it cannot tell.
/// Swift's Glibc module does not export pthread_getattr_np (a GNU extension).
size_t cmallocstats_thread_stack_size(void);

#endif
