#ifndef CMALLOCSTATS_H
#define CMALLOCSTATS_H

#include <stddef.h>

/// Bytes malloc has handed out and not had back (glibc `mallinfo2().uordblks`), or -1 where glibc's
/// mallinfo2 is not available. Swift's Glibc module does not export mallinfo2, hence this shim.
long long cmallocstats_heap_in_use(void);

/// Pins the calling thread to processor `index` modulo the online processors (Linux; elsewhere it does
/// nothing). Returns 0 on success. Swift's Glibc module does not export sched_setaffinity (a GNU extension).
int cmallocstats_pin_thread(int index);

#endif
