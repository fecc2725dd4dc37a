/// A container's state and every rule that changes it, as events that return what to do next.
///
/// A pure state machine, in the shape of swift-async-algorithms' `…StateMachine` types: it runs no
/// user code, takes no lock and touches no thread. `InjectionContainer` keeps it in a
/// ``LockedState``, calls one event per lock acquisition, and carries out the returned actions:
/// under the lock, the ones that must not be seen half-done (finishing builds in the wait-for graph);
/// after unlocking, the rest (waking tasks, `dispose()`, releasing instances).
package struct ContainerState {
    /// What the container holds for one key: its registration, and what it built with it.
    package struct Slot {
        let registration: Registration
        /// Whether the next run of the factory records what it resolves, for the graph: once per
        /// registration (and by `verify()`), so a factory that runs again costs nothing extra.
        var recordsEdges = true
        /// Whether the key is in ``ContainerState/resettable``.
        var isResettable = false
        // What ``held`` says, one field per case, at most one set: an enum of class references would keep
        // its case in the references' spare bits, where a leak checker no longer sees them as references
        // (LeakSanitizer reported the instances a container kept alive as leaks).
        private var instance: Box?, building: Resolution?, waited: Build?, weak: WeakReference?

        init(registration: Registration) { self.registration = registration }

        /// Whether it holds an instance: cached, or held weakly and still alive. Reading a weak reference takes a
        /// strong one, which may turn out to be the last: a live weak instance is appended to `keptAlive`, to be
        /// released after unlocking, so its `deinit` never runs under the lock.
        func hasLiveInstance(keepingAliveIn keptAlive: inout [AnyObject]) -> Bool {
            switch held {
            case .instance: return true
            case .weak(let reference):
                guard let object = reference.object else { return false }
                keptAlive.append(object)
                return true
            default: return false
            }
        }

        /// The cached instance, if the slot holds one (a `.weak` one is not cached).
        var cached: Box? { instance }

        /// Whether the resolution `owner` is building the key's instance.
        package func isBuilt(by owner: Resolution) -> Bool {
            switch held {
            case .building(let current): current === owner
            case .waited(let build): build.owner === owner
            default: false
            }
        }

        /// The key's instance, or its build in progress.
        package var held: Held {
            get {
                if let instance { return .instance(instance) }
                if let waited { return .waited(waited) }
                if let building { return .building(building) }
                if let weak { return .weak(weak) }
                return .nothing
            }
            set {
                (instance, building, waited, weak) = (nil, nil, nil, nil)
                switch newValue {
                case .nothing: break
                case .building(let owner): building = owner
                case .waited(let build): waited = build
                case .instance(let box): instance = box
                case .weak(let reference): weak = reference
                }
            }
        }
    }

    /// A key's instance, or its build in progress.
    package enum Held {
        case nothing
        /// A `.scoped` or `.singleton` instance being built by this resolution, which nobody waits for.
        case building(Resolution)
        /// The same, once a claim was told to wait for it: the waiters wait for this build.
        case waited(Build)
        case instance(Box)
        /// A `.weak` instance, while something else holds it.
        case weak(WeakReference)

        var isNothing: Bool { if case .nothing = self { true } else { false } }
    }

    /// Every key's slot.
    package var slots: [AnyType: Slot] = [:]
    /// The keys whose slot held a build or an instance of a lifetime a reset ends since the last reset: what
    /// the next reset visits, so that it costs what the scope holds, not what the container ever held (the
    /// reset floor: reset + resolve beside 65,536 cached singletons within 2x of beside none). Each key once,
    /// while its slot says so (``Slot/isResettable``); a key registered again since may come twice.
    package private(set) var resettable: [AnyType] = []
    /// Bumped by every reset and by ``removeAll()``. A build whose resolution started in an older epoch is
    /// never cached (but for a singleton's).
    package private(set) var epoch: UInt64 = 0
    /// Bumped by every change of a registration: what the type names are worked out from.
    private(set) var generation: UInt64 = 0
    /// Each key that `unregister` (or ``removeAll()``, `byRemoveAll`) removed, until it is registered again: the
    /// file that registered it, which its `notRegistered` message names. Written by those changes only, and
    /// touched by a register only while not empty: nothing is added to a registration or a resolve.
    private(set) var removed: [AnyType: (file: StaticString, byRemoveAll: Bool)] = [:]

    package init() {}

    /// A state with the registrations of `other` and nothing built, and what `other` remembers was removed.
    init(registrationsOf other: ContainerState) {
        slots = other.slots.mapValues { Slot(registration: $0.registration) }
        removed = other.removed
    }

    /// The registration for `key`, if any.
    package subscript(key: AnyType) -> Registration? { slots.index(forKey: key).map { slots.values[$0].registration } }

    /// Every registration, in no particular order.
    var registrations: [Registration] { slots.values.map(\.registration) }

    // MARK: - Resolving

    package enum Claim {
        /// The instance is there.
        case cached(Box)
        /// Another resolution is building it: wait, then claim again.
        case wait(Build)
        /// Run the factory. A cached lifetime comes with the resolution that now owns its build (others
        /// wait for it; the completion names it); a transient with none. The new frame records edges if
        /// `recordsEdges`. `epoch` is the container's now: the new frame's, unless it continues a resolution
        /// of this container, whose epoch it keeps (see ``Frame``'s initializer).
        case build(Registration, owner: Resolution?, recordsEdges: Bool, epoch: UInt64)
        /// An async resolve must build a main-actor type: it hops to the main actor and claims there.
        case hop
        // Failures:
        case notRegistered, cycle, wrongIsolation
        /// An async factory, claimed by a synchronous resolve; its lifetime says what the message advises.
        case asyncFactory(InjectionLifetime)
    }

    /// The cached instance of `key`, if there is one: what most resolves come for, in one lookup and with no copy
    /// of the slot (the cached resolve floor, ≤ 1.3x of a mutex and a dictionary, fails with ``claim``'s work).
    package mutating func cached(_ key: AnyType) -> Box? {
        guard let index = slots.index(forKey: key) else { return nil }
        return modify(&slots.values[index]) { $0.cached }
    }

    /// A cached instance, a build to wait for, or a claim to build `key`.
    ///
    /// - Parameters:
    ///   - isAsync: Whether the resolve runs in `resolveAsync`, which can run async factories and hop.
    ///   - isInChain: Whether the chain being resolved already resolves `key`: building it would be a cycle.
    ///   - isOnMainActor: Whether the resolve is isolated to the main actor; asked only for a
    ///     main-actor registration (the check may cost a system call).
    ///   - owner: The resolution that will own a build; `nil`: a new one (the root of its own).
    package mutating func claim(
        _ key: AnyType, in container: ObjectIdentifier, isAsync: Bool, isInChain: @autoclosure () -> Bool,
        isOnMainActor: () -> Bool, owner: Resolution?
    ) -> Claim {
        guard let index = slots.index(forKey: key) else { return .notRegistered }
        let claim = modify(&slots.values[index]) { [epoch] slot -> Claim in
            if let box = slot.cached { return .cached(box) }
            let registration = slot.registration
            if case .weak(let reference) = slot.held, let box = reference.box { return .cached(box) }
            if isInChain() { return .cycle }
            if registration.kind == .mainActor && !isOnMainActor() { return isAsync ? .hop : .wrongIsolation }
            // Never block a thread on async work: a synchronous resolve cannot build or wait for it.
            if registration.kind == .async && !isAsync { return .asyncFactory(registration.lifetime) }
            switch slot.held {
            case .building(let owner):  // The first waiter makes the build's handle: an uncontended build needs none.
                let build = Build(owner: owner, container: container, type: key)
                slot.held = .waited(build)
                return .wait(build)
            case .waited(let build): return .wait(build)
            default: break
            }
            guard registration.lifetime != .transient else {
                return .build(registration, owner: nil, recordsEdges: slot.recordsEdges, epoch: epoch)
            }
            let owner = owner ?? .make()
            slot.held = .building(owner)
            return .build(registration, owner: owner, recordsEdges: slot.recordsEdges, epoch: epoch)
        }
        if case .build(let made, _?, _, _) = claim, made.lifetime != .singleton, !slots.values[index].isResettable {
            slots.values[index].isResettable = true
            resettable.append(key)
        }
        return claim
    }

    /// What finishing a build asks for: whether the instance was stored (cached, or held weakly for
    /// `.weak`), the build if someone waited for it (finish it in the wait-for graph and wake the waiting threads), and the tasks to
    /// resume once unlocked.
    package typealias Completion = (stored: Bool, woken: Build?, waiters: [CheckedContinuation<Void, Never>])

    /// Ends a run of `registration`'s factory that made `instance` (`nil` if it failed, or `nil` was
    /// not cached), in a frame of `epoch`, and the build `owner` claimed for a cached lifetime. The instance is
    /// cached only if the build is still current (its registration was not replaced, nor reset) and (but
    /// for a singleton) no reset happened since its resolution started. Waiters of an abandoned build were
    /// woken when it was abandoned.
    package mutating func complete(
        _ registration: Registration, owner: Resolution?, epoch buildEpoch: UInt64, instance: Box?,
        recordedEdges: Bool
    ) -> Completion {
        guard let index = slots.index(forKey: registration.type) else { return (false, nil, []) }
        return modify(&slots.values[index]) { [epoch] slot in
            var completion: Completion = (false, nil, [])
            guard slot.registration === registration else { return completion }
            if instance != nil && recordedEdges { slot.recordsEdges = false }
            switch slot.held {
            case .building(let current) where owner != nil && current === owner: break
            case .waited(let build) where owner != nil && build.owner === owner:
                swap(&completion.waiters, &build.asyncWaiters)
                completion.woken = build
            default: return completion
            }
            slot.held = .nothing
            if let instance, registration.lifetime == .singleton || buildEpoch == epoch {
                if registration.lifetime != .weak {
                    slot.held = .instance(instance)
                } else if let object = instance.object {
                    slot.held = .weak(WeakReference(object, type: registration.type, valueType: instance.type))
                }
                completion.stored = true
            }
            return completion
        }
    }

    /// Whether `build` is still in progress (a waiter keeps waiting) or was finished or abandoned.
    package func isBuilding(_ build: Build) -> Bool {
        guard let index = slots.index(forKey: build.type) else { return false }
        if case .waited(let current) = slots.values[index].held { return current === build }
        return false
    }

    // MARK: - Changing

    /// An instance a change took out of the container, and whether it is told it is evicted (if it is
    /// `InjectionDisposable`) and watched by `liveInstancesFromPreviousScopes()`: an instance the container
    /// built, evicted after it was built (not because its `postConstruction` failed).
    package typealias Evicted = (box: Box, type: AnyType, isTold: Bool)

    /// What a change took out, to be carried out by the container.
    package struct Evictions {
        package var instances: [Evicted] = []
        /// Builds abandoned while others wait for them: finish them in the wait-for graph (under the lock).
        package var abandoned: [Build] = []
        /// The tasks that waited for them: resume them once unlocked, so they claim again at once.
        var waiters: [CheckedContinuation<Void, Never>] = []
        /// Objects to release after unlocking: releasing can run a `deinit`.
        var released: [AnyObject] = []
        /// A `replace` took out a registration whose instances others may still hold: one that held an
        /// instance (cached, or weakly and still alive), or a transient, whose every instance is its
        /// resolver's. `register` reports the cached holders.
        var replacedHeldInstances = false

        package init() {}

        /// Adds what another change took out.
        mutating func merge(_ other: Self) {
            instances += other.instances
            abandoned += other.abandoned
            waiters += other.waiters
            released += other.released
        }

        /// Takes what `slot` holds out of it.
        mutating func empty(_ slot: inout Slot, unlessSingleton: Bool = false) {
            // A reset leaves singletons.
            if unlessSingleton && (slot.held.isNothing || slot.registration.lifetime == .singleton) { return }
            switch slot.held {
            case .instance(let box):
                instances.append((box, slot.registration.type, isTold: slot.registration.ownsInstances))
            case .waited(let build):
                abandoned.append(build)
                waiters += build.asyncWaiters
                build.asyncWaiters = []
            case .building, .weak, .nothing: break
            }
            slot.held = .nothing
        }
    }

    /// Starts a new epoch: evicts scoped instances, forgets weak ones, and abandons their builds.
    /// Registrations and singletons stay.
    package mutating func reset() -> Evictions {
        epoch &+= 1
        var evictions = Evictions()
        for key in resettable {
            guard let index = slots.index(forKey: key) else { continue }
            slots.values[index].isResettable = false
            evictions.empty(&slots.values[index], unlessSingleton: true)
        }
        resettable = []
        return evictions
    }

    /// Registers `registration` for `key` (or unregisters `key`, for `nil`), evicting what the old
    /// registration had built. A build in progress of the old one finishes but caches nothing. Returns
    /// `nil` if `key` was not registered: nothing to carry out (the common case at launch).
    package mutating func replace(_ key: AnyType, with registration: Registration?) -> Evictions? {
        generation &+= 1
        let replaced = registration.map { slots.updateValue(Slot(registration: $0), forKey: key) }
            ?? slots.removeValue(forKey: key)
        if registration != nil && !removed.isEmpty { removed[key] = nil }
        guard var old = replaced else { return nil }
        if registration == nil { removed[key] = (old.registration.file, false) }
        var evictions = Evictions()
        // A live weak instance goes to `released`: the strong reference the read took may be the last.
        evictions.replacedHeldInstances = old.registration.lifetime == .transient
            || old.hasLiveInstance(keepingAliveIn: &evictions.released)
        evictions.empty(&old)
        evictions.released.append(old.registration)
        return evictions
    }

    /// Unregisters everything: every instance is evicted as by a reset, singletons included, and every
    /// build in progress finishes but caches nothing.
    mutating func removeAll() -> Evictions {
        var evictions = Evictions()
        (epoch, generation) = (epoch &+ 1, generation &+ 1)
        for var slot in slots.values {
            removed[slot.registration.type] = (slot.registration.file, true)
            evictions.empty(&slot)
            evictions.released.append(slot.registration)
        }
        slots = [:]
        return evictions
    }

    /// Takes `instance` out of `registration`, the one that cached it, if it is still there: its
    /// `postConstruction`, or one in its graph, failed. (Not out of whatever is registered for its key now:
    /// a newer registration's instance is another one.) Neither told nor tracked: it never finished its
    /// construction.
    mutating func evict(_ instance: Box, from registration: Registration) -> Evictions {
        var evictions = Evictions()
        guard let index = slots.index(forKey: registration.type) else { return evictions }
        modify(&slots.values[index]) { slot in
            guard slot.registration === registration else { return }
            switch slot.held {
            case .instance(let box) where box === instance:
                evictions.instances.append((box, registration.type, isTold: false))
                slot.held = .nothing
            case .weak(let reference):
                if let object = reference.object {
                    if object === instance.object { slot.held = .nothing }
                    evictions.released.append(object)  // The strong reference the read took may be the last.
                }
            default: break
            }
        }
        return evictions
    }
}

/// Runs `body` on `value` in place (a slot of the table, changed where it is: read as a value and written back,
/// it would be copied, with a reference count per field).
private func modify<Value, Result>(_ value: inout Value, _ body: (inout Value) -> Result) -> Result { body(&value) }
