import _InjectionPlatform

// MARK: - The resolution algorithm

extension InjectionContainer {
    /// Resolves `requested` (a type or an `InjectionKey`) as a `Value`.
    ///
    /// The fast path looks in this thread's cache and takes no lock another thread uses: a cached
    /// instance is returned as is; a transient's factory runs right away. Otherwise
    /// ``_resolveBox(_:parent:startsRoot:cachesInThread:onMainActor:)`` does the work. `frame` and
    /// `transaction` come from the current scope: the running factory, and an open
    /// `resetCurrentContainer { }`; `startsRoot` says the frame belongs to another task (see
    /// `_Context.parent`).
    @inline(__always)
    func _resolve<Value>(
        _ requested: _AnyType, as _: Value.Type, frame: _Frame?, transaction: _Transaction?,
        threadState: Unmanaged<_ThreadState>?, caller: (any Actor)?, startsRoot: Bool = false
    ) throws(InjectionError) -> Value {
        if frame != nil || transaction != nil {
            // A frame from another task (`startsRoot`) is not this resolve's to write to: its own thread may
            // be recording its edges right now.
            try observe(requested, frame: startsRoot ? nil : frame, chain: frame?.chain ?? [], transaction: transaction)
        }
        let key = requested.id, containerID = ObjectIdentifier(self)
        return try fromThreadCache(key, as: Value.self, threadState: threadState) {
            frame?.contains(key, in: containerID) ?? false
        } transient: { (registration) throws(InjectionError) -> Value in
            try runTransient(
                registration, as: Value.self, key: key, parentLink: nil, parentFrame: frame, startsRoot: startsRoot,
                transaction: transaction, threadState: threadState.unsafelyUnwrapped)
        } miss: { () throws(InjectionError) -> Value in
            try _resolveBox(
                requested, parent: frame, startsRoot: startsRoot, cachesInThread: true,
                onMainActor: _MainActorCheck.isMainActor(caller)
            ).value(as: Value.self)
        }
    }

    /// Resolves `requested` inside a transient's factory that runs from the thread's cache (`link`):
    /// `_resolve` for a chain on the stack. Only the slow path needs the link's frame. `transaction` is
    /// the innermost open `resetCurrentContainer { }` the factory runs in (another container's, since
    /// resolving the block's own container inside it is refused before any factory runs).
    @inline(__always)
    func _resolve<Value>(
        _ requested: _AnyType, as _: Value.Type, link: UnsafeMutablePointer<_Link>, transaction: _Transaction?,
        threadState: Unmanaged<_ThreadState>?, caller: (any Actor)?
    ) throws(InjectionError) -> Value {
        // No edges to record: such a factory is cached only once its edges are recorded.
        if transaction != nil { try observe(requested, frame: nil, chain: link.frame.chain, transaction: transaction) }
        let key = requested.id, containerID = ObjectIdentifier(self)
        return try fromThreadCache(key, as: Value.self, threadState: threadState) {
            link.contains(key, in: containerID)
        } transient: { (registration) throws(InjectionError) -> Value in
            try runTransient(
                registration, as: Value.self, key: key, parentLink: link, parentFrame: nil, startsRoot: false,
                transaction: transaction, threadState: threadState.unsafelyUnwrapped)
        } miss: { () throws(InjectionError) -> Value in
            try _resolveBox(
                requested, parent: link.frame, cachesInThread: true, onMainActor: _MainActorCheck.isMainActor(caller)
            ).value(as: Value.self)
        }
    }

