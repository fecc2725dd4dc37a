import _InjectionPlatform

// How a value is resolved. All roads lead here: `Inject()`, every `InjectionManager` entry point,
// `container.resolve`, the lazy handles, builders, `resolveAsync` and `verify()`.
//
// 1. `resolve(_:as:in:caller:)`, the fast path: this thread's cache holds the key's cached instance
//    (its value is copied out of its box, under the cache's own lock) or a transient's registration
//    (its factory runs at once, in a frame: `runInFrame`).
// 2. Otherwise the slow path, `resolveSlowly`: claim the key under the container's lock (`claim`),
//    then return the cached instance, wait for another resolution's build, or run the factory in a
//    frame (`run`); then complete the build under the lock (`complete`), which caches the instance. (The
//    thread's cache takes it at its next resolve, whose claim finds it cached.)
// 3. `asyncResolve` drives the same `claim` and `complete` for tasks. What differs: a waiter suspends
//    instead of blocking; an async factory runs in a task of its own, and a main-actor one after a hop;
//    `postConstruction` runs at once instead of at the end of the outermost resolve; nothing enters a
//    thread's cache (a task may move between threads).

extension InjectionContainer {
    /// Resolves `requested` (a type, an `InjectionKey` or a builder model) as a `Value`: from `container`,
    /// or, for `nil`, from the running code's container (its binding's, else the process-wide one).
    static func resolve<Value>(
        _ requested: AnyType, as _: Value.Type, in container: InjectionContainer?, caller: (any Actor)?
    ) throws(InjectionError) -> Value {
        guard let thread = ThreadState.current else {
            let container = container ?? InjectionManager.currentContainer
            return try container.resolveSlowly(requested, binding: .current, caller: caller).value(as: Value.self)
        }
        do {
            // Neither the thread's state nor its cache is retained: the thread holds them.
            return try thread._withUnsafeGuaranteedRef { thread in
                try resolve(requested, as: Value.self, in: container, thread: thread, caller: caller)
            }
        } catch {
            throw error as! InjectionError  // The closure above rethrows untyped; `resolve` throws only this.
        }
    }

    /// The fast path (see the top of this file). Throws only ``InjectionError``, untyped: it runs inside
    /// `_withUnsafeGuaranteedRef`, which rethrows untyped.
    @inline(__always)  // Into the entry point: the transient graph target (≤ 3.5x) fails without it.
    private static func resolve<Value>(
        _ requested: AnyType, as _: Value.Type, in given: InjectionContainer?, thread: ThreadState, caller: (any Actor)?
    ) throws -> Value {
        let binding = Binding.current(in: thread)
        let unretained = given.map { .passUnretained($0) } ?? binding?.container ?? InjectionManager.shared
        let id = ObjectIdentifier(unretained.takeUnretainedValue())
        if let binding, binding.transaction != nil || binding.frame?.observes == true {
            try unretained.takeUnretainedValue().observe(requested, in: binding)
        }
        guard let cache = thread.cache else {
            let container = unretained.takeUnretainedValue()
            return try container.resolveSlowly(requested, binding: binding, caller: caller).value(as: Value.self)
        }
        return try cache._withUnsafeGuaranteedRef { cache in
            let entry = cache.beginLookup(requested, in: id)
            if let box = entry.instance {
                defer { cache.endLookup() }
                return box._withUnsafeGuaranteedRef { $0.value(as: Value.self) }
            }
            cache.endLookup()
            if let factory = entry.transient, binding?.frame?.contains(requested, in: id) != true {
                // A transient whose edges are known: its factory runs at once. (A cycle through it takes the
                // slow path, which reports it.) The container is not retained for it: the binding's scope, or
                // the process, keeps it (a retain of one shared container from every thread contends).
                return try unretained._withUnsafeGuaranteedRef { container in
                    try container.runInFrame(requested, binding: binding, thread: thread, recordsEdges: false) {
                        try factory.make(as: Value.self)
                    }
                }
            }
            let container = unretained.takeUnretainedValue()
            return try container.resolveSlowly(requested, binding: binding, caller: caller).value(as: Value.self)
        }
    }

