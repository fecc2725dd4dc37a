// OS calls the tests need, behind one API on every platform (the library's own are in _InjectionPlatform).
#ifndef C_INJECTION_TEST_SUPPORT_H
#define C_INJECTION_TEST_SUPPORT_H

#include <stdint.h>

/// A pthread key's destructor.
typedef void (*test_key_destructor)(void *_Nonnull value);

/// Creates a pthread key with `destructor`; returns a handle for the functions below.
uintptr_t test_key_create(test_key_destructor _Nonnull destructor);

/// Sets the calling thread's value of `key`.
void test_key_set(uintptr_t key, void *_Nullable value);

/// Deletes `key`.
void test_key_delete(uintptr_t key);

/// What `test_thread_run_and_join` runs.
typedef void (*test_thread_body)(void *_Nullable context);

/// Runs `body(context)` on a new joinable thread with a `stack_size`-byte stack and returns once that
/// thread has exited, every pthread key destructor included.
void test_thread_run_and_join(test_thread_body _Nonnull body, void *_Nullable context, uintptr_t stack_size);

/// Forks; the child process exits at once with status 0 if `check()` returns true, 1 otherwise. Returns
/// the child's exit status, or -1 if it did not exit normally.
int test_fork_and_check(_Bool (*_Nonnull check)(void));

/// Loads, with acquire ordering, a word written only with `test_atomic_store`.
int64_t test_atomic_load(const int64_t *_Nonnull word);

/// Stores, with release ordering, a word other threads read with `test_atomic_load`.
void test_atomic_store(int64_t *_Nonnull word, int64_t value);

/// How many threads the process has now (the kernel's count), or -1 if it cannot tell.
long test_thread_count(void);

#endif
