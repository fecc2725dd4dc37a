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
_Bool _injection_is_main_thread(void) { return syscall(SYS_gettid) == getpid(); }
#else
#error "Injection: no main-thread check for this platform"
#endif
