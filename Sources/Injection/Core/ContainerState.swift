/// A container's entry for one key: part of ``ContainerState``, reachable only through it.
final class Slot {
    let registration: Registration
    /// The cached instance for `.scoped` and `.singleton`.
    var cached: Box?
    /// The shared instance for `.weak`, while anyone holds it.
    var weakInstance: WeakReference?
    /// The build in progress, which other resolutions of this key wait for.
    var build: Build?
    /// Where the key is in ``ContainerState``'s resettable list, if it is listed.
    var resettableIndex: Int?
    /// Whether the next run of the factory records what it resolves, for the graph. Edges are recorded
    /// once per slot (and by `verify()`), so a factory that runs again costs nothing extra.
    var recordsEdges = true
    /// Whether some thread's cache may hold an entry for this key, which a change must evict.
    var isInThreadCaches = false
    /// Whether instances of a dynamic type conform to `InjectionDisposable`, for the last type seen:
    /// the dynamic cast costs far more than the comparison, and every eviction asks.
    var disposableType: ObjectIdentifier?
    var isDisposableType = false

    init(_ registration: Registration) { self.registration = registration }

    /// Whether `instance` should be told it was evicted.
    func isDisposable(_ instance: Box) -> Bool {
        let type = instance.dynamicType
        if disposableType != type {
            disposableType = type
            isDisposableType = instance.disposable != nil
        }
        return isDisposableType
    }
}

/// A container's state and every rule that changes it, as events that return what to do next.
///
/// A pure state machine, in the shape of swift-async-algorithms' `…StateMachine` types: it runs no
/// user code, takes no lock and touches no thread. `InjectionContainer` keeps it in a
/// ``LockedState``, calls one event per lock acquisition, and carries out the returned actions:
/// the ones that must not be seen half-done under the lock (evicting thread caches, finishing builds in
/// the wait-for graph), the rest (waking tasks, `dispose()`, releasing instances) after unlocking.
struct ContainerState {
    private(set) var slots: [TypeID: Slot] = [:]
    /// Bumped by every reset. A build whose resolution started in an older epoch is never cached.
    private(set) var epoch: UInt64 = 0
    /// Bumped by every change of a registration: what the type names are worked out from.
    private(set) var generation: UInt64 = 0
    /// The keys of the non-singleton slots that held an instance or a build since the last reset: all a
    /// reset visits, however many types are registered. A key leaves it when its slot is replaced.
    private var resettable: [TypeID] = []

    init() {}

    /// A state with `registrations` and nothing built.
    init(registrations: [TypeID: Registration]) {
        slots = registrations.mapValues(Slot.init)
    }

    var registrations: [TypeID: Registration] { slots.mapValues(\.registration) }

    // MARK: - Resolving

    enum Claim {
        /// The instance is there. `cacheable`: the caller may copy it into its thread's cache.
        case cached(Box, cacheable: Bool)
        /// Another resolution is building it: wait, then claim again.
        case wait(Build)
        /// Run the factory. A cached lifetime comes with the build that others wait for; a transient
        /// with none, and `cacheable` says whether its registration may go into the thread's cache.
        /// The new frame records edges if `recordsEdges`, and belongs to `epoch`.
        case build(Registration, Build?, recordsEdges: Bool, epoch: UInt64, cacheable: Bool)
        /// An async resolve must build a main-actor type: it hops to the main actor and claims there.
        case hop
        case fail(Failure)
    }

    enum Failure { case notRegistered, cycle, wrongIsolation, asyncFactory }

