import _InjectionPlatform

// How a value is resolved. All roads lead here: `Inject()`, every `InjectionManager` entry point,
// `container.resolve`, the lazy handles, builders, `resolveAsync` and `verify()`.
//
// 1. `resolve(_:as:in:caller:)` reads the running code's binding (its thread's, else its task's), which
//    names the container and the frame of the factory being run, if any.
// 2. `resolve(_:binding:thread:isOnMainActor:)` looks the key up under the container's lock (`cached`): a cached
//    instance comes back from that one lock hold. Otherwise it claims the key (`claim`), and waits for another
//    resolution's build, or runs the factory in a new frame (`run`), outside every lock, then stores what it made
//    under the lock (`complete`).
// 3. `asyncResolve` drives the same `claim` and `complete` for tasks. What differs: a waiter suspends
//    instead of blocking; an async factory runs in a task of its own, and a main-actor one after a hop;
//    `postConstruction` runs at once instead of at the end of the outermost resolve.

extension InjectionContainer {
    /// Resolves `requested` (a type, an `InjectionKey` or a builder model) as a `Value`: from `container`,
    /// or, for `nil`, from the running code's container (its binding's, else the process-wide one).
    static func resolve<Value>(
        _ requested: AnyType, as _: Value.Type, in container: InjectionContainer?, caller: (any Actor)?
    ) throws(InjectionError) -> Value {
        let thread = ThreadState.current, binding = Binding.current(in: thread)
        let container = container ?? binding?.container ?? Binding.processWide
        return try container.resolve(requested, binding: binding, thread: thread) { OSThread.isMainActor(caller) }
            .value(as: Value.self)
    }

    /// Returns the cached instance of `requested`, or waits for another resolution's build, or builds it, for
    /// code running under `binding` on a thread whose state is `thread` (`nil`: none yet).
    func resolve(
        _ requested: AnyType, binding: Binding?, thread: ThreadState?, isOnMainActor: () -> Bool
    ) throws(InjectionError) -> Box {
        try observe(requested, in: binding)
        if let instance = state.withLock({ $0.cached(requested) }) { return instance }
        let parent = binding?.frame, startsResolution = binding?.startsResolution ?? false
        if parent != nil { try checkStack(thread, resolving: requested, parent: parent) }
        // A build continues its parent's resolution, or starts one, whose root frame it is.
        let owner = startsResolution ? nil : parent?.resolution
        let id = ObjectIdentifier(self)
        while true {
            let claim = try claim(
                requested, parent: parent, isAsync: false, owner: owner, isOnMainActor: isOnMainActor,
                isInChain: isInChain(requested, parent: parent, ownResolution: !startsResolution))
            switch claim {
            case .cached(let instance): return instance
            case .wait(let build): try wait(for: build, from: startsResolution ? nil : parent)
            case .build(let registration, let buildOwner, let recordsEdges, let epoch):
                let frame = Frame(
                    container: id, type: requested, epoch: epoch, parent: parent, startsResolution: startsResolution,
                    resolution: owner == nil ? buildOwner : nil, recordsEdges: recordsEdges,
                    keepsInstance: buildOwner != nil, isUnbound: binding == nil)
                let made = run(frame, thread: thread ?? .currentOrNew, transaction: binding?.transaction) {
                    try registration.make()
                }
                let outcome = complete(
                    made, of: registration, owner: buildOwner, frame: frame, transaction: binding?.transaction,
                    defersPostConstruction: true)
                return try (frame.isRoot ? close(frame.resolution, outcome, of: registration) : outcome).get()
            default: preconditionFailure("Injection: a synchronous claim hopped, or a failed claim was not thrown")
            }
        }
    }

    /// Whether this is the process-wide container while a strict test runs: a resolve from it by code bound to
    /// no container is reported (``reportEscape(of:)``), cached ones included.
    private var isSharedDuringStrictTests: Bool {
        _injection_count(Int32(_INJECTION_STRICT_TESTS)) != 0 && self === Binding.processWide
    }

    /// What every resolve does first. Bound to no container: the strict-test escape check. Under a binding:
    /// refuses resolves inside an open `resetCurrentContainer { }` of this container, and records "the running
    /// factory needs `requested`" in its frame. A frame of another task's resolution is recorded in the
    /// diagnostics, as an edge, only for an async resolve (a child task of an async factory); a task started
    /// inside a synchronous factory belongs to none of its resolutions.
    private func observe(_ requested: AnyType, in binding: Binding?, isAsync: Bool = false) throws(InjectionError) {
        guard let binding else { return isSharedDuringStrictTests ? reportEscape(of: requested) : () }
        try refuseInsideReset(requested, in: binding)
        guard let frame = binding.frame, frame.container == ObjectIdentifier(self) else { return }
        if !binding.startsResolution { frame.record(requested) } else if isAsync { record(requested, by: frame) }
    }

