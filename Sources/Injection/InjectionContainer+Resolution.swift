// MARK: - The resolution algorithm

extension InjectionContainer {
    private enum Step {
        case hit(_Box)
        case wait(_Build)
        case run(_Slot, _AnyRegistration, _Frame, _Build?)
    }

    /// Resolves `requested` (a type or an `InjectionKey`) as a `Value`.
    ///
    /// The fast path looks in this thread's cache and takes no lock another thread uses. On a miss,
    /// ``_resolveBox(_:context:copyForThread:)`` does the work.
    @inline(__always)
    func _resolve<Value>(
        _ requested: Any.Type, as _: Value.Type, context: _Context?, threadState: Unmanaged<_ThreadState>?
    ) throws(InjectionError) -> Value {
        if let context { try observe(requested, in: context) }
        let key = ObjectIdentifier(requested), containerID = ObjectIdentifier(self)
        if let box = threadState?._withUnsafeGuaranteedRef({ $0.lookup(container: containerID, key: key) }) {
            return box.value(as: Value.self)
        }
        return try _resolveBox(_AnyType(requested), context: context) { $0.copy(as: Value.self) }.value(as: Value.self)
    }

    /// Refuses resolves inside an open `resetCurrentContainer { }` and records "the running factory needs
    /// `requested`" for the dependency graph.
    @inline(__always)
    private func observe(_ requested: Any.Type, in context: _Context) throws(InjectionError) {
        if let transaction = context.transaction, transaction.container === self, transaction.isOpen {
            throw .resolvedDuringReset(_AnyType(requested), chain: (context.frame?.chain ?? []) + [_AnyType(requested)])
        }
        if let frame = context.frame, frame.recordsEdges, frame.container == ObjectIdentifier(self) {
            frame.dependencies.append(_AnyType(requested))
        }
    }

    /// The slow path: returns the cached instance, or waits for another resolution's build, or builds.
    ///
    /// A miss claims the slot with a `_Build`, runs the factory outside the lock with a frame pushed on
    /// the chain, and caches the result only if the slot and scope are still the ones the build started
    /// in. Other resolutions of the same key wait for the build, unless waiting would close a cycle,
    /// which is reported instead. `copyForThread`, when given, copies a hit into this thread's cache.
    func _resolveBox(
        _ requested: _AnyType, context: _Context?, copyForThread: ((_Box) -> _Box)?
    ) throws(InjectionError) -> _Box {
        let key = requested.id, containerID = ObjectIdentifier(self)
        let parent = context?.frame
        while true {
            let step = try lock.withLock { () throws(InjectionError) -> Step in
                guard let slot = slots[key] else {
                    throw .notRegistered(requested, chain: (parent?.chain ?? []) + [requested])
                }
                if let instance = slot.cached {
                    if let copyForThread {
                        isInThreadCaches = true
                        _ThreadState.currentOrNew.insert(container: containerID, key: key, box: copyForThread(instance))
                    }
                    return .hit(instance)
                }
                if let object = slot.weakInstance?.object { return .hit(slot.registration.box(for: object)) }
                if let failure = slot.failure { throw failure }
                let registration = slot.registration
                if let path = parent?.chain(from: key, in: containerID) {
                    throw .cycle(registration.type, path: path + [registration.type])
                }
                if registration.lifetime != .transient, let build = slot.build { return .wait(build) }
                let frame = _Frame(container: containerID, key: key, type: registration.type, parent: parent, recordsEdges: slot.recordsEdges)
                guard registration.lifetime != .transient else { return .run(slot, registration, frame, nil) }
                let build = _Build(owner: frame.root, container: containerID, key: key, type: registration.type, scope: scope)
                slot.build = build
                return .run(slot, registration, frame, build)
            }
            switch step {
            case .hit(let instance):
                return instance
            case .wait(let build):
                try wait(for: build, key: key, frame: parent)
            case .run(let slot, let registration, let frame, let build):
                return try run(registration, for: key, in: slot, frame: frame, build: build)
            }
        }
    }

    /// Blocks until `build` finishes or is abandoned, unless waiting would deadlock.
    ///
    /// A top-level resolve (no `frame`) owns no build, so nobody can be waiting for it and its wait
    /// cannot close a cycle.
    private func wait(for build: _Build, key: ObjectIdentifier, frame: _Frame?) throws(InjectionError) {
        if let frame {
            if let path = _WaitGraph.beginWaiting(frame, for: build) { throw .cycle(build.type, path: path) }
        }
        defer { if let frame { _WaitGraph.endWaiting(frame) } }
        lock.withLock {
            while slots[key]?.build === build { lock.wait() }
        }
    }

    /// Runs the factory outside the lock and caches the instance if the build is still current.
    ///
    /// `postConstruction` is deferred to the end of the top-level resolve, when every instance of the
    /// graph is cached, so a back-reference resolves whichever type of a cycle was asked for first.
    private func run(
        _ registration: _AnyRegistration, for key: ObjectIdentifier, in slot: _Slot, frame: _Frame, build: _Build?
    ) throws(InjectionError) -> _Box {
        let context = _Context(container: self, frame: frame, transaction: nil, isTaskLocal: false)
        var outcome = runUserCode(registration, frame: frame, context: context) { try registration.makeBox() }
        if case .success(let instance) = outcome, registration.lifetime == .weak, registration.object(in: instance) == nil {
            outcome = .failure(.weakNeedsClass(registration.type, chain: frame.chain, instance: instance, registration: registration))
        }
        recordEdges(of: frame)
        lock.withLock {
            if case .success = outcome, frame.recordsEdges { slot.recordsEdges = false }
            guard let build else { return }
            if slot.build === build { slot.build = nil }
            let isCurrent = slots[key] === slot && (registration.lifetime == .singleton || build.scope == scope)
            if case .success(let instance) = outcome, isCurrent {
                if registration.lifetime == .weak {
                    slot.weakInstance = registration.object(in: instance).map { _WeakReference($0, type: registration.type) }
                } else {
                    slot.cached = instance
                }
            }
            lock.broadcast()
        }
        if case .success(let instance) = outcome, registration.hasPostConstruction {
            frame.root.deferred.append { [self] in
                let finished = runUserCode(registration, frame: frame, context: context) { () throws -> _Box in
                    try registration.postConstruct(instance)
                    return instance
                }
                if case .failure = finished {
                    mutate { _ in
                        if slot.cached === instance { slot.cached = nil }
                        if slot.weakInstance?.object === registration.object(in: instance) { slot.weakInstance = nil }
                    }
                }
                return finished
            }
        }
        if frame.parent == nil {
            // The top-level resolve: everything is cached now, so back-references resolve.
            while !frame.deferred.isEmpty {
                if case .failure(let error) = frame.deferred.removeFirst()(), case .success = outcome {
                    outcome = .failure(error)
                }
            }
        }
        return try outcome.get()
    }

    /// Runs a factory or `postConstruction` with `context` current; wraps what it throws.
    private func runUserCode(
        _ registration: _AnyRegistration, frame: _Frame, context: _Context, _ body: () throws -> _Box
    ) -> Result<_Box, InjectionError> {
        do {
            return .success(try _Context.withThreadScope(context) { () throws(any Error) -> _Box in try body() })
        } catch let error as InjectionError {
            return .failure(error)
        } catch {
            return .failure(.factoryFailed(registration.type, chain: frame.chain, underlying: error))
        }
    }
}