    /// The fast path: copies a cached instance out of this thread's cache under its lock (no reference
    /// count but the instance's own), or hands a transient's registration to `transient`, or calls
    /// `miss`; also for a transient already in the chain (`isInChain`), so the slow path reports the cycle.
    ///
    /// Nothing here names `Optional<Value>`: unspecialized, that costs a generic-metadata lookup.
    @inline(__always)
    private func fromThreadCache<Value>(
        _ key: _TypeID, as _: Value.Type, threadState: Unmanaged<_ThreadState>?,
        isInChain: () -> Bool,
        transient: (Unmanaged<_AnyRegistration>) throws(InjectionError) -> Value,
        miss: () throws(InjectionError) -> Value
    ) throws(InjectionError) -> Value {
        guard let threadState else { return try miss() }
        let containerID = ObjectIdentifier(self)
        guard let hit = threadState._withUnsafeGuaranteedRef({ $0.beginLookup(container: containerID, key: key) }) else {
            threadState._withUnsafeGuaranteedRef { $0.endLookup() }
            return try miss()
        }
        if !hit.isFactory {
            let storage = Unmanaged<_Box>.fromOpaque(hit.object.toOpaque())._withUnsafeGuaranteedRef { $0.storage }
            let value = storage.assumingMemoryBound(to: Value.self).pointee
            threadState._withUnsafeGuaranteedRef { $0.endLookup() }
            return value
        }
        // Not retained: the outermost transient pins the cache, so no registration in it is released
        // (even if evicted) until that transient is done.
        let registration = Unmanaged<_AnyRegistration>.fromOpaque(hit.object.toOpaque())
        let pins = threadState._withUnsafeGuaranteedRef { $0.pinLocked() }
        threadState._withUnsafeGuaranteedRef { $0.endLookup() }
        defer { if pins { _ = threadState._withUnsafeGuaranteedRef { $0.unpin() } } }
        return isInChain() ? try miss() : try transient(registration)
    }

    /// Refuses resolves inside an open `resetCurrentContainer { }` of this container (`transaction` or
    /// one around it), by whatever path they come, and records "the running factory needs `requested`"
    /// for the dependency graph on `frame`, which must be this thread's own; `chain` is what a message
    /// names before `requested`.
    private func observe(
        _ requested: _AnyType, frame: _Frame?, chain: @autoclosure () -> [_AnyType], transaction: _Transaction?
    ) throws(InjectionError) {
        if transaction?.open(for: self) != nil {
            throw .resolvedDuringReset(requested, chain: chain() + [requested], names: typeNames)
        }
        if let frame, frame.recordsEdges, frame.container == ObjectIdentifier(self) {
            frame.dependencies.append(requested)
        }
    }

    /// Runs a transient's factory found in this thread's cache: no lock, no box, no frame (a `_Link`
    /// on the thread's link stack stands for it). It is cached there only once its edges are recorded
    /// and if it has no `postConstruction`; the caller checked the chain for a cycle. The parent is
    /// `parentLink`, else `parentFrame`.
    private func runTransient<Value>(
        _ pinned: Unmanaged<_AnyRegistration>, as _: Value.Type, key: _TypeID,
        parentLink: UnsafeMutablePointer<_Link>?, parentFrame: _Frame?, startsRoot: Bool, transaction: _Transaction?,
        threadState: Unmanaged<_ThreadState>
    ) throws(InjectionError) -> Value {
        try checkStack(
            of: threadState, resolving: pinned._withUnsafeGuaranteedRef { $0.type }, parentLink: parentLink,
            parentFrame: parentFrame)
        let containerID = ObjectIdentifier(self)
        // A nested link keeps its resolution's scope; a new resolution takes the current one.
        let inherited: UInt64? =
            if startsRoot { nil }
            else if let parentLink { parentLink.pointee.container == containerID ? parentLink.pointee.scope : nil }
            else if let parentFrame { parentFrame.container == containerID ? parentFrame.scope : nil }
            else { nil }
        let type = pinned._withUnsafeGuaranteedRef { $0.type }
        let newLink = _Link(
            container: containerID, key: key, type: type, parentLink: parentLink,
            parentFrame: parentFrame.map { .passUnretained($0) }, isTaskRoot: startsRoot,
            scope: inherited ?? scope, frame: nil)
        let (link, outer) = threadState._withUnsafeGuaranteedRef { $0.pushLink(newLink, in: self, transaction: transaction) }
        // The deferred work runs after the link is popped, in the caller's scope, as on the slow path:
        // a `deinit` it triggers must not resolve as if this factory had.
        let value: Value
        do {
            value = try pinned._withUnsafeGuaranteedRef { try $0.make(as: Value.self) }
        } catch let error as InjectionError {
            let frame = link.madeFrame
            threadState._withUnsafeGuaranteedRef { $0.popLink(link, restoring: outer) }
            if let frame { drainDeferred(of: frame) }
            throw error
        } catch {
            let frame = link.frame
            threadState._withUnsafeGuaranteedRef { $0.popLink(link, restoring: outer) }
            drainDeferred(of: frame)
            throw .factoryFailed(type, chain: frame.chain, underlying: error, names: typeNames)
        }
        // A nested slow path made the link's frame: run what it deferred to this resolution's end.
        let frame = link.madeFrame
        threadState._withUnsafeGuaranteedRef { $0.popLink(link, restoring: outer) }
        if let frame, let error = drainDeferred(of: frame) { throw error }
        return value
    }

