import _InjectionPlatform
import Injection

/// White-box access for the library's own tests, as SPI so that no test needs `@testable import`
/// and a redesign of the internals changes this file only.
///
/// ```swift
/// @_spi(Testing) import InjectionTesting
/// #expect(InjectionProbe.resettableCount(in: container) == 1)
/// ```
@_spi(Testing) public enum InjectionProbe {
    /// The object that stands for the registration of `type` in `container` (to watch its lifetime, and
    /// that of what its factory captured, through a weak reference), or `nil` if `type` is not registered.
    public static func registration(for type: Any.Type, in container: InjectionContainer) -> AnyObject? {
        container.state.withLock { $0[AnyType(type)] }
    }

    /// How many types' names `container` worked out for its messages and graph: each type once, however
    /// often the registrations change.
    public static func typeNamesWorkedOut(in container: InjectionContainer) -> Int {
        container.names.spellingsWorkedOut
    }

    /// How many of the library's locks (a container's, a reset block's, the diagnostics handler's, the
    /// wait-for graph's) the calling thread holds: a `deinit` that finds one held runs under it. `nil` in
    /// release builds, which do not count.
    public static var locksHeldByCurrentThread: Int? {
        #if DEBUG
        return Int(_injection_locks_held())
        #else
        return nil
        #endif
    }

    /// Whether the calling thread has the library's per-thread state (made by its first resolve).
    public static var currentThreadHasState: Bool { _injection_thread_state() != nil }

    /// Installs points where a test acts while a synchronous resolve in `container` starts waiting for
    /// another resolution's build: before it joins the wait-for graph, and after. Each gets the type being
    /// built. Install before `container` is shared between threads.
    public static func onWait(
        in container: InjectionContainer, beforeJoining: (@Sendable (Any.Type) -> Void)?,
        afterJoining: (@Sendable (Any.Type) -> Void)?
    ) {
        container.waitHooks = (beforeJoining, afterJoining)  // Each gets the type being built as the test wrote it.
    }

    /// `nil` unless a resolution was told to wait for the build of `type` (the typed key `type` if `isKey`) now
    /// in progress in `container`; else how many tasks (`resolveAsync`) are suspended waiting for it.
    public static func buildWaiters(for type: Any.Type, isKey: Bool = false, in container: InjectionContainer) -> Int? {
        container.state.withLock { $0.build(of: AnyType(type, isKey: isKey))?.asyncWaiters.count }
    }

    /// Whether `container` holds the build closure registered for `Model`: a build, or `buildAsync`, read it
    /// since it was registered.
    public static func holdsBuildClosure<Model: Builder>(for builder: Model.Type, in container: InjectionContainer) -> Bool {
        container.state.withLock { state in
            if case .instance? = state.slots[AnyType(builder, isBuilder: true)]?.held { true } else { false }
        }
    }

    /// How many registrations of `container` a reset visits: those that held an instance or a build
    /// since the last reset, and are still registered.
    public static func resettableCount(in container: InjectionContainer) -> Int {
        container.state.withLock { $0.resettableCount }
    }
}

extension InjectionProbe {
    /// A container's state machine (`ContainerState`) driven by hand: each call is one event, with no
    /// thread, no lock and no factory run, so a test states every step of a race itself.
    ///
    /// ```swift
    /// var machine = InjectionProbe.StateMachine()
    /// machine.register(API.self, lifetime: .scoped)
    /// guard case .build(let build?) = machine.claim(API.self) else { return }
    /// #expect(machine.claim(API.self) == .wait)
    /// #expect(machine.complete(API.self, build: build).cached)
    /// ```
    public struct StateMachine {
        private var state = ContainerState()
        private let container = ObjectIdentifier(StateMachine.self)

        /// A build in progress, as a claim hands it out: its registration and the resolution that owns it.
        public struct Build: Equatable {
            fileprivate let registration: Registration
            fileprivate let owner: Resolution
            fileprivate let epoch: UInt64
            /// The same build.
            public static func == (lhs: Build, rhs: Build) -> Bool { lhs.owner === rhs.owner }
        }

        /// How a registration's factory runs.
        public enum Isolation: Sendable { case none, mainActor, async }

        /// What a claim answered.
        public enum Claim: Equatable {
            case cached
            /// Run the factory: with a build others wait for (a cached lifetime), or none (a transient).
            case build(Build?)
            case wait
            case hop
            case notRegistered, cycle, wrongIsolation, asyncFactory
        }

        /// What a change took out.
        public struct Changes: Equatable {
            /// Cached instances evicted.
            public var evicted: Int
            /// Builds abandoned while someone waited for them.
            public var abandoned: Int

