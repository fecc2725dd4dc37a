import _InjectionPlatform

// How a value is resolved. All roads lead here: `Inject()`, every `InjectionManager` entry point,
// `container.resolve`, the lazy handles, `resolveAsync` and `verify()`.
//
// 1. `resolve(_:as:binding:thread:caller:)`, the fast path: this thread's cache holds the registration
//    of a cached instance (the instance is copied out of it, under the thread's own lock) or of a
//    transient (its factory runs at once, in a frame on the thread's frame stack).
// 2. Otherwise `resolveSlowly`: claim the key under the container's lock (`ContainerState.claim`),
//    and return the cached instance, wait for another resolution's build, or run the factory in a
//    frame; then complete the build under the lock (`ContainerState.complete`), which caches the
//    instance and enters its registration in this thread's cache in the same step.
// 3. `resolveAsync` is the same loop for tasks: waiting suspends instead of blocking, async factories
//    run in a task of their own, and main-actor types are built on the main actor.

extension InjectionContainer {
    /// Resolves `requested` (a type or an `InjectionKey`) as a `Value` in this container, for code that
    /// runs where `binding` says (`nil`: outside any scope).
    ///
    /// Nothing here names `Optional<Value>`: unspecialized, that costs a generic-metadata lookup.
    @inline(__always)
    func resolve<Value>(
        _ requested: AnyType, as _: Value.Type, binding: Binding?, thread: Unmanaged<ThreadState>?, caller: (any Actor)?
    ) throws(InjectionError) -> Value {
        if let binding, binding.frame != nil || binding.transaction != nil { try observe(requested, in: binding) }
        guard let thread else { return try Box.take(resolveSlowly(requested, binding: binding, caller: caller), as: Value.self, keepingIn: nil) }
        if let registration = thread._withUnsafeGuaranteedRef({ $0.pinnedTransient(requested, of: ObjectIdentifier(self)) }),
           binding?.frame?.contains(requested, in: ObjectIdentifier(self)) != true {
            // A transient inside a transient's factory, found again without the lock (see there).
            return try runTransient(registration, as: Value.self, binding: binding, thread: thread)
        }
        switch thread._withUnsafeGuaranteedRef({ $0.beginLookup(container: ObjectIdentifier(self), key: requested) }) {
        case .instance(let registration)?:
            let value = registration._withUnsafeGuaranteedRef { $0.instance(as: Value.self) }
            thread._withUnsafeGuaranteedRef { $0.endLookup() }
            return value
        case .factory(let registration)?:
            // Not retained: the outermost transient pins the cache, so no registration in it is released
            // (even if evicted) until that transient is done.
            let pins = thread._withUnsafeGuaranteedRef { $0.pinLocked() }
            thread._withUnsafeGuaranteedRef { $0.remember(registration, for: requested, of: ObjectIdentifier(self)) }
            thread._withUnsafeGuaranteedRef { $0.endLookup() }
            defer { if pins { _ = thread._withUnsafeGuaranteedRef { $0.unpin() } } }
            if binding?.frame?.contains(requested, in: ObjectIdentifier(self)) == true {
                // A cycle through a transient: the slow path reports it.
                return try Box.take(resolveSlowly(requested, binding: binding, caller: caller), as: Value.self, keepingIn: thread)
            }
            return try runTransient(registration, as: Value.self, binding: binding, thread: thread)
        case nil:
            thread._withUnsafeGuaranteedRef { $0.endLookup() }
            return try Box.take(resolveSlowly(requested, binding: binding, caller: caller), as: Value.self, keepingIn: thread)
        }
    }

    /// Refuses resolves inside an open `resetCurrentContainer { }` of this container, and records
    /// "the running factory needs `requested`" for the graph when its frame records edges. Inline: two
    /// tests on every resolve inside a factory; the work is out of line.
    @inline(__always)
    private func observe(_ requested: AnyType, in binding: Binding) throws(InjectionError) {
        if let transaction = binding.transaction { try refuseInsideReset(requested, transaction, chain: binding.frame) }
        // A frame of another task's resolution is not this resolve's to record for.
        if !binding.startsResolution, let frame = binding.frame, frame.recordsEdges, frame.container == ObjectIdentifier(self) {
            record(InjectionGraph._Edge(from: frame.type, to: requested))
        }
    }

