import Dispatch
import _InjectionPlatform

/// Threads: the ones the library starts itself (`verify()`'s workers), and which one is the main actor's.
enum OSThread {
    /// The stack of every thread the library starts: 8 MiB, Linux's default for the main thread. Apple
    /// platforms give secondary threads 512 KiB, which a debug build's resolution of a deep graph
    /// (about 11 KiB per level) outgrows at about 40 levels, once the 64 KiB reserve is kept.
    static let stackSize = 8 << 20

    /// Runs `body` on a new detached thread with a stack of ``stackSize`` bytes.
    static func detach(_ body: @escaping @Sendable () -> Void) {
        // The closure crosses the C layer in a box: one reference, taken back by the new thread.
        let start = Unmanaged.passRetained(Box.make(body)).toOpaque()
        _injection_thread_start({ context in
            Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().value(as: (@Sendable () -> Void).self)()
            return nil
        }, start, stackSize)
    }

    /// Blocks the calling thread for good.
    static func park() -> Never {
        DispatchSemaphore(value: 0).wait()
        fatalError("Injection: a parked thread woke up")
    }

    /// Set on the main queue when first read.
    private static let mainQueueKey = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// Whether the running code is isolated to the main actor, without the crash of `assumeIsolated`:
    /// the caller's static isolation (`#isolation`) when the compiler knows it; otherwise whether this
    /// runs on the main thread or on the main dispatch queue, which is the main actor's executor
    /// (under some test runners a thread other than the main one drains it).
    static func isMainActor(_ caller: (any Actor)?) -> Bool {
        if let caller { return (caller as AnyObject) === MainActor.shared }
        return _injection_is_main_thread() || DispatchQueue.getSpecific(key: mainQueueKey) == true
    }
}

/// An identity for the current task (0 outside tasks), to tell whether a frame is the current task's
/// own: the hash of the task's address, which two live tasks do not share in practice.
func currentTaskIdentity() -> Int { withUnsafeCurrentTask { $0?.hashValue ?? 0 } }