            /// What a test expects a change to take out.
            public init(evicted: Int, abandoned: Int) { (self.evicted, self.abandoned) = (evicted, abandoned) }
        }

        /// An empty state.
        public init() {}

        /// The epoch: bumped by every reset.
        public var epoch: UInt64 { state.epoch }

        /// How many keys the next reset visits.
        public var resettableCount: Int { state.resettableCount }

        /// How many keys are registered.
        public var registrationCount: Int { state.slots.count }

        /// The registration the last ``register(_:lifetime:isolation:)`` made, as it made it: to compare with
        /// what ``registration(of:)`` finds later.
        public private(set) var lastRegistered: ObjectIdentifier?

        /// The registration the state holds for `type` (`nil` if none): each ``register(_:lifetime:isolation:)``
        /// makes a new one.
        public func registration(of type: Any.Type) -> ObjectIdentifier? {
            state[AnyType(type)].map { ObjectIdentifier($0) }
        }

        /// Registers `type` (a fresh registration each time), as `register` does.
        @discardableResult
        public mutating func register(_ type: Any.Type, lifetime: InjectionLifetime, isolation: Isolation = .none) -> Changes {
            let registration = switch isolation {
            case .none: Registration(AnyType(type), lifetime: lifetime, file: #fileID, factory: { type })
            case .mainActor: Registration(AnyType(type), lifetime: lifetime, file: #fileID, mainActorFactory: { type })
            case .async: Registration(AnyType(type), lifetime: lifetime, file: #fileID, asyncFactory: { type })
            }
            lastRegistered = ObjectIdentifier(registration)
            return Self.changes(state.replace(AnyType(type), with: registration) ?? ContainerState.Evictions())
        }

        /// Unregisters `type`.
        public mutating func unregister(_ type: Any.Type) -> Changes {
            Self.changes(state.replace(AnyType(type), with: nil) ?? ContainerState.Evictions())
        }

        /// Claims `type`, as a resolve does.
        public mutating func claim(
            _ type: Any.Type, isAsync: Bool = false, isInChain: Bool = false, onMainActor: Bool = false,
            inheritedEpoch: UInt64? = nil
        ) -> Claim {
            let claim = state.claim(
                AnyType(type), in: container, isAsync: isAsync, isInChain: isInChain,
                isOnMainActor: { onMainActor }, owner: nil)
            switch claim {
            case .cached: return .cached
            case .wait: return .wait
            case .hop: return .hop
            case .build(let registration, let owner, _, let epoch):
                // A frame that continues a resolution keeps its epoch, as `Frame`'s initializer says.
                let epoch = inheritedEpoch ?? epoch
                return .build(owner.map { Build(registration: registration, owner: $0, epoch: epoch) })
            case .notRegistered: return .notRegistered
            case .cycle: return .cycle
            case .wrongIsolation: return .wrongIsolation
            case .asyncFactory: return .asyncFactory
            }
        }

        /// Completes a run of `type`'s factory (with `build` for a cached lifetime) that succeeded or
        /// failed; records its edges if `recordedEdges`. Returns whether the instance was cached, and
        /// whether waiters are woken.
        public mutating func complete(
            _ type: Any.Type, build: Build?, succeeding: Bool = true, recordedEdges: Bool = true
        ) -> (cached: Bool, wakes: Bool) {
            guard let registration = build?.registration ?? state[AnyType(type)] else { return (false, false) }
            let completion = state.complete(
                registration, owner: build?.owner, epoch: build?.epoch ?? state.epoch,
                instance: succeeding ? Box.make(Box.make(0)) : nil, recordedEdges: recordedEdges)
            return (completion.stored, completion.woken != nil)
        }

        /// Resets, as `resetCurrentContainer()` does.
        public mutating func reset() -> Changes { Self.changes(state.reset()) }

        /// Whether `build` is still in progress, as a waiter asks when it wakes.
        public func isBuilding(_ build: Build) -> Bool { state.isBuilding(build.registration.type, by: build.owner) }

        private static func changes(_ evictions: ContainerState.Evictions) -> Changes {
            Changes(evicted: evictions.instances.count, abandoned: evictions.abandoned.count)
        }

    }
}

/// What the probe asks of a container's state that the container itself never needs.
extension ContainerState {
    /// The build of `key` in progress, if any.
    func build(of key: AnyType) -> Build? { if case .waited(let build)? = slots[key]?.held { build } else { nil } }

    /// Whether `owner` is still building `key` (a test probe).
    func isBuilding(_ key: AnyType, by owner: Resolution) -> Bool { slots[key]?.isBuilt(by: owner) == true }

    /// How many keys hold an instance or a build that a reset would visit (a test probe).
    var resettableCount: Int { Set(resettable).filter { slots[$0] != nil }.count }
}