    /// Fails with ``InjectionError/Kind/tooDeep`` when the thread has less than
    /// `_ThreadState.stackReserve` of stack left, instead of letting one more nested factory overflow it.
    /// One comparison inline; the chain (from `parentLink`, else `parentFrame`) is built only to report.
    @inline(__always)
    func checkStack(
        of state: Unmanaged<_ThreadState>, resolving requested: _AnyType,
        parentLink: UnsafeMutablePointer<_Link>? = nil, parentFrame: _Frame?
    ) throws(InjectionError) {
        if _injection_stack_position() < state._withUnsafeGuaranteedRef({ $0.stackLimit }),
           let error = tooDeep(requested, parentLink: parentLink, parentFrame: parentFrame) {
            throw error
        }
    }

    /// The `tooDeep` error, or `nil` if the code runs below the thread's stack altogether (on a stack of
    /// its own, as coroutine libraries and alternate signal stacks do), where the check knows nothing.
    @inline(never)
    private func tooDeep(_ requested: _AnyType, parentLink: UnsafeMutablePointer<_Link>?, parentFrame: _Frame?) -> InjectionError? {
        var low: UInt = 0, size: UInt = 0
        _injection_thread_stack(&low, &size)
        guard _injection_stack_position() >= low else { return nil }
        let chain = parentLink?.frame.chain ?? parentFrame?.chain ?? []
        return .tooDeep(requested, chain: chain + [requested], stackSize: size, names: typeNames)
    }

    /// At the top of a resolution (`frame` is its root): runs the `postConstruction` calls deferred to
    /// it, now that the whole graph is cached; returns the first failure.
    /// If one fails, everything the resolution's nested frames built and cached is evicted too, so
    /// nothing stays cached holding an instance that was evicted for it.
    @discardableResult
    func drainDeferred(of frame: _Frame) -> InjectionError? {
        guard frame.root === frame else { return nil }
        var failure: InjectionError?
        while !frame.deferred.isEmpty {
            if case .failure(let error) = frame.deferred.removeFirst()(), failure == nil { failure = error }
        }
        if !frame.evictions.isEmpty {
            let evictions = frame.evictions
            frame.evictions = []
            if failure != nil { for evict in evictions { evict() } }
        }
        return failure
    }

    /// The slow path: returns the cached instance, or waits for another resolution's build, or builds.
    ///
    /// A miss claims the slot with a `_Build`, runs the factory outside the lock with a frame pushed on
    /// the chain, and caches the result only if the slot and scope are still the ones the build started
    /// in. Other resolutions of the same key wait for the build, unless waiting would close a cycle,
    /// which is reported instead. With `cachesInThread`, a hit is copied into this thread's cache.
    ///
    /// `onMainActor` says whether the caller is isolated to the main actor, so a main-actor factory
    /// may run here.
    func _resolveBox(
        _ requested: _AnyType, parent: _Frame?, startsRoot: Bool = false, cachesInThread: Bool,
        onMainActor: @autoclosure () -> Bool
    ) throws(InjectionError) -> _Box {
        if let state = _ThreadState.current {
            try checkStack(of: state, resolving: requested, parentFrame: parent)
        }
        let key = requested.id
        while true {
            switch try step(
                for: requested, parent: parent, startsRoot: startsRoot, cachesInThread: cachesInThread, isAsync: false,
                onMainActor: onMainActor)
            {
            case .hit(let instance):
                return instance
            case .hopToMainActor:
                throw .wrongIsolation(requested, chain: (parent?.chain ?? []) + [requested], names: typeNames)
            case .wait(let build):
                try wait(for: build, key: key, frame: startsRoot ? nil : parent)
            case .run(let slot, let registration, let frame, let build):
                var outcome = runUserCode(registration, frame: frame) { try registration.makeBox() }
                finish(&outcome, registration, key: key, slot: slot, frame: frame, build: build, defersPostConstruction: true)
                return try outcome.get()
            }
        }
    }