    /// Throws ``InjectionError/Kind/resolvedDuringReset`` while `transaction`, or one around it, is this
    /// container's open reset block: the new scope does not exist yet.
    @inline(never)
    private func refuseInsideReset(_ requested: AnyType, _ transaction: Unmanaged<Transaction>, chain frame: FrameRef?) throws(InjectionError) {
        if transaction._withUnsafeGuaranteedRef({ $0.open(for: self) }) != nil {
            throw .resolvedDuringReset(requested, chain: chain(frame, then: requested), names: names)
        }
    }

    /// Runs a transient's factory found in this thread's cache: no lock, no box, no allocation, and a
    /// frame on the thread's frame stack. The caller checked the chain for a cycle.
    ///
    /// Never specialized: it calls the factory typed through ``Registration/typedFactory(as:)``, whose
    /// words have the generic representation.
    @inline(never)
    @_semantics("optimize.sil.specialize.generic.never")
    private func runTransient<Value>(
        _ pinned: Unmanaged<Registration>, as _: Value.Type, binding: Binding?, thread: Unmanaged<ThreadState>
    ) throws(InjectionError) -> Value {
        try runInFrame(pinned._withUnsafeGuaranteedRef { $0.type }, binding: binding, thread: thread, recordsEdges: false) {
            try pinned._withUnsafeGuaranteedRef { $0.typedFactory(as: Value.self) }()
        }
    }

    /// Runs `make` (a transient's factory, or a builder's closure) in a new frame for `type` on the
    /// thread's frame stack, under `binding`; wraps what it throws and runs what nested builds deferred.
    @inline(__always)
    func runInFrame<Value>(
        _ type: AnyType, binding: Binding?, thread: Unmanaged<ThreadState>, recordsEdges: Bool, _ make: () throws -> Value
    ) throws(InjectionError) -> Value {
        try checkStack(thread._withUnsafeGuaranteedRef { $0.stackLimit }, resolving: type, parent: binding?.frame)
        let frame = Frame(
            container: ObjectIdentifier(self), type: type, epoch: epoch, parent: binding?.frame,
            startsResolution: binding?.startsResolution ?? false, recordsEdges: recordsEdges)
        let (pointer, outer) = thread._withUnsafeGuaranteedRef { $0.push(frame, in: self, transaction: binding?.transaction) }
        // What nested builds deferred runs after the frame is popped, in the caller's binding: a `deinit`
        // it triggers must not resolve as if this factory had.
        let value: Value
        do {
            value = try make()
        } catch {
            let failure = failure(error, of: type, in: .stack(pointer))  // While the frame is there.
            _ = thread._withUnsafeGuaranteedRef { $0.pop(pointer, restoring: outer) }?.close()
            throw failure
        }
        if let failure = thread._withUnsafeGuaranteedRef({ $0.pop(pointer, restoring: outer) })?.close() { throw failure }
        return value
    }

    /// The synchronous slow path, from the fast path.
    @inline(never)
    func resolveSlowly(_ requested: AnyType, binding: Binding?, caller: (any Actor)?) throws(InjectionError) -> Box {
        try ThreadState.withCurrent { (thread) throws(InjectionError) -> Box in
            try resolveSlowly(
                requested, parent: binding?.frame, startsResolution: binding?.startsResolution ?? false,
                transaction: binding?.transaction, thread: thread, caches: true,
                isOnMainActor: { MainActorCheck.isMainActor(caller) })
        }
    }