    /// A cached instance, a build to wait for, or a claim to build `key`.
    ///
    /// - Parameters:
    ///   - isAsync: Whether the resolve runs in `resolveAsync`, which can run async factories and hop.
    ///   - isInChain: Whether the chain being resolved already resolves `key`: building it would be a cycle.
    ///   - inheritedEpoch: The epoch of the resolution the new frame continues, if it continues one here.
    ///   - isOnMainActor: Whether the resolve is isolated to the main actor; asked only for a
    ///     main-actor registration (the check may cost a system call).
    ///   - owner: The resolution that will own a build; asked only if one is needed.
    mutating func claim(
        _ key: TypeID, in container: ObjectIdentifier, isAsync: Bool, isInChain: Bool, inheritedEpoch: UInt64?,
        isOnMainActor: () -> Bool, owner: () -> Resolution
    ) -> Claim {
        guard let slot = slots[key] else { return .fail(.notRegistered) }
        if let instance = slot.cached { return .cached(instance, cacheable: true) }
        let registration = slot.registration
        if let object = slot.weakInstance?.object {
            return .cached(Box.holding(object, as: registration.valueType), cacheable: false)
        }
        if isInChain { return .fail(.cycle) }
        if registration.isMainActor && !isOnMainActor() { return isAsync ? .hop : .fail(.wrongIsolation) }
        // Never block a thread on async work: a synchronous resolve cannot build or wait for it.
        if registration.isAsync && !isAsync { return .fail(.asyncFactory) }
        if registration.lifetime != .transient, let build = slot.build {
            build.hasWaiters = true
            return .wait(build)
        }
        let epoch = inheritedEpoch ?? self.epoch
        let recordsEdges = slot.recordsEdges && !isAsync
        guard registration.lifetime != .transient else {
            // A factory whose edges are known, and which has nothing to run after it, may run from the
            // thread's cache without this lock.
            let cacheable = !recordsEdges && registration.postConstruct == nil && !registration.isMainActor
            return .build(registration, nil, recordsEdges: recordsEdges, epoch: epoch, cacheable: cacheable)
        }
        let build = Build(owner: owner(), container: container, key: key, registration: registration, epoch: epoch)
        slot.build = build
        listResettable(key, slot)
        return .build(registration, build, recordsEdges: recordsEdges, epoch: epoch, cacheable: false)
    }

    /// What finishing a build asks for.
    struct Completion {
        /// The instance was stored (cached, or held weakly for `.weak`).
        var stored = false
        /// The instance was cached: the caller may copy it into its thread's cache.
        var cached = false
        /// Someone waited: finish the build in the wait-for graph and wake the waiting threads.
        var wakes = false
        /// Tasks to resume once unlocked.
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    /// Ends a run of `registration`'s factory for `key` that made `instance` (`nil` if it failed), under
    /// `build` for a cached lifetime. The instance is cached only if the build is still current: its
    /// slot was not replaced, and (but for a singleton) no reset happened since its resolution started.
    mutating func complete(
        _ key: TypeID, _ registration: Registration, build: Build?, instance: Box?, recordedEdges: Bool
    ) -> Completion {
        var completion = Completion()
        if build?.hasWaiters == true {
            completion.wakes = true
            swap(&completion.waiters, &build!.asyncWaiters)
        }
        guard let slot = slots[key], slot.registration === registration else { return completion }
        if instance != nil && recordedEdges { slot.recordsEdges = false }
        guard let build else { return completion }
        if slot.build === build { slot.build = nil }
        if let instance, registration.lifetime == .singleton || build.epoch == epoch {
            if registration.lifetime == .weak {
                slot.weakInstance = instance.object.map { WeakReference($0, type: registration.type) }
            } else {
                slot.cached = instance
                completion.cached = true
            }
            completion.stored = true
            listResettable(key, slot)
        }
        return completion
    }

    /// Whether `build` is still in progress (a waiter keeps waiting) or was finished or abandoned.
    func isBuilding(_ build: Build) -> Bool {
        slots[build.key]?.build === build
    }

    /// Notes that the calling thread's cache now holds an entry for `key`.
    mutating func noteInThreadCaches(_ key: TypeID) {
        slots[key]?.isInThreadCaches = true
    }

    // MARK: - Changing

    /// An instance a change took out of the container.
    struct Evicted {
        let instance: Box
        let type: AnyType
        let isDisposable: Bool
    }

