#include "InjectionLock.h"
#include "check.h"
#include <pthread.h>
#include <errno.h>
#include <stdlib.h>

#if defined(DEBUG)
// How many of these locks the thread holds: debug builds only, for the tests' probe.
static _Thread_local int locks_held = 0;
#endif

struct _injection_lock {
    pthread_mutex_t mutex;
    pthread_cond_t condition;
};

_injection_lock *_injection_lock_create(void) {
    // Not padded to a cache line: every such lock is a container's (or a registry's), taken on slow
    // paths only; the per-thread cache locks, taken on every hit, have lines of their own.
    _injection_lock *lock = malloc(sizeof(struct _injection_lock));
    if (lock == NULL) _injection_check(ENOMEM, "malloc");

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
#if defined(DEBUG)
    locks_held++;
#endif
}

void _injection_lock_unlock(_injection_lock *lock) {
#if defined(DEBUG)
    locks_held--;
#endif
    _injection_check(pthread_mutex_unlock(&lock->mutex), "pthread_mutex_unlock");
}

void _injection_lock_wait(_injection_lock *lock) {
    _injection_check(pthread_cond_wait(&lock->condition, &lock->mutex), "pthread_cond_wait");
}

void _injection_lock_broadcast(_injection_lock *lock) {
    _injection_check(pthread_cond_broadcast(&lock->condition), "pthread_cond_broadcast");
}

int _injection_locks_held(void) {
#if defined(DEBUG)
    return locks_held;
#else
    return -1;
#endif
}
