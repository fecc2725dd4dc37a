#include "CInjectionTestSupport.h"
#include <pthread.h>
#include <stdatomic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void check(int result, const char *call) {
    if (result == 0) return;
    fprintf(stderr, "test support: %s failed with %d\n", call, result);
    abort();
}

uintptr_t test_key_create(test_key_destructor destructor) {
    pthread_key_t key;
    check(pthread_key_create(&key, destructor), "pthread_key_create");
    return (uintptr_t)key;
}

void test_key_set(uintptr_t key, void *value) {
    check(pthread_setspecific((pthread_key_t)key, value), "pthread_setspecific");
}

void test_key_delete(uintptr_t key) {
    check(pthread_key_delete((pthread_key_t)key), "pthread_key_delete");
}

struct start {
    test_thread_body body;
    void *context;
};

static void *run(void *argument) {
    struct start *start = argument;
    start->body(start->context);
    return NULL;
}

void test_thread_run_and_join(test_thread_body body, void *context, uintptr_t stack_size) {
    struct start start = {body, context};
    pthread_attr_t attributes;
    check(pthread_attr_init(&attributes), "pthread_attr_init");
    check(pthread_attr_setstacksize(&attributes, (size_t)stack_size), "pthread_attr_setstacksize");
    pthread_t thread;
    check(pthread_create(&thread, &attributes, run, &start), "pthread_create");
    check(pthread_attr_destroy(&attributes), "pthread_attr_destroy");
    check(pthread_join(thread, NULL), "pthread_join");
}

int test_fork_and_check(_Bool (*check_in_child)(void)) {
    pid_t child = fork();
    if (child == -1) return -1;
    if (child == 0) _exit(check_in_child() ? 0 : 1);
    int status = 0;
    while (waitpid(child, &status, 0) == -1) {
        if (errno != EINTR) return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int64_t test_atomic_load(const int64_t *word) {
    return atomic_load_explicit((const _Atomic int64_t *)word, memory_order_acquire);
}

void test_atomic_store(int64_t *word, int64_t value) {
    atomic_store_explicit((_Atomic int64_t *)word, value, memory_order_release);
}

#if defined(__APPLE__)
#include <mach/mach.h>

long test_thread_count(void) {
    thread_act_array_t threads;
    mach_msg_type_number_t count = 0;
    if (task_threads(mach_task_self(), &threads, &count) != KERN_SUCCESS) return -1;
    for (mach_msg_type_number_t i = 0; i < count; i++) mach_port_deallocate(mach_task_self(), threads[i]);
    vm_deallocate(mach_task_self(), (vm_address_t)threads, count * sizeof(thread_act_t));
    return (long)count;
}
#else
#include <stdio.h>

long test_thread_count(void) {
    FILE *status = fopen("/proc/self/status", "r");
    if (status == NULL) return -1;
    char line[256];
    long count = -1;
    while (fgets(line, sizeof line, status) != NULL) {
        if (sscanf(line, "Threads: %ld", &count) == 1) break;
    }
    fclose(status);
    return count;
}
#endif
