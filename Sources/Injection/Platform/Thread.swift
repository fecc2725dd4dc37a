import Dispatch
import _InjectionPlatform

/// Threads the library starts itself: `verify()`'s workers.
enum OSThread {
    /// The stack of every thread the library starts: 8 MiB, Linux's default for the main thread. Apple
    /// platforms give secondary threads 512 KiB, which a debug build's resolution of a deep graph
    /// (about 11 KiB per level) outgrows at about 40 levels, once the 64 KiB reserve is kept.
    static let stackSize = 8 << 20

    private final class Start {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Runs `body` on a new detached thread with a stack of ``stackSize`` bytes.
    static func detach(_ body: @escaping @Sendable () -> Void) {
        let start = Unmanaged.passRetained(Start(body)).toOpaque()
        _injection_thread_start({ context in
            Unmanaged<Start>.fromOpaque(context!).takeRetainedValue().body()
        }, start, stackSize)
    }

    /// Blocks the calling thread for good.
    static func park() -> Never {
        let lock = Lock()
        lock.withLock { () -> Void in
            while true { lock.wait() }
        }
        fatalError("Injection: a parked thread woke up")
    }
}

/// Whether the running code is isolated to the main actor, without the crash of `assumeIsolated`.
enum MainActorCheck {
    private static let key = DispatchSpecificKey<Bool>()
    private static let isInstalled: Bool = {
        DispatchQueue.main.setSpecific(key: key, value: true)
        return true
    }()

    /// The caller's static isolation (`#isolation`) when the compiler knows it; otherwise whether this
    /// runs on the main thread or on the main dispatch queue, which is the main actor's executor
    /// (under some test runners a thread other than the main one drains it).
    static func isMainActor(_ caller: (any Actor)?) -> Bool {
        if let caller { return (caller as AnyObject) === MainActor.shared }
        _ = isInstalled
        return _injection_is_main_thread() || DispatchQueue.getSpecific(key: key) == true
    }
}