    /// What a change took out, to be carried out by the container.
    struct Evictions {
        /// Instances the container let go: tell the disposable ones, remember them (weakly) for leak checks.
        var instances: [Evicted] = []
        /// Builds abandoned while others wait for them: finish them in the wait-for graph (under the lock).
        var abandoned: [Build] = []
        /// Keys to evict from every thread's cache (under the lock).
        var threadCacheKeys: [TypeID] = []
        /// Objects to release after unlocking: releasing can run a `deinit`.
        var released: [AnyObject] = []

        /// Takes what `slot` holds out of it.
        fileprivate mutating func empty(_ slot: Slot, key: TypeID) {
            if let instance = slot.cached {
                instances.append(Evicted(instance: instance, type: slot.registration.type, isDisposable: slot.isDisposable(instance)))
            }
            slot.cached = nil
            slot.weakInstance = nil
            if let build = slot.build, build.hasWaiters { abandoned.append(build) }
            slot.build = nil
            if slot.isInThreadCaches { threadCacheKeys.append(key) }
            slot.isInThreadCaches = false
        }
    }

    /// Starts a new epoch: evicts scoped instances, forgets weak ones, and abandons their builds.
    /// Registrations and singletons stay. Visits only what the last epoch used.
    mutating func reset() -> Evictions {
        epoch &+= 1
        var evictions = Evictions()
        for key in resettable {
            let slot = slots[key]!
            slot.resettableIndex = nil
            evictions.empty(slot, key: key)
        }
        resettable.removeAll(keepingCapacity: true)
        return evictions
    }

    /// Registers `registration` for `key` (or unregisters `key`, for `nil`), evicting what the old
    /// registration had built. A build in progress of the old one finishes but caches nothing.
    mutating func replace(_ key: TypeID, with registration: Registration?) -> Evictions {
        var evictions = Evictions()
        generation &+= 1
        if let old = registration.map({ slots.updateValue(Slot($0), forKey: key) }) ?? slots.removeValue(forKey: key) {
            if let index = old.resettableIndex { unlistResettable(at: index) }
            evictions.empty(old, key: key)
            evictions.released.append(old.registration)
        }
        return evictions
    }

    /// Takes `instance` out of `key`'s slot if it is still there: its `postConstruction`, or one in
    /// its graph, failed.
    mutating func evict(_ instance: Box, of key: TypeID) -> Evictions {
        var evictions = Evictions()
        guard let slot = slots[key] else { return evictions }
        if slot.cached === instance { slot.cached = nil }
        if let object = slot.weakInstance?.object, object === instance.object {
            slot.weakInstance = nil
        }
        if slot.isInThreadCaches { evictions.threadCacheKeys.append(key) }
        slot.isInThreadCaches = false
        return evictions
    }

    /// Abandons the builds `owner` started: its thread will never finish them (`verify()` parks it).
    /// Returns their keys.
    mutating func abandonBuilds(of owner: Resolution) -> [TypeID] {
        let keys = slots.compactMap { key, slot in slot.build?.owner === owner ? key : nil }
        for key in keys { slots[key]!.build = nil }
        return keys
    }

    /// The keys a container's deinit evicts from thread caches.
    var keysInThreadCaches: [TypeID] {
        slots.compactMap { key, slot in slot.isInThreadCaches ? key : nil }
    }

    /// Lists `key`, whose slot is at `index`, for the next reset, unless it is listed or a singleton's.
    private mutating func listResettable(_ key: TypeID, _ slot: Slot) {
        guard slot.resettableIndex == nil, slot.registration.lifetime != .singleton else { return }
        slot.resettableIndex = resettable.count
        resettable.append(key)
    }

    /// Swap-removes the key at `index`: O(1), and the list never keeps a removed registration alive.
    private mutating func unlistResettable(at index: Int) {
        let last = resettable.removeLast()
        if index < resettable.count {
            resettable[index] = last
            slots[last]!.resettableIndex = index
        }
    }

    /// How many keys a reset visits (a test probe).
    var resettableCount: Int { resettable.count }
}
