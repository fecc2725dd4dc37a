/// How long a resolved instance lives, chosen per registration.
///
/// ```swift
/// InjectionManager.register(Session.self) { Session() }                                 // .scoped
/// InjectionManager.register((any Clock).self, lifetime: .singleton) { SystemClock() }   // survives resets
/// InjectionManager.register(Formatter.self, lifetime: .transient) { Formatter() }       // new every time
/// ```
public enum InjectionLifetime: Hashable, Sendable, CustomStringConvertible {
    /// One instance per scope: built on first resolve, cached, and evicted by
    /// ``InjectionContainer/reset()``. The default.
    case scoped
    /// One instance for the life of the container, kept across resets.
    case singleton
    /// No caching: the factory runs on every resolve.
    case transient
    /// Shared while anyone holds it: the container keeps only a weak reference, so the instance is
    /// rebuilt after its last holder lets it go. The instance must be a class instance. A reset
    /// forgets it too, so the next scope never gets the previous one's.
    case weak

    /// The lifetime's name as written in code, e.g. `scoped`.
    public var description: String {
        switch self {
        case .scoped: "scoped"
        case .singleton: "singleton"
        case .transient: "transient"
        case .weak: "weak"
        }
    }
}