    enum Step {
        case hit(_Box)
        case wait(_Build)
        case run(_Slot, _AnyRegistration, _Frame, _Build?)
        /// An async resolve must build a main-actor type: it hops and resolves there.
        case hopToMainActor
    }

    /// Under the lock: a hit, a build to wait for, or a claim to build `requested` in a new frame.
    /// The frame starts a resolution of its own for an async resolve (its build may run on another
    /// task) and when `startsRoot` (the parent belongs to another task).
    ///
    /// `onMainActor` is asked only for a main-actor registration (the check may cost a system call).
    func step(
        for requested: _AnyType, parent: _Frame?, startsRoot: Bool = false, cachesInThread: Bool, isAsync: Bool,
        onMainActor: () -> Bool
    ) throws(InjectionError) -> Step {
        let key = requested.id, containerID = ObjectIdentifier(self)
        var replaced: AnyObject?  // A thread-cache entry to release after unlocking.
        defer { _ = replaced }
        return try lock.withLock { () throws(InjectionError) -> Step in
            guard let slot = slots[key] else {
                throw .notRegistered(requested, chain: (parent?.chain ?? []) + [requested], names: typeNames)
            }
            if let instance = slot.cached {
                if cachesInThread {
                    isInThreadCaches = true
                    replaced = _ThreadState.currentOrNew?.insert(container: containerID, key: key, .instance(instance.copy()))
                }
                return .hit(instance)
            }
            if let object = slot.weakInstance?.object { return .hit(slot.registration.box(for: object)) }
            if let failure = slot.failure { throw failure }
            let registration = slot.registration
            if let path = parent?.chain(from: key, in: containerID) {
                throw .cycle(registration.type, path: path + [registration.type], names: typeNames)
            }
            if registration.isMainActor && !onMainActor() {
                if isAsync { return .hopToMainActor }
                throw .wrongIsolation(registration.type, chain: (parent?.chain ?? []) + [registration.type], names: typeNames)
            }
            if registration.isAsync && !isAsync {
                // Never block a thread on async work: a synchronous resolve cannot build or wait for it.
                throw .asyncFactory(registration.type, chain: (parent?.chain ?? []) + [registration.type], names: typeNames)
            }
            if registration.lifetime != .transient, let build = slot.build {
                build.hasWaiters = true
                return .wait(build)
            }
            let frame = _Frame(
                container: containerID, key: key, type: registration.type, parent: parent,
                recordsEdges: slot.recordsEdges && !isAsync, isTaskRoot: isAsync || startsRoot, scope: scope)
            guard registration.lifetime != .transient else {
                if cachesInThread && !slot.recordsEdges && !registration.hasPostConstruction && !registration.isMainActor {
                    isInThreadCaches = true
                    replaced = _ThreadState.currentOrNew?.insert(container: containerID, key: key, .factory(registration))
                }
                return .run(slot, registration, frame, nil)
            }
            // The build belongs to the scope its resolution started in: a resolution that began before a
            // reset never caches what it builds after it.
            let build = _Build(owner: frame.root, container: containerID, key: key, type: registration.type, scope: frame.scope)
            slot.build = build
            noteInScope(slot)
            return .run(slot, registration, frame, build)
        }
    }

    /// Blocks until `build` finishes or is abandoned, unless waiting would deadlock.
    ///
    /// A top-level resolve (no `frame`) owns no build, so nobody can be waiting for it and its wait
    /// cannot close a cycle. (A resolve whose parent frame belongs to another task passes no frame: it
    /// owns no build either, and the parent's resolution is not its own to wait as.)
    private func wait(for build: _Build, key: _TypeID, frame: _Frame?) throws(InjectionError) {
        if let frame {
            waitHooks.beforeJoining?(build.type)
            if let path = _WaitGraph.beginWaiting(frame, for: build) { throw .cycle(build.type, path: path, names: typeNames) }
            waitHooks.afterJoining?(build.type)
        }
        defer { if let frame { _WaitGraph.endWaiting(frame) } }
        lock.withLock {
            while slots[key]?.build === build { lock.wait() }
        }
    }