    /// Whether `parent`'s chain already resolves `requested` in this container: building it would be a cycle. A
    /// builder's closure depends on nothing: a build inside its own build is recursion, not a cycle.
    private func isInChain(_ requested: AnyType, parent: Frame?, ownResolution: Bool) -> Bool {
        guard let parent, !requested.isBuilder else { return false }
        return parent.chainContains(requested, in: ObjectIdentifier(self), ownResolution: ownResolution)
    }

    /// Throws ``InjectionError/Kind/resolvedDuringReset`` while the transaction of `binding`, or one
    /// around it, is this container's open reset block: the new scope does not exist yet.
    private func refuseInsideReset(_ requested: AnyType, in binding: Binding) throws(InjectionError) {
        if let transaction = binding.transaction, transaction.open(for: self) != nil {
            throw .resolvedDuringReset(requested, chain: chain(binding.frame, then: requested), names: names)
        }
    }

    /// What running a factory came to: its instance, boxed, or the error to throw.
    typealias Outcome = Result<Box, InjectionError>

    // MARK: - Frames

    /// Runs `body` (a factory, a builder's closure, or, with `isPostConstruction`, `postConstruction`) with
    /// `frame` published as the running code's binding, and wraps what it throws with the chain. A verification's
    /// copy publishes it in the task-local too: a task a factory under verification starts is part of it.
    func run<Value>(
        _ frame: Frame, thread: ThreadState?, transaction: Transaction?, isPostConstruction: Bool = false,
        _ body: () throws -> Value
    ) -> Result<Value, InjectionError> {
        if !isPostConstruction { frame.resolution.enter(frame) }
        defer { if !isPostConstruction { frame.resolution.leave(frame) } }
        return Binding(self, frame: frame, transaction: transaction).publish(on: thread, inTask: verification != nil) {
            Result { try body() }.mapError { failure($0, in: frame, isPostConstruction: isPostConstruction) }
        }
    }

    /// What `error`, thrown by the factory (or `postConstruction`) running in `frame`, becomes: an
    /// ``InjectionError`` as it is (a dependency's, already wrapped), anything else wrapped with the chain.
    func failure(_ error: any Error, in frame: Frame, isPostConstruction: Bool = false) -> InjectionError {
        if let error = error as? InjectionError { return error }
        return .factoryFailed(
            frame.type, chain: frame.types, underlying: error, inPostConstruction: isPostConstruction, names: names)
    }

    // MARK: - Claiming and completing: what both paths share

    /// Claims `requested` under the container's lock (see ``ContainerState/claim(_:in:isAsync:isInChain:isOnMainActor:owner:)``)
    /// and throws its failure.
    private func claim(
        _ requested: AnyType, parent: Frame?, isAsync: Bool, owner: Resolution?,
        isOnMainActor: () -> Bool = { false }, isInChain: @autoclosure () -> Bool
    ) throws(InjectionError) -> ContainerState.Claim {
        if verification != nil, let failure = verification?.failure(for: requested) { throw failure }
        let id = ObjectIdentifier(self)
        let claim = state.withLock { state in
            state.claim(requested, in: id, isAsync: isAsync, isInChain: isInChain(), isOnMainActor: isOnMainActor,
                        owner: owner)
        }
        // A strict test's build of a launch registration: reported once unlocked (the report runs test code).
        if case .build(let registration, _, _, _) = claim, let report = strict?.report,
           strict?.launch[ObjectIdentifier(registration)] != nil { reportLaunchRegistration(requested, report: report) }
        switch claim {
        case .notRegistered:
            // At any depth of a resolve bound to no container, from the process-wide one while a test's lives.
            let escaped = parent?.isUnbound ?? true && self === Binding.processWide && Self.testContainersAlive
            throw .notRegistered(  // What was registered is read under the lock, and named after unlocking.
                requested, chain: chain(parent, then: requested), names: names, escaped: escaped,
                registered: state.withLock { $0.registered(around: requested) })
        case .cycle: throw cycle(requested, path: (parent?.path(from: requested, in: id) ?? []) + [requested])
        case .wrongIsolation: throw .wrongIsolation(requested, chain: chain(parent, then: requested), names: names)
        case .asyncFactory(let lifetime):
            throw .asyncFactory(requested, lifetime: lifetime, chain: chain(parent, then: requested), names: names)
        default: return claim
        }
    }

