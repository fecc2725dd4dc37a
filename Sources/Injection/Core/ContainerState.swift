/// A container's state and every rule that changes it, as events that return what to do next.
///
/// A pure state machine, in the shape of swift-async-algorithms' `…StateMachine` types: it runs no
/// user code, takes no lock and touches no thread. `InjectionContainer` keeps it in a
/// ``LockedState``, calls one event per lock acquisition, and carries out the returned actions:
/// the ones that must not be seen half-done under the lock (evicting thread caches, finishing builds in
/// the wait-for graph), the rest (waking tasks, `dispose()`, releasing instances) after unlocking.
struct ContainerState {
    /// The registrations by key; each holds what the container built for it.
    private(set) var registrations = RegistrationTable()
    /// Bumped by every reset and by ``removeAll()``. A build whose resolution started in an older epoch is
    /// never cached (but for a singleton's).
    private(set) var epoch: UInt64 = 0
    /// Bumped by every change of a registration: what the type names are worked out from.
    private(set) var generation: UInt64 = 0
    /// The non-singleton registrations that held an instance or a build since the last reset: all a reset
    /// visits, however many types are registered, with no lookup. A registration leaves it when it is replaced.
    private var resettable: [Registration] = []

    init() {}

    /// A state with `registrations` and nothing built.
    init(registrations: RegistrationTable) {
        for registration in registrations.values {
            let copy = registration.copy()
            copy.isRegistered = true
            _ = self.registrations.updateValue(copy)
        }
    }


    // MARK: - Resolving

    enum Claim {
        /// The instance is there. With its registration if the caller may copy it into its thread's
        /// cache (then noting so with ``noteInThreadCaches(_:)``).
        case cached(Box, cacheableFor: Registration?)
        /// Another resolution is building it: wait, then claim again.
        case wait(Build)
        /// Run the factory. A cached lifetime comes with the resolution that now owns the build (others
        /// wait for it; unretained: the claimer keeps it alive until it completes the build); a transient
        /// with none, and `cacheable` says whether its registration may go into the thread's cache. The new
        /// frame records edges if `recordsEdges`. `epoch` is the container's now: the new frame's, unless it
        /// continues a resolution of this container, whose epoch it keeps (see ``Frame``'s initializer).
        case build(Registration, owner: Unmanaged<Resolution>?, recordsEdges: Bool, epoch: UInt64, cacheable: Bool)
        /// An async resolve must build a main-actor type: it hops to the main actor and claims there.
        case hop
        case fail(Failure)
    }

    enum Failure {
        case notRegistered, cycle, wrongIsolation
        /// An async factory, claimed by a synchronous resolve; its lifetime says what the message advises.
        case asyncFactory(InjectionLifetime)
    }

    /// A cached instance, a build to wait for, or a claim to build `key`.
    ///
    /// - Parameters:
    ///   - isAsync: Whether the resolve runs in `resolveAsync`, which can run async factories and hop.
    ///   - isInChain: Whether the chain being resolved already resolves `key`: building it would be a cycle.
    ///   - isOnMainActor: Whether the resolve is isolated to the main actor; asked only for a
    ///     main-actor registration (the check may cost a system call).
    ///   - owner: The resolution that will own a build (unretained: the caller keeps it alive); asked only
    ///     if one is needed.
    @inline(__always)  // Into the slow path: out of line, it cost a retain and a release more per first resolve.
    mutating func claim(
        _ key: AnyType, in container: ObjectIdentifier, isAsync: Bool, isInChain: Bool,
        isOnMainActor: () -> Bool, owner: () -> Unmanaged<Resolution>
    ) -> Claim {
        guard let registration = registrations[key] else { return .fail(.notRegistered) }
        if registration.lifetime != .weak && registration.hasInstance {
            return .cached(registration.instanceBox(), cacheableFor: registration)
        }
        if let object = registration.weakInstance?.object {
            return .cached(Box.holding(object, as: registration.valueType), cacheableFor: nil)
        }
        if isInChain { return .fail(.cycle) }
        if registration.isMainActor && !isOnMainActor() { return isAsync ? .hop : .fail(.wrongIsolation) }
        // Never block a thread on async work: a synchronous resolve cannot build or wait for it.
        if registration.isAsync && !isAsync { return .fail(.asyncFactory(registration.lifetime)) }
        // The first waiter makes the build's handle; an uncontended build never needs one.
        if registration.lifetime != .transient, let build = registration.waitableBuild(in: container) { return .wait(build) }
        let recordsEdges = registration.recordsEdges && !isAsync
        guard registration.lifetime != .transient else {
            // A factory whose edges are known, and which has nothing to run after it, may run from the
            // thread's cache without this lock.
            let cacheable = !recordsEdges && registration.postConstruct == nil && !registration.isMainActor
            return .build(registration, owner: nil, recordsEdges: recordsEdges, epoch: epoch, cacheable: cacheable)
        }
        let builder = owner()
        registration.builder = builder.takeUnretainedValue()
        listResettable(registration)
        return .build(registration, owner: builder, recordsEdges: recordsEdges, epoch: epoch, cacheable: false)
    }