    /// Records the factory's edges, caches the instance if the build is still current, wakes the
    /// build's waiters, and runs or defers `postConstruction`.
    ///
    /// `postConstruction` is deferred (when `defersPostConstruction`) to the end of the top-level
    /// resolve, when every instance of the graph is cached, so a back-reference resolves whichever
    /// type of a cycle was asked for first.
    func finish(
        _ outcome: inout Result<_Box, InjectionError>, _ registration: _AnyRegistration, key: _TypeID,
        slot: _Slot, frame: _Frame, build: _Build?, defersPostConstruction: Bool
    ) {
        if case .success(let instance) = outcome, registration.lifetime == .weak, registration.object(in: instance) == nil {
            outcome = .failure(.weakNeedsClass(registration.type, chain: frame.chain, names: typeNames))
        }
        recordEdges(of: frame)
        let result = outcome
        let waiters = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            if case .success = result, frame.recordsEdges { slot.recordsEdges = false }
            guard let build else { return [] }
            if slot.build === build { slot.build = nil }
            let isCurrent = !slot.isDetached && (registration.lifetime == .singleton || build.scope == scope)
            if case .success(let instance) = result, isCurrent {
                if defersPostConstruction && frame.root !== frame {
                    // Undone with the rest of this resolution if a deferred `postConstruction` fails.
                    frame.root.evictions.append { [self] in evict(instance, of: registration, from: slot) }
                }
                if registration.lifetime == .weak {
                    slot.weakInstance = registration.object(in: instance).map { _WeakReference($0, type: registration.type) }
                } else {
                    slot.cached = instance
                }
                noteInScope(slot)
            }
            build.isFinished = true
            guard build.hasWaiters else { return [] }  // Nobody waits: nothing to wake.
            _WaitGraph.finished(build)  // Lock order: container → wait graph.
            lock.broadcast()
            defer { build.asyncWaiters = [] }
            return build.asyncWaiters
        }
        for waiter in waiters { waiter.resume() }
        if case .success(let instance) = outcome, registration.hasPostConstruction {
            let postConstruct = { [self] () -> Result<_Box, InjectionError> in
                let finished = runUserCode(registration, frame: frame, isPostConstruction: true) { () throws -> _Box in
                    try registration.postConstruct(instance)
                    return instance
                }
                if case .failure = finished { evict(instance, of: registration, from: slot) }
                return finished
            }
            if defersPostConstruction {
                frame.root.deferred.append(postConstruct)
            } else if case .failure(let error) = postConstruct() {
                outcome = .failure(error)
            }
        }
        if let failure = drainDeferred(of: frame), case .success(let instance) = outcome {
            // A `postConstruction` in this graph failed: the root must not stay cached holding the instance
            // that was evicted for it.
            evict(instance, of: registration, from: slot)
            outcome = .failure(failure)
        }
    }

    /// Takes `instance` out of `slot` if it is still there (its `postConstruction`, or one in its graph, failed).
    private func evict(_ instance: _Box, of registration: _AnyRegistration, from slot: _Slot) {
        mutate { _ in
            if slot.cached === instance { slot.cached = nil }
            if let weak = slot.weakInstance?.object, weak === registration.object(in: instance) { slot.weakInstance = nil }
        }
    }

    /// Runs a factory or `postConstruction` with its frame as the thread's scope; wraps what it throws.
    func runUserCode(
        _ registration: _AnyRegistration, frame: _Frame, isPostConstruction: Bool = false, _ body: () throws -> _Box
    ) -> Result<_Box, InjectionError> {
        do {
            // The factory runs inside whatever `resetCurrentContainer { }` blocks its resolve runs in.
            let scope = _Scope(container: self, frame: frame, transaction: _Context.transaction)
            return .success(try _Context.withThreadScope(scope) { () throws(any Error) -> _Box in try body() })
        } catch let error as InjectionError {
            return .failure(error)
        } catch {
            if isPostConstruction {
                return .failure(.postConstructionFailed(registration.type, chain: frame.chain, underlying: error, names: typeNames))
            }
            return .failure(.factoryFailed(registration.type, chain: frame.chain, underlying: error, names: typeNames))
        }
    }
}
