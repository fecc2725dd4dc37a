#if defined(__linux__)
#define _GNU_SOURCE
#endif
#include "_InjectionAtomics.h"

#if defined(__APPLE__)
#include <pthread.h>
_Bool _injection_is_main_thread(void) { return pthread_main_np() != 0; }
#elif defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
// The main thread's id is the process id. Both are cached: each is a system call otherwise.
static __thread long thread_id = 0;
_Bool _injection_is_main_thread(void) {
    if (thread_id == 0) thread_id = syscall(SYS_gettid);
    return thread_id == (long)getpid();
}
#else
#error "Injection: no main-thread check for this platform"
#endif
