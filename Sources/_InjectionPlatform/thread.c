#if defined(__linux__)
#define _GNU_SOURCE
#endif
#include "InjectionThread.h"
#include "check.h"
#include <pthread.h>
#include <stdatomic.h>

// MARK: The per-thread state slot
//
// A thread's state lives in a pthread key whose destructor releases it. Once that destructor has run,
// the key holds EXITED for the rest of the thread's exit, whatever order the other keys' destructors
// run in (slot order on glibc and Darwin, a new key taking the lowest free slot; on Darwin the system's
// reserved keys, the Swift runtime's and the autorelease pool's among them, run after every other key
// in each round): the destructor puts EXITED back each time it sees it, in every round of
// destructors, so code run by a later key's destructor sees a thread that is exiting, and resolves with
// no state (its bindings go to the task-local) instead of adopting one that nothing would release.

#define EXITED ((void *)1)

static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static _Atomic(_injection_thread_state_destructor) state_destructor = NULL;

#if defined(__APPLE__)
// Read by `_injection_thread_state`: 0 until the key exists, then the key plus one.
uintptr_t _injection_thread_state_key_plus_one = 0;
#else
// The fast copy of the key's value that `_injection_thread_state` reads; NULL once the key holds EXITED.
__thread void *_injection_thread_state_word = NULL;
#endif

// Releases a thread's state through the Swift destructor; instrumented, unlike `on_thread_exit` below.
__attribute__((noinline)) static void release_state(void *state) {
#if !defined(__APPLE__)
    _injection_thread_state_word = NULL;
#endif
    atomic_load_explicit(&state_destructor, memory_order_acquire)(state);
}

// Runs in every round of destructors, the last included, after which sanitizers (ThreadSanitizer's own
// key destructor runs in the last round) have torn down their per-thread state: instrumented code must
// not run then. So this function is not instrumented, and in later rounds it only puts the mark back.
#if defined(__has_attribute)
#if __has_attribute(disable_sanitizer_instrumentation)
__attribute__((disable_sanitizer_instrumentation))
#endif
#endif
static void on_thread_exit(void *value) {
    // The key's value was cleared before this call: mark the thread as exiting again right away.
    int result = pthread_setspecific(key, EXITED);
    if (result != 0) _injection_check(result, "pthread_setspecific");
    if (value == EXITED) return;  // A later round of destructors: keep the mark, nothing to release.
    release_state(value);
}

static void create_key(void) {
    _injection_check(pthread_key_create(&key, on_thread_exit), "pthread_key_create");
#if defined(__APPLE__)
    __atomic_store_n(&_injection_thread_state_key_plus_one, (uintptr_t)key + 1, __ATOMIC_RELEASE);
#endif
}

_Bool _injection_thread_state_adopt(void *state, _injection_thread_state_destructor destructor) {
    atomic_store_explicit(&state_destructor, destructor, memory_order_release);
    _injection_check(pthread_once(&key_once, create_key), "pthread_once");
    if (pthread_getspecific(key) == EXITED) return 0;
    _injection_check(pthread_setspecific(key, state), "pthread_setspecific");
#if !defined(__APPLE__)
    _injection_thread_state_word = state;
#endif
    return 1;
}


// MARK: Starting threads

void _injection_thread_start(_injection_thread_body body, void *context, size_t stack_size) {
    pthread_attr_t attributes;
    _injection_check(pthread_attr_init(&attributes), "pthread_attr_init");
    _injection_check(pthread_attr_setstacksize(&attributes, stack_size), "pthread_attr_setstacksize");
    _injection_check(pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED), "pthread_attr_setdetachstate");
    pthread_t thread;
    _injection_check(pthread_create(&thread, &attributes, body, context), "pthread_create");
    _injection_check(pthread_attr_destroy(&attributes), "pthread_attr_destroy");
}

// MARK: Stacks

void _injection_thread_stack(uintptr_t *low, uintptr_t *size) {
#if defined(__APPLE__)
    pthread_t self = pthread_self();
    uintptr_t high = (uintptr_t)pthread_get_stackaddr_np(self);  // The stack grows down from here.
    *size = (uintptr_t)pthread_get_stacksize_np(self);
    *low = high - *size;
#else
    pthread_attr_t attributes;
    void *address = NULL;
    size_t bytes = 0;
    _injection_check(pthread_getattr_np(pthread_self(), &attributes), "pthread_getattr_np");
    _injection_check(pthread_attr_getstack(&attributes, &address, &bytes), "pthread_attr_getstack");
    _injection_check(pthread_attr_destroy(&attributes), "pthread_attr_destroy");
    *low = (uintptr_t)address;
    *size = (uintptr_t)bytes;
#endif
}

// MARK: The main thread

#if defined(__APPLE__)

_Bool _injection_is_main_thread(void) {
    return pthread_main_np() != 0;
}

#elif defined(__linux__)

#include <sys/syscall.h>
#include <unistd.h>

// The main thread's id is the process id. Both are system calls, so each thread caches its answer,
// tagged with the fork generation it was computed in: a child process (whose one thread is its main
// thread, with new ids) bumps the generation, and every cached answer is recomputed.
static _Atomic unsigned fork_generation = 1;
static pthread_once_t fork_handler_once = PTHREAD_ONCE_INIT;
static __thread unsigned answered_generation = 0;
static __thread _Bool is_main = 0;

static void after_fork_in_child(void) {
    atomic_fetch_add_explicit(&fork_generation, 1, memory_order_relaxed);
}

static void install_fork_handler(void) {
    _injection_check(pthread_atfork(NULL, NULL, after_fork_in_child), "pthread_atfork");
}

_Bool _injection_is_main_thread(void) {
    unsigned generation = atomic_load_explicit(&fork_generation, memory_order_relaxed);
    if (answered_generation != generation) {
        _injection_check(pthread_once(&fork_handler_once, install_fork_handler), "pthread_once");
        generation = atomic_load_explicit(&fork_generation, memory_order_relaxed);
        is_main = syscall(SYS_gettid) == (long)getpid();
        answered_generation = generation;
    }
    return is_main;
}

#else
#error "Injection: no main-thread check for this platform (add one to thread.c)"
#endif