    /// What finishing a build asks for.
    struct Completion {
        /// The instance was stored (cached, or held weakly for `.weak`).
        var stored = false
        /// The instance was cached: the caller may copy it into its thread's cache.
        var cached = false
        /// The build someone waited for: finish it in the wait-for graph and wake the waiting threads.
        var woken: Build?
        /// Tasks to resume once unlocked.
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    /// Ends a run of `registration`'s factory that made `instance` (`nil` if it failed), in a
    /// frame of `epoch`, and the build `owner` claimed for a cached lifetime. The instance is cached only
    /// if the build is still current: not abandoned (its registration was not replaced, nor reset), and
    /// (but for a singleton) no reset happened since its resolution started. Waiters of an abandoned build
    /// were woken when it was abandoned.
    mutating func complete(
        _ registration: Registration, owner: Unmanaged<Resolution>?, epoch buildEpoch: UInt64,
        instance: Box?, recordedEdges: Bool
    ) -> Completion {
        var completion = Completion()
        guard registration.isRegistered else { return completion }
        if instance != nil && recordedEdges { registration.recordsEdges = false }
        guard let owner, let builder = registration.builder, builder === owner.takeUnretainedValue() else { return completion }
        if let build = registration.waitable {
            swap(&completion.waiters, &build.asyncWaiters)
            completion.woken = build
        }
        registration.builder = nil
        if let instance, registration.lifetime == .singleton || buildEpoch == epoch {
            if registration.lifetime == .weak {
                registration.weakInstance = instance.object.map { WeakReference($0, type: registration.type) }
            } else {
                registration.store(instance, in: epoch)
                completion.cached = true
            }
            completion.stored = true
            listResettable(registration)
        }
        return completion
    }

    /// Whether `build` is still in progress (a waiter keeps waiting) or was finished or abandoned.
    func isBuilding(_ build: Build) -> Bool {
        build.registration.isRegistered && build.registration.waitable === build
    }

    /// Notes that the calling thread's cache now holds an entry for `registration`, which the last
    /// claim or completion found current.
    func noteInThreadCaches(_ registration: Registration) {
        registration.isInThreadCaches = true
    }

    // MARK: - Changing

    /// An instance a change took out of the container. (Its value, if more than `object`, is in
    /// ``Evictions/values``: an `Any?` here would cost a copy and a destroy through its type's witnesses
    /// for every instance a reset evicts.)
    struct Evicted {
        /// The instance's class instance, if it has one: what is told and tracked.
        let object: AnyObject?
        let type: AnyType
        let isDisposable: Bool
        /// Whether `liveInstancesFromPreviousScopes()` should watch it: an instance the container built.
        let isTracked: Bool
    }

    /// What a change took out, to be carried out by the container.
    struct Evictions {
        /// Instances the container let go: tell the disposable ones, remember them (weakly) for leak checks.
        var instances: [Evicted] = []
        /// Builds abandoned while others wait for them: finish them in the wait-for graph (under the lock).
        var abandoned: [Build] = []
        /// The tasks that waited for them: resume them once unlocked, so they claim again at once.
        var waiters: [CheckedContinuation<Void, Never>] = []
        /// Keys to evict from every thread's cache (under the lock).
        var threadCacheKeys: [AnyType] = []
        /// Objects to release after unlocking: releasing can run a `deinit`.
        var released: [AnyObject] = []
        /// Values taken out of a registration's inline slot, other than a class instance alone: released
        /// after unlocking, like ``released``.
        var values: [Any] = []
        /// A `replace` took out a registration whose instances others may still hold: one that held an
        /// instance (cached, or weakly and still alive), or a transient, whose every instance is its
        /// resolver's. `register` reports the cached holders.
        var replacedHeldInstances = false

        /// Takes what `registration` holds out of it.
        fileprivate mutating func empty(_ registration: Registration) {
            if registration.lifetime == .weak {
                registration.weakInstance = nil
            } else if registration.hasInstance {
                takeInstance(of: registration, isTold: true)
            }
            abandonBuild(of: registration)
            uncache(registration)
        }

        /// Takes the cached instance out of `registration`; `isTold`: tells it (if it is disposable) and
        /// tracks it, as every eviction but that of an instance whose construction failed.
        fileprivate mutating func takeInstance(of registration: Registration, isTold: Bool) {
            let (object, box, isDisposable) = registration.takeInstance(values: &values)
            instances.append(Evicted(
                object: object, type: registration.type, isDisposable: isTold && isDisposable, isTracked: isTold && registration.ownsInstances))
            if let box { released.append(box) }
        }

        /// Ends the build in progress of `registration`, if any: abandoned, its waiting tasks to resume.
        fileprivate mutating func abandonBuild(of registration: Registration) {
            if let build = registration.waitable {
                abandoned.append(build)
                waiters += build.asyncWaiters
                build.asyncWaiters = []
            }
            registration.builder = nil
        }