    /// Completes a factory's run: checks a `.weak` instance is a class instance, completes the build
    /// (caching the instance, waking waiters), hands what the frame recorded to the diagnostics, and runs or
    /// defers `postConstruction`.
    ///
    /// `postConstruction` is deferred (when `defersPostConstruction`) to the end of the outermost
    /// resolve, when every instance of the graph is cached, so a back-reference resolves whichever
    /// type of a cycle was asked for first.
    func complete(
        _ made: Outcome, of registration: Registration, owner: Resolution?, frame: Frame,
        transaction: Transaction?, defersPostConstruction: Bool
    ) -> Outcome {
        var outcome = made
        if case .success(let instance) = made, registration.lifetime == .weak, instance.object == nil,
           !instance.isNilOptional {
            outcome = .failure(.weakNeedsClass(registration.type, chain: frame.types, names: names))
        }
        let instance = try? outcome.get()
        // `nil` means "not available yet": the next resolve runs the factory again.
        let cacheable = instance.map { registration.lifetime == .transient || !$0.isNilOptional } ?? false
        // A transient whose factory records no edges has nothing to complete: no lock (the transient graph floor).
        let completion: ContainerState.Completion = owner == nil && !frame.recordsEdges ? (false, nil, []) : state.withLock { state in
            let completion = state.complete(
                registration, owner: owner, epoch: frame.epoch, instance: cacheable ? instance : nil,
                recordedEdges: frame.recordsEdges)
            if let woken = completion.woken { Build.finished(woken) }  // Lock order: container → wait graph.
            return completion
        }
        for waiter in completion.waiters { waiter.resume() }
        noteBuilt(frame, stored: completion.stored)  // A failed build's edges too: what it needed, missing or not.
        guard let instance else { return outcome }
        if completion.stored && defersPostConstruction && !frame.isRoot {
            // Undone with the rest of this resolution if a deferred `postConstruction` fails.
            frame.resolution.undoOnFailure { [self] in evict(instance, from: registration) }
        }
        let steps = registration.options.postConstruct
        guard !steps.isEmpty else { return outcome }
        let work = { [self] () -> InjectionError? in
            let finished = run(frame, thread: .currentOrNew, transaction: transaction, isPostConstruction: true) {
                for step in steps { try step(instance) }
            }
            guard case .failure(let error) = finished else { return nil }
            evict(instance, from: registration)
            return error
        }
        if defersPostConstruction {
            frame.resolution.deferToEnd(work)
        } else if let error = work() { return .failure(error) }
        return outcome
    }

    /// Ends the resolution that a build's root frame started: runs the `postConstruction` calls deferred to
    /// it. If one fails, the root's instance must not stay cached holding an instance that was evicted for
    /// it: it is evicted, and the failure returned.
    private func close(_ resolution: Resolution, _ outcome: Outcome, of registration: Registration) -> Outcome {
        guard let failure = resolution.close(), case .success(let instance) = outcome else { return outcome }
        evict(instance, from: registration)
        return .failure(failure)
    }

    /// Takes `instance` out of `registration`, the one that cached it, if it is still there.
    func evict(_ instance: Box, from registration: Registration) { apply { $0.evict(instance, from: registration) } }

    // MARK: - Waiting

    /// Blocks until `build` finishes or is abandoned, unless waiting would deadlock. A resolve with no
    /// frame of its own resolution (`parent` is `nil`) owns no build: nobody can be waiting for it, so
    /// its wait cannot close a cycle.
    private func wait(for build: Build, from parent: Frame?) throws(InjectionError) {
        if parent != nil { waitHooks.beforeJoining?(build.type.type) }
        let waiting = try joinWaitGraph(for: build, from: parent)
        if waiting != nil { waitHooks.afterJoining?(build.type.type) }
        defer { if let waiting { Build.endWaiting(waiting) } }
        build.wait()
    }

    /// Records in the wait-for graph that the resolution of `parent` (if any: see
    /// ``wait(for:from:)``) waits for `build`, and returns it, for ``Build/endWaiting(_:)``; throws
    /// the cycle that waiting would close instead.
    private func joinWaitGraph(for build: Build, from parent: Frame?) throws(InjectionError) -> Resolution? {
        guard let parent else { return nil }
        if let path = Build.beginWaiting(parent.resolution, chain: parent.resolutionChain, for: build) {
            throw .cycle(build.type, path: path, names: names)
        }
        return parent.resolution
    }

    // MARK: - The async path