    /// The synchronous slow path: returns the cached instance, or waits for another resolution's build,
    /// or builds. A build caches its result only if its registration is still the current one, the build
    /// was not abandoned and (but for a singleton) the epoch did not change; with `caches`, the registration of a cached
    /// instance goes into this thread's cache too.
    func resolveSlowly(
        _ requested: AnyType, parent: FrameRef?, startsResolution: Bool, transaction: Unmanaged<Transaction>?,
        thread: ThreadState, caches: Bool, isOnMainActor: () -> Bool
    ) throws(InjectionError) -> Box {
        try checkStack(thread.stackLimit, resolving: requested, parent: parent)
        let id = ObjectIdentifier(self)
        let isInChain = parent?.contains(requested, in: id) ?? false
        while true {
            if let failure = verification?.failure(for: requested) { throw failure }
            var newResolution: Resolution?
            var replaced: AnyObject?  // Released after unlocking.
            defer { _ = replaced }
            let claim = state.withLock { state in
                let claim = state.claim(
                    requested, in: id, isAsync: false, isInChain: isInChain,
                    isOnMainActor: isOnMainActor
                ) {
                    if let parent, !startsResolution { return .passUnretained(parent.resolution) }  // Its root keeps it.
                    newResolution = thread.makeResolution()
                    return .passUnretained(newResolution.unsafelyUnwrapped)
                }
                switch claim {
                case .cached(_, let registration?) where caches:
                    replaced = thread.insert(registration, isFactory: false, in: id)
                    state.noteInThreadCaches(registration)
                case .build(let registration, owner: nil, _, _, cacheable: true) where caches:
                    replaced = thread.insert(registration, isFactory: true, in: id)
                    state.noteInThreadCaches(registration)
                default: break
                }
                return claim
            }
            switch claim {
            case .cached(let instance, _):
                return instance
            case .fail(let failure):
                throw error(failure, requested, parent: parent)
            case .hop:
                throw error(.wrongIsolation, requested, parent: parent)
            case .wait(let build):
                try wait(for: build, from: startsResolution ? nil : parent)
            case .build(let registration, let owner, let recordsEdges, let epoch, _):
                var frame = Frame(
                    container: id, type: requested, epoch: epoch, parent: parent,
                    startsResolution: startsResolution, recordsEdges: recordsEdges)
                frame.retainedResolution = newResolution.take().map { .passRetained($0) }
                var resolution: Resolution?
                let outcome = thread.run(frame, in: self, transaction: transaction, resolution: &resolution) {
                    (frame) -> Result<Box, InjectionError> in
                    let made = runFactory(registration, in: frame) { () throws -> Box in try registration.makeBox(on: thread) }
                    return complete(
                        made, of: registration, owner: owner, frame: frame, thread: caches ? thread : nil,
                        transaction: transaction, defersPostConstruction: true)
                }
                let result = end(resolution, of: outcome, from: registration)
                thread.recycle(&resolution)
                return try result.get()
            }
        }
    }

    /// Blocks until `build` finishes or is abandoned, unless waiting would deadlock. A resolve with no
    /// frame of its own resolution (`parent` is `nil`) owns no build: nobody can be waiting for it, so
    /// its wait cannot close a cycle.
    private func wait(for build: Build, from parent: FrameRef?) throws(InjectionError) {
        if parent != nil { waitHooks.beforeJoining?(build.type) }
        let waiting = try joinWaitGraph(for: build, from: parent)
        if waiting != nil { waitHooks.afterJoining?(build.type) }
        defer { if let waiting { WaitGraph.endWaiting(waiting) } }
        state.withLock { state in
            while state.isBuilding(build) { self.state.wait() }
        }
    }

    /// Records in the wait-for graph that the resolution of `parent` (if any: see
    /// ``wait(for:from:)``) waits for `build`, and returns it, for ``WaitGraph/endWaiting(_:)``; throws
    /// the cycle that waiting would close instead.
    private func joinWaitGraph(for build: Build, from parent: FrameRef?) throws(InjectionError) -> Resolution? {
        guard let parent else { return nil }
        let resolution = parent.resolution
        if let path = WaitGraph.beginWaiting(resolution, chain: parent.resolutionChain, for: build) {
            throw .cycle(build.type, path: path, names: names)
        }
        return resolution
    }

