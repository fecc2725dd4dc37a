// Threads: the per-thread state slot and its exit path, starting threads with a sized stack, and the
// main-thread check.
#ifndef INJECTION_THREAD_H
#define INJECTION_THREAD_H

#include <stddef.h>
#include <stdint.h>
#if defined(__APPLE__)
#include <pthread.h>
#endif

// MARK: The per-thread state slot

/// Called once when a thread that adopted a state exits, with that state, after the thread's slot
/// stopped returning it.
typedef void (*_injection_thread_state_destructor)(void *_Nonnull state);

/// The calling thread's state, or NULL if it has none (or has begun exiting).
///
/// Linux: one read of a C thread-local (static TLS outlives every pthread key destructor there).
/// Apple platforms: `pthread_getspecific` (no `__thread` storage, which dyld frees from a pthread key
/// destructor of its own, in an order relative to ours that nothing guarantees).
static inline void *_Nullable _injection_thread_state(void) {
#if defined(__APPLE__)
    extern uintptr_t _injection_thread_state_key_plus_one;
    uintptr_t key = __atomic_load_n(&_injection_thread_state_key_plus_one, __ATOMIC_ACQUIRE);
    if (key == 0) return NULL;
    void *state = pthread_getspecific((pthread_key_t)(key - 1));
    return (uintptr_t)state == 1 ? NULL : state;  // 1 marks a thread whose state was released.
#else
    extern __thread void *_Nullable _injection_thread_state_word;
    return _injection_thread_state_word;
#endif
}

/// Makes `state` the calling thread's state until the thread exits, then calls `destructor(state)` once.
///
/// Returns false and changes nothing if the thread has begun exiting and its state's destructor has
/// already run: a state adopted now would never be released. Pass the same `destructor` every time.
_Bool _injection_thread_state_adopt(void *_Nonnull state, _injection_thread_state_destructor _Nonnull destructor);

// MARK: Starting threads

/// What a thread started with `_injection_thread_start` runs: a `pthread_create` start routine, whose
/// result is ignored.
typedef void *_Nullable (*_injection_thread_body)(void *_Nullable context);

/// Starts a detached thread with a stack of `stack_size` bytes (a multiple of 16 KiB) that runs
/// `body(context)`. Aborts with a message if the thread cannot be created.
void _injection_thread_start(_injection_thread_body _Nonnull body, void *_Nullable context, size_t stack_size);

// MARK: Stacks

/// The calling thread's stack: its lowest address in `*low` and its size in bytes in `*size`.
/// `pthread_get_stackaddr_np` / `pthread_get_stacksize_np` on Apple platforms, `pthread_getattr_np`
/// on Linux (which, for the main thread, reads the stack's mapping: call it once per thread).
void _injection_thread_stack(uintptr_t *_Nonnull low, uintptr_t *_Nonnull size);

/// Where the calling function's frame is on the stack: compare it with `_injection_thread_stack`'s
/// bounds to know how much stack is left (stacks grow down on every platform we support).
static inline uintptr_t _injection_stack_position(void) {
    return (uintptr_t)__builtin_frame_address(0);
}

// MARK: The main thread

/// Whether the calling thread is the process's main thread: `pthread_main_np` on Apple platforms; on
/// Linux, whether the thread id is the process id, cached per thread and recomputed after `fork()`.
_Bool _injection_is_main_thread(void);

// MARK: Diagnostics output

/// Writes `line` (a NUL-terminated UTF-8 string) to standard error in one `fputs`, for the default
/// diagnostics handler. Never fails the caller.
void _injection_write_stderr(const char *_Nonnull line);

#endif