    /// Refuses resolves inside an open `resetCurrentContainer { }` of this container, and records
    /// "the running factory needs `requested`" (see ``record(_:by:)``).
    private func observe(_ requested: AnyType, in binding: Binding) throws(InjectionError) {
        try refuseInsideReset(requested, in: binding)
        // A frame of another task's resolution is not this resolve's to record for.
        if !binding.startsResolution, let frame = binding.frame, frame.container == ObjectIdentifier(self) {
            record(requested, by: frame)
        }
    }

    /// Throws ``InjectionError/Kind/resolvedDuringReset`` while the transaction of `binding`, or one
    /// around it, is this container's open reset block: the new scope does not exist yet.
    private func refuseInsideReset(_ requested: AnyType, in binding: Binding?) throws(InjectionError) {
        if let transaction = binding?.transaction, transaction.open(for: self) != nil {
            throw .resolvedDuringReset(requested, chain: chain(binding?.frame, then: requested), names: names)
        }
    }

    /// What running a factory came to: its instance, boxed, or the error to throw.
    typealias Outcome = Result<Box, InjectionError>

    // MARK: - Frames

    /// Runs `make` (a transient's factory, or a builder's closure) in a new frame for `type` on this
    /// thread's frame stack, under `binding`; wraps what it throws, and, if the frame is its resolution's
    /// root, runs what nested builds deferred once the factory has returned (in the caller's binding: a
    /// `deinit` it triggers must not resolve as if the factory had).
    ///
    /// Nothing here names `Result<Value, _>` or `Optional<Value>`: unspecialized, as every resolve runs,
    /// each costs a generic-metadata lookup (the transient graph target, ≤ 3.5x, fails with them).
    @inline(__always)  // The transient graph target (≤ 3.5x) fails without it: `make` is then a direct call.
    func runInFrame<Value>(
        _ type: AnyType, binding: Binding?, thread: ThreadState, recordsEdges: Bool, _ make: () throws -> Value
    ) throws(InjectionError) -> Value {
        try checkStack(thread.stackLimit, resolving: type, parent: binding?.frame)
        let frame = thread.push(Frame(
            container: ObjectIdentifier(self), type: type, epoch: epoch, parent: binding?.frame,
            startsResolution: binding?.startsResolution ?? false, recordsEdges: recordsEdges))
        let value: Value
        do {
            value = try thread.bind(Binding(self, frame: .stack(frame), transaction: binding?.transaction), make)
        } catch {
            let failure = failure(error, in: .stack(frame))  // While the frame is there.
            _ = thread.pop(frame)?.close()
            throw failure
        }
        if let failure = thread.pop(frame)?.close() { throw failure }
        return value
    }

    /// Runs `body` (a factory, or `postConstruction`, with `isPostConstruction`) on this thread, with
    /// `frame` published as the thread's binding, and wraps what it throws with the chain.
    func run(
        _ frame: FrameRef, thread: ThreadState, transaction: Transaction?, isPostConstruction: Bool = false,
        _ body: () throws -> Box
    ) -> Outcome {
        thread.bind(Binding(self, frame: frame, transaction: transaction)) {
            Result { try body() }.mapError { failure($0, in: frame, isPostConstruction: isPostConstruction) }
        }
    }

    /// What `error`, thrown by the factory (or `postConstruction`) running in `frame`, becomes: an
    /// ``InjectionError`` as it is (a dependency's, already wrapped), anything else wrapped with the chain.
    func failure(_ error: any Error, in frame: FrameRef, isPostConstruction: Bool = false) -> InjectionError {
        if let error = error as? InjectionError { return error }
        return .factoryFailed(
            frame.type, chain: frame.chain, underlying: error, inPostConstruction: isPostConstruction, names: names)
    }

    // MARK: - Claiming and completing: what both slow paths share