    /// Runs a factory (or `postConstruction`) whose frame is `frame`; wraps what it throws.
    func runFactory(
        _ registration: Registration, in frame: FrameRef, isPostConstruction: Bool = false, _ body: () throws -> Box
    ) -> Result<Box, InjectionError> {
        do {
            return .success(try body())
        } catch {
            return .failure(failure(error, of: registration.type, in: frame, isPostConstruction: isPostConstruction))
        }
    }

    /// Runs `body` (a factory, or `postConstruction` with `isPostConstruction`) of `registration` on this
    /// thread, bound to `frame` and `transaction`, as ``runFactory(_:in:isPostConstruction:_:)`` does.
    private func runBound(
        _ registration: Registration, in frame: HeapFrame, transaction: Transaction?, isPostConstruction: Bool = false,
        _ body: (ThreadState) throws -> Box
    ) -> Result<Box, InjectionError> {
        let ref = FrameRef.heap(.passUnretained(frame))
        return ThreadState.withCurrent { thread in
            thread.bind(Binding(container: .passUnretained(self), frame: ref, transaction: transaction.map { .passUnretained($0) })) {
                runFactory(registration, in: ref, isPostConstruction: isPostConstruction) { try body(thread) }
            }
        }
    }

    /// What `error`, thrown by the factory (or `postConstruction`) of `type` running in `frame`, becomes:
    /// an ``InjectionError`` as it is (a dependency's, already wrapped), anything else wrapped with the chain.
    func failure(_ error: any Error, of type: AnyType, in frame: FrameRef, isPostConstruction: Bool = false) -> InjectionError {
        if let error = error as? InjectionError { return error }
        return isPostConstruction
            ? .postConstructionFailed(type, chain: frame.chain, underlying: error, names: names)
            : .factoryFailed(type, chain: frame.chain, underlying: error, names: names)
    }

    /// Completes a factory's run: checks a `.weak` instance is a class instance, completes the build
    /// (caching the instance, copying it into `thread`'s cache, waking waiters), and runs or defers
    /// `postConstruction`.
    ///
    /// `postConstruction` is deferred (when `defersPostConstruction`) to the end of the top-level
    /// resolve, when every instance of the graph is cached, so a back-reference resolves whichever
    /// type of a cycle was asked for first.
    func complete(
        _ outcome: Result<Box, InjectionError>, of registration: Registration, owner: Unmanaged<Resolution>?,
        frame: FrameRef, thread: ThreadState?, transaction: Unmanaged<Transaction>?, defersPostConstruction: Bool
    ) -> Result<Box, InjectionError> {
        var outcome = outcome
        if case .success(let instance) = outcome, registration.lifetime == .weak, instance.object == nil, !instance.isNilOptional {
            outcome = .failure(.weakNeedsClass(registration.type, chain: frame.chain, names: names))
        }
        let instance = try? outcome.get()
        // `nil` means "not available yet": the next resolve runs the factory again.
        let cacheable = if let instance { registration.lifetime == .transient || !registration.isOptional || !instance.isNilOptional } else { false }
        var replaced: AnyObject?  // Released after unlocking.
        defer { _ = replaced }
        let completion = state.withLock { state in
            let completion = state.complete(
                registration, owner: owner, epoch: frame.epoch, instance: cacheable ? instance : nil,
                recordedEdges: frame.recordsEdges)
            if completion.cached, let thread {
                replaced = thread.insert(registration, isFactory: false, in: ObjectIdentifier(self))
                state.noteInThreadCaches(registration)
            }
            if let woken = completion.woken {
                WaitGraph.finished(woken)  // Lock order: container → wait graph.
                self.state.broadcast()
            }
            return completion
        }
        if !completion.waiters.isEmpty {  // Iterating copies the array: a reference count, on every build.
            for waiter in completion.waiters { waiter.resume() }
        }
        guard let instance else { return outcome }
        if completion.stored && defersPostConstruction && !frame.read({ $0.isRoot }) {
            // Undone with the rest of this resolution if a deferred `postConstruction` fails.
            frame.resolution.undo.append { [self] in evict(instance, from: registration) }
        }
        guard let postConstruct = registration.postConstruct else { return outcome }
        let postFrame = frame.escape()  // Outlives this call when deferred.
        let transaction = transaction?.takeUnretainedValue()
        let work = { [self] () -> InjectionError? in
            let finished = runBound(registration, in: postFrame, transaction: transaction, isPostConstruction: true) { _ in
                try postConstruct(instance)
                return instance
            }
            guard case .failure(let error) = finished else { return nil }
            evict(instance, from: registration)
            return error
        }
        if defersPostConstruction {
            frame.resolution.deferred.append(work)
        } else if let error = work() {
            return .failure(error)
        }
        return outcome
    }