        /// Takes `registration` out of every thread's cache that may hold it.
        fileprivate mutating func uncache(_ registration: Registration) {
            if registration.isInThreadCaches { threadCacheKeys.append(registration.type) }
            registration.isInThreadCaches = false
        }
    }

    /// Starts a new epoch: evicts scoped instances, forgets weak ones, and abandons their builds.
    /// Registrations and singletons stay. Visits only what the last epoch used.
    mutating func reset() -> Evictions {
        epoch &+= 1
        var evictions = Evictions()
        evictions.instances.reserveCapacity(resettable.count)  // A logout evicts most of what it lists.
        evictions.threadCacheKeys.reserveCapacity(resettable.count)
        for registration in resettable {
            registration.resettablePosition = -1
            evictions.empty(registration)
        }
        resettable.removeAll(keepingCapacity: true)
        return evictions
    }

    /// Registers `registration` for `key` (or unregisters `key`, for `nil`), evicting what the old
    /// registration had built. A build in progress of the old one finishes but caches nothing. Returns
    /// `nil` if `key` was not registered: nothing to carry out (the common case at launch).
    mutating func replace(_ key: AnyType, with registration: Registration?) -> Evictions? {
        generation &+= 1
        assert(registration.map { $0.type == key } ?? true, "Injection: a registration stored under another key")
        let replaced = registration.map({ registrations.updateValue($0) }) ?? registrations.removeValue(forKey: key)
        replaced?.isRegistered = false
        registration?.isRegistered = true
        guard let old = replaced else { return nil }
        var evictions = Evictions()
        if old.resettablePosition >= 0 { unlistResettable(at: Int(old.resettablePosition)) }
        evictions.replacedHeldInstances = old.hasLiveInstance(keepingAliveIn: &evictions.released) || old.lifetime == .transient
        evictions.empty(old)
        evictions.released.append(old)
        return evictions
    }

    /// Registers `registration` for `key` as ``replace(_:with:)`` does, but only while `current` is the
    /// registration of its own key: a change made through a handle of `current` (`InjectionRegistration`),
    /// checked and made in one step. `isCurrent` is `false`, and nothing changed, if `current` was replaced
    /// or unregistered since: the handle is stale.
    mutating func replace(
        _ key: AnyType, with registration: Registration, whileCurrent current: Registration
    ) -> (isCurrent: Bool, evictions: Evictions?) {
        guard registrations[current.type] === current else { return (false, nil) }
        return (true, replace(key, with: registration))
    }

    /// Unregisters everything: every instance is evicted as by a reset, singletons included, and every
    /// build in progress finishes but caches nothing.
    mutating func removeAll() -> Evictions {
        var evictions = Evictions()
        epoch &+= 1
        generation &+= 1
        for registration in registrations.values {
            registration.isRegistered = false
            evictions.empty(registration)
            evictions.released.append(registration)
        }
        registrations.removeAll()
        resettable.removeAll()
        return evictions
    }

    /// Takes `instance` out of `registration`, the one that cached it, if it is still there: its
    /// `postConstruction`, or one in its graph, failed. (Not out of whatever is registered for its key now:
    /// a newer registration's instance is another one.)
    mutating func evict(_ instance: Box, from registration: Registration) -> Evictions {
        var evictions = Evictions()
        if registration.holds(instance, in: epoch) {
            // Released once unlocked, like any evicted instance (other threads may be copying it out of the
            // registration until the eviction reaches them), but neither told nor tracked: it never
            // finished its construction.
            evictions.takeInstance(of: registration, isTold: false)
            // A resolution may ask again (its undo follows its deferred steps): by then other resolutions may
            // have stored and evicted 256 instances, and the count in a stamp would match the newest.
            instance.stamp = 0
        }
        if let object = registration.weakInstance?.object {
            if object === instance.object { registration.weakInstance = nil }
            evictions.released.append(object)  // The strong reference the read took may be the last.
        }
        evictions.uncache(registration)
        return evictions
    }

    /// Abandons the builds `owner` started: its thread will never finish them (`verify()` parks it).
    /// Returns their keys, and their waiters to wake as a reset's are (`abandoned`, `waiters`).
    mutating func abandonBuilds(of owner: Resolution) -> (keys: [AnyType], evictions: Evictions) {
        var evictions = Evictions(), keys: [AnyType] = []
        for registration in registrations.values where registration.builder === owner {
            keys.append(registration.type)
            evictions.abandonBuild(of: registration)
        }
        return (keys, evictions)
    }

    /// Lists `registration` for the next reset, unless it is listed or a singleton.
    private mutating func listResettable(_ registration: Registration) {
        guard registration.resettablePosition < 0, registration.lifetime != .singleton else { return }
        registration.resettablePosition = Int32(resettable.count)
        resettable.append(registration)
    }

    /// Swap-removes the registration at `index`: O(1), and the list never keeps a removed registration alive.
    private mutating func unlistResettable(at index: Int) {
        let last = resettable.removeLast()
        if index < resettable.count {
            resettable[index] = last
            last.resettablePosition = Int32(index)
        }
    }

    /// How many registrations a reset visits (a test probe).
    var resettableCount: Int { resettable.count }
}