    /// Claims `requested` under the container's lock (see ``ContainerState/claim(_:in:isAsync:isInChain:isOnMainActor:owner:)``)
    /// and throws its failure. With `cache`, a cached instance, or a transient's registration that may
    /// run from there, enters that thread's cache in the same step.
    private func claim(
        _ requested: AnyType, parent: FrameRef?, isAsync: Bool, isInChain: Bool, owner: Resolution?,
        cache: ThreadCache? = nil, isOnMainActor: () -> Bool = { false }
    ) throws(InjectionError) -> ContainerState.Claim {
        if let failure = verification?.failure(for: requested) { throw failure }
        var replaced: AnyObject?  // Released after unlocking.
        defer { _ = replaced }
        let id = ObjectIdentifier(self)
        let claim = state.withLock { state in
            // Asked under the lock: a strict test's start empties the thread caches under it.
            let cache = isSharedDuringStrictTests ? nil : cache
            let claim = state.claim(
                requested, in: id, isAsync: isAsync, isInChain: isInChain, caches: cache != nil,
                isOnMainActor: isOnMainActor, owner: owner)
            switch claim {
            case .cached(let box, cacheable: true): replaced = cache?.insert(box, for: requested, in: id)
            case .build(let registration, owner: nil, _, _, cacheable: true):
                replaced = registration.transientFactory.flatMap { cache?.insert($0, for: requested, in: id) }
            default: break
            }
            return claim
        }
        // A strict test's build of a launch registration: reported once unlocked (the report runs test code).
        if let report = strict?.report, case .build(let registration, _, _, _, _) = claim,
           strict?.launch[ObjectIdentifier(registration)] != nil { reportLaunchRegistration(requested, report: report) }
        switch claim {
        case .notRegistered:
            // At the top of a resolve from the process-wide container while a test's container lives.
            let escaped = parent == nil && self === InjectionManager.sharedContainer && Self.testContainersAlive
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
    /// (caching the instance, putting it in `cache`, waking waiters), and runs or defers `postConstruction`.
    ///
    /// `postConstruction` is deferred (when `defersPostConstruction`) to the end of the outermost
    /// resolve, when every instance of the graph is cached, so a back-reference resolves whichever
    /// type of a cycle was asked for first.
    func complete(
        _ made: Outcome, of registration: Registration, owner: Resolution?, frame: FrameRef,
        transaction: Transaction?, defersPostConstruction: Bool
    ) -> Outcome {
        var outcome = made
        if case .success(let instance) = made, registration.lifetime == .weak, instance.object == nil, !instance.isNilOptional {
            outcome = .failure(.weakNeedsClass(registration.type, chain: frame.chain, names: names))
        }
        let instance = try? outcome.get()
        // `nil` means "not available yet": the next resolve runs the factory again.
        let cacheable = instance.map { registration.lifetime == .transient || !$0.isNilOptional } ?? false
        let completion = state.withLock { state in
            let completion = state.complete(
                registration, owner: owner, epoch: frame.epoch, instance: cacheable ? instance : nil,
                recordedEdges: frame.recordsEdges)
            if let woken = completion.woken {
                Build.finished(woken)  // Lock order: container → wait graph.
                self.state.broadcast()
            }
            return completion
        }
        for waiter in completion.waiters { waiter.resume() }
        guard let instance else { return outcome }
        if completion.stored && defersPostConstruction && !frame.isRoot {
            // Undone with the rest of this resolution if a deferred `postConstruction` fails.
            frame.resolution.undoOnFailure { [self] in evict(instance, from: registration) }
        }
        let steps = registration.options.postConstruct
        guard !steps.isEmpty else { return outcome }
        let postFrame = frame.escape()  // Outlives this call when deferred.
        let work = { [self] () -> InjectionError? in
            let finished = ThreadState.withCurrent { thread in
                run(.on(postFrame), thread: thread, transaction: transaction, isPostConstruction: true) {
                    for step in steps { try step(instance) }
                    return instance
                }
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

    // MARK: - The synchronous slow path

    /// The synchronous slow path, from the fast path.
    func resolveSlowly(_ requested: AnyType, binding: Binding?, caller: (any Actor)?) throws(InjectionError) -> Box {
        if binding == nil, isSharedDuringStrictTests { reportEscape(of: requested) }
        return try ThreadState.withCurrent { (state) throws(InjectionError) -> Box in
            try resolveSlowly(requested, binding: binding, thread: state, caches: true) { OSThread.isMainActor(caller) }
        }
    }

    /// Returns the cached instance, or waits for another resolution's build, or builds. With `caches`,
    /// what it finds or builds enters this thread's cache.
    func resolveSlowly(
        _ requested: AnyType, binding: Binding?, thread: ThreadState, caches: Bool, isOnMainActor: () -> Bool
    ) throws(InjectionError) -> Box {
        let parent = binding?.frame, startsResolution = binding?.startsResolution ?? false
        try checkStack(thread.stackLimit, resolving: requested, parent: parent)
        let id = ObjectIdentifier(self)
        // A builder's closure depends on nothing: a build inside its own build is recursion, not a cycle.
        let isInChain = !requested.isBuilder && parent?.contains(requested, in: id) == true
        let cache = caches ? thread.cache?.takeUnretainedValue() : nil
        // A build continues its parent's resolution, or starts one, whose root frame it is.
        let owner = startsResolution ? nil : parent?.resolution
        while true {
            let claim = try claim(
                requested, parent: parent, isAsync: false, isInChain: isInChain, owner: owner,
                cache: cache, isOnMainActor: isOnMainActor)
            switch claim {
            case .cached(let instance, _): return instance
            case .wait(let build): try wait(for: build, from: startsResolution ? nil : parent)
            case .build(let registration, let buildOwner, let recordsEdges, let epoch, _):
                let frame = FrameRef.stack(thread.push(Frame(
                    container: id, type: requested, epoch: epoch, parent: parent, startsResolution: startsResolution,
                    recordsEdges: recordsEdges, keepsInstance: buildOwner != nil),
                    resolution: owner == nil ? buildOwner : nil))
                let made = run(frame, thread: thread, transaction: binding?.transaction) { try registration.make() }
                let outcome = complete(
                    made, of: registration, owner: buildOwner, frame: frame,
                    transaction: binding?.transaction, defersPostConstruction: true)
                guard case .stack(let pointer) = frame, let root = thread.pop(pointer) else { return try outcome.get() }
                return try close(root, outcome, of: registration).get()
            default: preconditionFailure("Injection: a synchronous claim hopped, or a failed claim was not thrown")
            }
        }
    }

    /// Blocks until `build` finishes or is abandoned, unless waiting would deadlock. A resolve with no
    /// frame of its own resolution (`parent` is `nil`) owns no build: nobody can be waiting for it, so
    /// its wait cannot close a cycle.
    private func wait(for build: Build, from parent: FrameRef?) throws(InjectionError) {
        if parent != nil { waitHooks.beforeJoining?(build.type.type) }
        let waiting = try joinWaitGraph(for: build, from: parent)
        if waiting != nil { waitHooks.afterJoining?(build.type.type) }
        defer { if let waiting { Build.endWaiting(waiting) } }
        state.wait { !$0.isBuilding(build) }
    }

    /// Records in the wait-for graph that the resolution of `parent` (if any: see
    /// ``wait(for:from:)``) waits for `build`, and returns it, for ``Build/endWaiting(_:)``; throws
    /// the cycle that waiting would close instead.
    private func joinWaitGraph(for build: Build, from parent: FrameRef?) throws(InjectionError) -> Resolution? {
        guard let parent else { return nil }
        let resolution = parent.resolution
        if let path = Build.beginWaiting(resolution, chain: parent.resolutionChain, for: build) {
            throw .cycle(build.type, path: path, names: names)
        }
        return resolution
    }

    // MARK: - The async slow path

    /// The slow path for tasks (see the top of this file for what differs).
    func asyncResolve(_ requested: AnyType) async throws(InjectionError) -> Box {
        let task = TaskBinding.current  // Keeps the binding's objects alive across suspensions.
        let binding = task?.binding
        let parent = binding?.frame, startsResolution = binding?.startsResolution ?? false
        let transaction = binding?.transaction
        if binding == nil, isSharedDuringStrictTests { reportEscape(of: requested) }
        // A task started inside `resetCurrentContainer { }` that resolves while the block is open.
        try refuseInsideReset(requested, in: binding)
        let id = ObjectIdentifier(self)
        // Async factories may resolve from several child tasks at once: recorded under the lock.
        if let parent, parent.container == id { record(requested, by: parent, collects: !startsResolution) }
        let isInChain = parent?.contains(requested, in: id) ?? false
        while true {
            let owner = Resolution.make()  // Async builds start resolutions of their own.
            switch try claim(requested, parent: parent, isAsync: true, isInChain: isInChain, owner: owner) {
            case .cached(let instance, _): return instance
            case .hop:
                // Main-actor types are built on the main actor, start to finish, so a build of one always
                // runs on the main thread and a main-thread resolve never blocks waiting for a hop.
                let binding = Unchecked(Binding(self, frame: parent, transaction: transaction, startsResolution: true))
                return try await MainActor.run {
                    ThreadState.withCurrent { thread in
                        Unchecked(Result { () throws(InjectionError) -> Box in
                            try resolveSlowly(requested, binding: binding.value, thread: thread, caches: false) { true }
                        })
                    }
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
            case .build(let registration, let buildOwner, let recordsEdges, let epoch, _):
                let frame = HeapFrame(Frame(
                    container: id, type: requested, epoch: epoch, parent: parent.map { .on($0.escape()) },
                    startsResolution: true, recordsEdges: recordsEdges, keepsInstance: buildOwner != nil,
                    inBuild: !startsResolution), resolution: owner)
                let made = await run(registration, in: frame, transaction: transaction)
                // Both kept to the end: the completion reads `frame` through an unretained reference.
                return try withExtendedLifetime((task, frame)) {
                    let outcome = complete(
                        made, of: registration, owner: buildOwner, frame: .on(frame),
                        transaction: transaction, defersPostConstruction: false)
                    return close(owner, outcome, of: registration)
                }.get()
            default: preconditionFailure("Injection: a failed claim was not thrown")
            }
        }
    }

    /// Runs a factory for the async slow path: an async factory (or a plain one's async form) in a task
    /// of its own (cancelling one waiter must not cancel what the others wait for), a synchronous one
    /// right here.
    private func run(_ registration: Registration, in frame: HeapFrame, transaction: Transaction?) async -> Outcome {
        guard let makeAsync = registration.options.makeAsync else {
            defer { frame.endResolution() }  // For the tasks its factory started.
            return ThreadState.withCurrent { thread in
                run(.on(frame), thread: thread, transaction: transaction) { try registration.make() }
            }
        }
        let binding = TaskBinding(container: self, frame: frame, transaction: transaction)
        return await Task { @Sendable [self] () async -> Unchecked<Outcome> in
            frame.ownerTask = currentTaskIdentity()
            // Ended before this task ends: a task made later may get its identity, and must not be taken
            // for it by the tasks its factory started.
            defer { frame.endResolution() }
            return await TaskBinding.$current.withValue(binding) {
                do {
                    return Unchecked(.success(try await makeAsync()))
                } catch { return Unchecked(.failure(failure(error, in: .on(frame)))) }
            }
        }.value.value
    }

    // MARK: - Errors

    /// Fails with ``InjectionError/Kind/tooDeep`` when the thread has less than
    /// ``ThreadState/stackReserve`` of stack left, instead of letting one more nested factory overflow it.
    func checkStack(_ limit: UInt, resolving requested: AnyType, parent: FrameRef?) throws(InjectionError) {
        if _injection_stack_position() < limit, let error = tooDeep(requested, parent: parent) { throw error }
    }

    /// The `tooDeep` error, or `nil` if the code runs below the thread's stack altogether (on a stack of
    /// its own, as coroutine libraries and alternate signal stacks do), where the check knows nothing.
    private func tooDeep(_ requested: AnyType, parent: FrameRef?) -> InjectionError? {
        var low: UInt = 0, size: UInt = 0
        _injection_thread_stack(&low, &size)
        guard _injection_stack_position() >= low else { return nil }
        return .tooDeep(requested, chain: chain(parent, then: requested), stackSize: size, names: names)
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
    func chain(_ frame: FrameRef?, then requested: AnyType) -> [AnyType] { (frame?.chain ?? []) + [requested] }
}