    /// At the end of a resolution (`resolution` is its root's): runs the `postConstruction` calls
    /// deferred to it. If one fails, the root's instance must not stay cached holding an instance that
    /// was evicted for it: it is evicted, and the failure returned.
    func end(_ resolution: Resolution?, of outcome: Result<Box, InjectionError>, from registration: Registration) -> Result<Box, InjectionError> {
        guard let failure = resolution?.drain(), case .success(let instance) = outcome else { return outcome }
        evict(instance, from: registration)
        return .failure(failure)
    }

    /// Takes `instance` out of `registration`, the one that cached it, if it is still there.
    func evict(_ instance: Box, from registration: Registration) {
        apply { $0.evict(instance, from: registration) }
    }

    /// Fails with ``InjectionError/Kind/tooDeep`` when the thread has less than
    /// ``ThreadState/stackReserve`` of stack left, instead of letting one more nested factory overflow it.
    @inline(__always)
    func checkStack(_ limit: UInt, resolving requested: AnyType, parent: FrameRef?) throws(InjectionError) {
        if _injection_stack_position() < limit, let error = tooDeep(requested, parent: parent) { throw error }
    }

    /// The `tooDeep` error, or `nil` if the code runs below the thread's stack altogether (on a stack of
    /// its own, as coroutine libraries and alternate signal stacks do), where the check knows nothing.
    @inline(never)
    private func tooDeep(_ requested: AnyType, parent: FrameRef?) -> InjectionError? {
        var low: UInt = 0, size: UInt = 0
        _injection_thread_stack(&low, &size)
        guard _injection_stack_position() >= low else { return nil }
        return .tooDeep(requested, chain: chain(parent, then: requested), stackSize: size, names: names)
    }

    /// The error for a failed claim of `requested` under `parent`.
    func error(_ failure: ContainerState.Failure, _ requested: AnyType, parent: FrameRef?) -> InjectionError {
        switch failure {
        case .notRegistered: .notRegistered(requested, chain: chain(parent, then: requested), names: names)
        case .cycle:
            cycle(requested, path: (parent?.path(from: requested, in: ObjectIdentifier(self)) ?? []) + [requested])
        case .wrongIsolation: .wrongIsolation(requested, chain: chain(parent, then: requested), names: names)
        case .asyncFactory(let lifetime): .asyncFactory(requested, lifetime: lifetime, chain: chain(parent, then: requested), names: names)
        }
    }

    /// The cycle error for `path`, whose advice depends on whether a type on it keeps its instance.
    private func cycle(_ requested: AnyType, path: [AnyType]) -> InjectionError {
        let isTransient = state.withLock { state in
            path.allSatisfy { state.registrations[$0]?.lifetime == .transient }
        }
        return .cycle(requested, path: path, isTransient: isTransient, names: names)
    }

    /// The chain of `frame`, then `requested`: what an error names.
    func chain(_ frame: FrameRef?, then requested: AnyType) -> [AnyType] {
        (frame?.chain ?? []) + [requested]
    }

    // MARK: - The async slow path

