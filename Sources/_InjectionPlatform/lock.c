#include "InjectionLock.h"
#include "check.h"
#include <pthread.h>
#include <stdlib.h>

struct _injection_lock {
    pthread_mutex_t mutex;
    pthread_cond_t condition;
};

// The block is aligned to and padded out to 128 bytes (Apple silicon's cache line; two lines on x86,
// whose adjacent-line prefetcher pairs them), so two threads' locks never share a line.
enum { line = 128 };

_injection_lock *_injection_lock_create(void) {
    void *block = NULL;
    size_t size = (sizeof(struct _injection_lock) + line - 1) / line * line;
    _injection_check(posix_memalign(&block, line, size), "posix_memalign");
    _injection_lock *lock = block;

    pthread_mutexattr_t attributes;
    _injection_check(pthread_mutexattr_init(&attributes), "pthread_mutexattr_init");
#if defined(DEBUG)
    // A lock misuse (unlocking from another thread, relocking) fails loudly instead of corrupting state.
    _injection_check(pthread_mutexattr_settype(&attributes, PTHREAD_MUTEX_ERRORCHECK), "pthread_mutexattr_settype");
#endif
    _injection_check(pthread_mutex_init(&lock->mutex, &attributes), "pthread_mutex_init");
    _injection_check(pthread_mutexattr_destroy(&attributes), "pthread_mutexattr_destroy");
    _injection_check(pthread_cond_init(&lock->condition, NULL), "pthread_cond_init");
    return lock;
}

void _injection_lock_destroy(_injection_lock *lock) {
    _injection_check(pthread_cond_destroy(&lock->condition), "pthread_cond_destroy");
    _injection_check(pthread_mutex_destroy(&lock->mutex), "pthread_mutex_destroy");
    free(lock);
}

void _injection_lock_lock(_injection_lock *lock) {
    _injection_check(pthread_mutex_lock(&lock->mutex), "pthread_mutex_lock");
}

void _injection_lock_unlock(_injection_lock *lock) {
    _injection_check(pthread_mutex_unlock(&lock->mutex), "pthread_mutex_unlock");
}

void _injection_lock_wait(_injection_lock *lock) {
    _injection_check(pthread_cond_wait(&lock->condition, &lock->mutex), "pthread_cond_wait");
}

void _injection_lock_broadcast(_injection_lock *lock) {
    _injection_check(pthread_cond_broadcast(&lock->condition), "pthread_cond_broadcast");
}
