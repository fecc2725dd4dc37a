/// White-box access for the library's own tests, as SPI so that no test needs `@testable import`
/// and a redesign of the internals changes this file only.
///
/// ```swift
/// @_spi(Testing) import Injection
/// #expect(InjectionProbe.threadCacheEntry(for: API.self, in: container) == .instance)
/// ```
@_spi(Testing) public enum InjectionProbe {
    /// What the calling thread's cache holds for a type of a container.
    public enum ThreadCacheEntry: Sendable, Equatable {
        /// Nothing: a resolve takes the slow path.
        case none
        /// A cached instance.
        case instance
        /// A transient's registration, whose factory runs without the container's lock.
        case factory
    }

    /// What the calling thread's cache holds for `type` (not a key) of `container`.
    public static func threadCacheEntry(for type: Any.Type, in container: InjectionContainer) -> ThreadCacheEntry {
        entry(AnyType(type), in: container)
    }

    /// What the calling thread's cache holds for the typed key `key` of `container`.
    public static func threadCacheEntry<Key: InjectionKey>(forKey key: Key.Type, in container: InjectionContainer) -> ThreadCacheEntry {
        entry(AnyType(key: key), in: container)
    }

    private static func entry(_ type: AnyType, in container: InjectionContainer) -> ThreadCacheEntry {
        guard let state = ThreadState.current?.takeUnretainedValue() else { return .none }
        let hit = state.beginLookup(container: ObjectIdentifier(container), key: type.id)
        state.endLookup()
        switch hit {
        case .instance?: return .instance
        case .factory?: return .factory
        case nil: return .none
        }
    }

    /// The object that stands for the registration of `type` in `container` (to watch its lifetime
    /// through a weak reference), or `nil` if `type` is not registered.
    public static func registration(for type: Any.Type, in container: InjectionContainer) -> AnyObject? {
        container.state.withLock { $0.slots[AnyType(type).id]?.registration }
    }

    /// Whether the calling thread has the library's per-thread state (made by its first resolve).
    public static var currentThreadHasState: Bool { ThreadState.current != nil }

    /// How many threads' states are alive (each is released when its thread exits).
    public static var liveThreadStates: Int { ThreadState.registeredCount }

    /// Installs points where a test acts while a synchronous resolve in `container` starts waiting for
    /// another resolution's build: before it joins the wait-for graph, and after. Each gets the type being
    /// built. Install before `container` is shared between threads.
    public static func onWait(
        in container: InjectionContainer,
        beforeJoining: (@Sendable (Any.Type) -> Void)?,
        afterJoining: (@Sendable (Any.Type) -> Void)?
    ) {
        var hooks = WaitHooks()
        if let beforeJoining { hooks.beforeJoining = { @Sendable type in beforeJoining(type.type) } }
        if let afterJoining { hooks.afterJoining = { @Sendable type in afterJoining(type.type) } }
        container.waitHooks = hooks
    }

    /// How many registrations of `container` a reset visits: those that held an instance or a build
    /// since the last reset, and are still registered.
    public static func resettableCount(in container: InjectionContainer) -> Int {
        container.state.withLock { $0.resettableCount }
    }
}