    /// Like the synchronous slow path, but waiting tasks suspend instead of blocking a thread, async
    /// factories run in a task of their own, and main-actor types are resolved on the main actor.
    func asyncResolve(_ requested: AnyType) async throws(InjectionError) -> Box {
        let task = TaskBinding.current  // Keeps the binding's objects alive across suspensions.
        let binding = task?.binding
        let parent = binding?.frame, startsResolution = binding?.startsResolution ?? false
        let transaction = binding?.transaction
        // A task started inside `resetCurrentContainer { }` that resolves while the block is open.
        if let transaction { try refuseInsideReset(requested, transaction, chain: parent) }
        let id = ObjectIdentifier(self)
        if let parent, parent.container == id {
            // Async factories may resolve from several child tasks at once: recorded under the lock.
            record(InjectionGraph._Edge(from: parent.type, to: requested))
        }
        let isInChain = parent?.contains(requested, in: id) ?? false
        while true {
            if let failure = verification?.failure(for: requested) { throw failure }
            let owner = Resolution()  // Async builds start resolutions of their own.
            let claim = state.withLock { state in
                state.claim(requested, in: id, isAsync: true, isInChain: isInChain, isOnMainActor: { false }) { .passUnretained(owner) }
            }
            switch claim {
            case .cached(let instance, _):
                return instance
            case .fail(let failure):
                throw error(failure, requested, parent: parent)
            case .hop:
                // Main-actor types are built on the main actor, start to finish, so a build of one always
                // runs on the main thread and a main-thread resolve never blocks waiting for a hop.
                do {
                    return try await MainActor.run {
                        try ThreadState.withCurrent { (thread) throws(InjectionError) -> Unchecked<Box> in
                            Unchecked(try self.resolveSlowly(
                                requested, parent: parent, startsResolution: true, transaction: transaction, thread: thread,
                                caches: false, isOnMainActor: { true }))
                        }
                    }.value
                } catch {
                    throw error as! InjectionError  // `MainActor.run` rethrows untyped; the slow path throws only this.
                }
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
                if let waiting { WaitGraph.endWaiting(waiting) }
            case .build(let registration, let buildOwner, let recordsEdges, let epoch, _):
                let parentFrame = parent?.escape()
                var frame = Frame(
                    container: id, type: requested, epoch: epoch, parent: parentFrame.map { .heap(.passUnretained($0)) },
                    startsResolution: true, recordsEdges: recordsEdges)
                frame.retainedResolution = .passRetained(owner)
                let heapFrame = HeapFrame(frame, parent: parentFrame)
                let made = await run(registration, in: heapFrame, transaction: transaction?.takeUnretainedValue())
                let outcome = complete(
                    made, of: registration, owner: buildOwner, frame: .heap(.passUnretained(heapFrame)),
                    thread: nil, transaction: transaction, defersPostConstruction: false)
                return try withExtendedLifetime((task, heapFrame)) { end(owner, of: outcome, from: registration) }.get()
            }
        }
    }

    /// Runs a factory for the async slow path: an async factory (or a plain one's async form) in a task
    /// of its own (cancelling one waiter must not cancel what the others wait for), a synchronous one
    /// right here.
    private func run(_ registration: Registration, in frame: HeapFrame, transaction: Transaction?) async -> Result<Box, InjectionError> {
        guard registration.hasAsyncForm else {
            defer { frame.endResolution() }  // For the tasks its factory started.
            return runBound(registration, in: frame, transaction: transaction) { thread in try registration.makeBox(on: thread) }
        }
        let binding = TaskBinding(container: self, frame: frame, transaction: transaction)
        let construction = Task { @Sendable [self] () async -> Unchecked<Result<Box, InjectionError>> in
            frame.ownerTask = currentTaskIdentity()
            // Ended before this task ends: a task made later may get its identity, and must not be taken
            // for it by the tasks its factory started.
            defer { frame.endResolution() }
            return await TaskBinding.$current.withValue(binding) {
                do {
                    return Unchecked(.success(try await registration.makeBoxAsync()))
                } catch {
                    return Unchecked(.failure(failure(error, of: registration.type, in: .heap(.passUnretained(frame)))))
                }
            }
        }
        return await construction.value.value
    }
}
