// The mutex and condition variable behind every lock of the library except the one-word locks
// (`InjectionCacheLock.h`: each thread's cache lock and `InjectLazy`'s).
#pragma once

/// A mutex and a condition variable in one heap block whose address never moves. Opaque.
typedef struct _injection_lock _injection_lock;

/// Creates an unlocked lock. Debug builds use an error-checking mutex.
_injection_lock *_Nonnull _injection_lock_create(void);

/// Destroys a lock that no thread holds or waits on, and frees it.
void _injection_lock_destroy(_injection_lock *_Nonnull lock);

/// Takes the lock; blocks while another thread holds it.
void _injection_lock_lock(_injection_lock *_Nonnull lock);

/// Releases the lock the calling thread holds.
void _injection_lock_unlock(_injection_lock *_Nonnull lock);

/// Releases the lock the calling thread holds until another thread calls `_injection_lock_broadcast`
/// (or a spurious wake-up), then takes it again.
void _injection_lock_wait(_injection_lock *_Nonnull lock);

/// Wakes every thread blocked in `_injection_lock_wait` on this lock.
void _injection_lock_broadcast(_injection_lock *_Nonnull lock);

/// How many of these locks the calling thread holds, in debug builds (a thread waiting in
/// `_injection_lock_wait` counts the lock it waits on); -1 in release builds, which do not count.
int _injection_locks_held(void);

// Every function aborts with a message naming the failed call and its error code if the OS reports an
// error (for example a debug build's error-checking mutex unlocked by a thread that does not hold it).