    /// The resolve of tasks (see the top of this file for what differs).
    func asyncResolve(_ requested: AnyType) async throws(InjectionError) -> Box {
        let task = TaskBinding.current  // Keeps the binding's objects alive across suspensions.
        let binding = task?.binding
        let parent = binding?.frame, startsResolution = binding?.startsResolution ?? false
        let transaction = binding?.transaction
        try observe(requested, in: binding, isAsync: true)
        let id = ObjectIdentifier(self)
        let isInChain = isInChain(requested, parent: parent, ownResolution: !startsResolution)
        while true {
            // Async builds start resolutions of their own.
            switch try claim(requested, parent: parent, isAsync: true, owner: nil, isInChain: isInChain) {
            case .cached(let instance): return instance
            case .hop:
                // Main-actor types are built on the main actor, start to finish, so a build of one always
                // runs on the main thread and a main-thread resolve never blocks waiting for a hop.
                let binding = Binding(self, frame: parent, transaction: transaction, startsResolution: true)
                return try await MainActor.run {
                    Unchecked(Result { () throws(InjectionError) -> Box in
                        try resolve(requested, binding: binding, thread: .currentOrNew) { true }
                    })
                }.value.get()
            case .wait(let build):
                let waiting = try joinWaitGraph(for: build, from: startsResolution ? nil : parent)
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let isBuilding = state.withLock { state in
                        let isBuilding = state.isBuilding(build)
                        if isBuilding { build.asyncWaiters.append(continuation) }
                        return isBuilding
                    }
                    if !isBuilding { continuation.resume() }
                }
                if let waiting { Build.endWaiting(waiting) }
            case .build(let registration, let buildOwner, let recordsEdges, let epoch):
                let frame = Frame(
                    container: id, type: requested, epoch: epoch, parent: parent, startsResolution: true,
                    resolution: buildOwner, recordsEdges: recordsEdges, keepsInstance: buildOwner != nil,
                    inBuild: !startsResolution)
                let made = await run(registration, in: frame, transaction: transaction)
                return try withExtendedLifetime(task) {
                    let outcome = complete(
                        made, of: registration, owner: buildOwner, frame: frame, transaction: transaction,
                        defersPostConstruction: false)
                    return close(frame.resolution, outcome, of: registration)
                }.get()
            default: preconditionFailure("Injection: a failed claim was not thrown")
            }
        }
    }

    /// Runs a factory for the async path: an async factory (or a plain one's async form) in a task of its
    /// own (cancelling one waiter must not cancel what the others wait for), a synchronous one right here.
    private func run(_ registration: Registration, in frame: Frame, transaction: Transaction?) async -> Outcome {
        guard let makeAsync = registration.options.makeAsync else {
            defer { frame.resolution.end() }  // For the tasks its factory started.
            return run(frame, thread: .currentOrNew, transaction: transaction) { try registration.make() }
        }
        let binding = Binding(self, frame: frame, transaction: transaction)
        return await Task { @Sendable [self] () async -> Unchecked<Outcome> in
            // Ended before this task ends: a task made later may get its identity, and must not be taken
            // for it by the tasks its factory started.
            defer { frame.resolution.end() }
            return await TaskBinding.$current.withValue(TaskBinding(binding, owner: currentTaskIdentity())) {
                do {
                    return Unchecked(.success(try await makeAsync()))
                } catch { return Unchecked(.failure(failure(error, in: frame))) }
            }
        }.value.value
    }

    // MARK: - Errors

    /// Fails with ``InjectionError/Kind/tooDeep`` when the thread has less than
    /// ``ThreadState/stackReserve`` of stack left, instead of letting one more nested factory overflow it.
    func checkStack(_ thread: ThreadState?, resolving requested: AnyType, parent: Frame?) throws(InjectionError) {
        guard _injection_stack_position() < thread?.stackLimit ?? ThreadState.currentOrNew?.stackLimit ?? 0 else { return }
        var low: UInt = 0, size: UInt = 0
        _injection_thread_stack(&low, &size)
        // Below the thread's stack altogether (on a stack of its own, as coroutine libraries and alternate signal
        // stacks use), the check knows nothing.
        guard _injection_stack_position() >= low else { return }
        throw .tooDeep(requested, chain: chain(parent, then: requested), stackSize: size, names: names)
    }

    /// The cycle error for `path`, whose advice depends on whether a type on it keeps its instance.
    private func cycle(_ requested: AnyType, path: [AnyType]) -> InjectionError {
        // A builder, registered as a singleton, keeps only its build closure: each build makes a new instance.
        let isTransient = state.withLock { state in
            path.allSatisfy { $0.isBuilder || state[$0]?.lifetime == .transient }
        }
        return .cycle(requested, path: path, isTransient: isTransient, names: names)
    }

    /// The chain of `frame`, then `requested`: what an error names.
    func chain(_ frame: Frame?, then requested: AnyType) -> [AnyType] { (frame?.types ?? []) + [requested] }
}
