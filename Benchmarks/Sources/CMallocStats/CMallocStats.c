#if defined(__linux__)
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#endif
#include "CMallocStats.h"

#if defined(__linux__)
#include <features.h>  // defines __GLIBC__ on glibc systems
#endif

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>

long long cmallocstats_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    // Blocks malloc mapped on their own (128 KiB and up at first: a big table's storage) count too.
    return (long long)(info.uordblks + info.hblkhd);
}

void cmallocstats_settle_heap(void) {
    malloc_trim(0);
}
#else
long long cmallocstats_heap_in_use(void) {
    return -1;
}

void cmallocstats_settle_heap(void) {}
#endif

#if defined(__linux__)
int cmallocstats_pin_thread(int index) {
    long processors = sysconf(_SC_NPROCESSORS_ONLN);
    if (processors < 2) return 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((int)(index % processors), &set);
    return sched_setaffinity(0, sizeof(set), &set);
}
#else
int cmallocstats_pin_thread(int index) {
    (void)index;
    return 0;
}
#endif

#if defined(__linux__)
size_t cmallocstats_thread_stack_size(void) {
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0) return 0;
    void *low = NULL;
    size_t size = 0;
    pthread_attr_getstack(&attributes, &low, &size);
    pthread_attr_destroy(&attributes);
    return size;
}
#else
size_t cmallocstats_thread_stack_size(void) {
    return 0;
}
#endif
