// MARK: - Verification and the dependency graph

extension InjectionContainer {
    /// Resolves every registration in a throwaway copy and throws one error that lists every problem.
    ///
    /// ```swift
    /// @Test func graphIsSound() throws {
    ///     registerLiveServices()
    ///     try InjectionManager.verify()
    /// }
    /// ```
    /// Each missing registration is reported once, with the chain that needed it; each dependency cycle
    /// once, with its path; each throwing factory once, with its error. This container's instances
    /// and caches are untouched, though the "needs" edges seen are added to ``dependencyGraph()``.
    ///
    /// A nested `Inject()` cannot throw, so verification runs the factories on worker threads of its
    /// own: a nested `Inject()` that fails there records its problem and parks its thread for good
    /// instead of ending the process. That costs one parked thread per registration that fails this way
    /// (none when the graph is sound), so call `verify()` in tests or at launch in debug builds.
    ///
    /// `async` and main-actor factories are not run (they need `await` or the main actor, which
    /// verification's threads cannot offer); a synchronous factory that needs one of them is reported
    /// (``InjectionError/Kind/asyncFactory``, ``InjectionError/Kind/wrongIsolation``), as it would fail
    /// at run time off the main actor or before the type is prepared.
    ///
    /// > Warning: Every factory runs once. Verify with factories that are cheap and free of side
    /// > effects, or register test doubles for the ones that are not.
    ///
    /// Called while a verification runs, from a factory it is building (an app that checks its graph on
    /// first use), `verify()` returns at once: the verification under way checks the whole graph.
    ///
    /// - Throws: ``InjectionError`` of kind ``InjectionError/Kind/verificationFailed``, whose
    ///   ``InjectionError/problems`` hold one error per problem.
    public func verify() throws(InjectionError) {
        // Inside a verification: a copy's factory (which would verify the copy), or any factory on a
        // verification worker thread. Starting another would build this factory again, which would
        // verify again, without end.
        if verification != nil || _ThreadState.current?._withUnsafeGuaranteedRef({ $0.isVerificationWorker }) == true {
            return
        }
        let verification = _Verification()
        let copy = InjectionContainer(copying: self, verification: verification)
        // In name order, so the chains reported (and a cycle's starting point) are the same every run.
        let types = copy.lock.withLock {
            copy.slots.values.filter { !$0.registration.isAsync && !$0.registration.isMainActor }.map(\.registration.type)
        }
            .map { (String(reflecting: $0.type), $0) }.sorted { $0.0 < $1.0 }.map(\.1)
        let problems = verification.run(types) { type in
            do throws(InjectionError) {
                _ = try copy._resolveBox(type, parent: nil, cachesInThread: false, onMainActor: false)
                return nil
            } catch {
                return error
            }
        }
        let seen = copy.graphLock.withLock { copy.edges }
        graphLock.withLock { edges.formUnion(seen) }
        if !problems.isEmpty { throw .verificationFailed(problems, registrations: types.count) }
    }

    /// The registered types and the "A needs B" edges seen so far, from real resolutions and `verify()`.
    ///
    /// ```swift
    /// try InjectionManager.verify()   // resolves everything once, so every edge is known
    /// let graph = InjectionManager.dependencyGraph()
    /// try graph.dot.write(toFile: "graph.dot", atomically: true, encoding: .utf8)
    /// ```
    public func dependencyGraph() -> InjectionGraph {
        let registered = lock.withLock { slots.values.map { ($0.registration.type, $0.registration.lifetime) } }
        let seen = graphLock.withLock { edges }
        return InjectionGraph(registered: registered, edges: seen, names: typeNames)
    }

    /// Adds what `frame`'s factory resolved so far to the graph, if it records edges.
    func recordEdges(of frame: _Frame) {
        guard frame.recordsEdges, !frame.dependencies.isEmpty else { return }
        let seen = frame.dependencies.map { InjectionGraph._Edge(from: frame.type, to: $0) }
        graphLock.withLock { edges.formUnion(seen) }
    }

    /// In a `verify()` copy: keeps the edges `frame`'s chain saw and fails the builds of its resolution,
    /// so nothing waits for the thread that is about to park.
    func abandon(_ frame: _Frame, failure: InjectionError) {
        // Only this resolution's frames: those above its root belong to another task's resolution.
        var current: _Frame? = frame
        while let link = current {
            recordEdges(of: link)
            current = link.isTaskRoot ? nil : link.parent
        }
        abandonBuilds(of: frame.root, failure: failure)
    }

    private func abandonBuilds(of resolver: _Frame, failure: InjectionError) {
        lock.withLock {
            for slot in slots.values where slot.build?.owner === resolver {
                slot.build = nil
                slot.failure = failure
            }
            lock.broadcast()
        }
    }

    /// Whether evicted instances are remembered (weakly) for ``liveInstancesFromPreviousScopes()``.
    ///
    /// On by default in debug builds, off in release builds, where it would cost a weak reference per
    /// evicted instance. Turning it off forgets what was remembered.
    public var tracksEvictedInstances: Bool {
        get { graphLock.withLock { isTrackingEvictions } }
        set {
            graphLock.withLock {
                isTrackingEvictions = newValue
                if !newValue { retired = [] }
            }
        }
    }

    /// The types of instances this container evicted (by reset, unregister or re-registration) that
    /// are still alive: something outside the container still holds them.
    ///
    /// ```swift
    /// @Test func logoutFreesTheSession() {
    ///     logIn(); logOut()
    ///     #expect(InjectionManager.liveInstancesFromPreviousScopes().isEmpty)
    /// }
    /// ```
    /// Only class instances can be tracked, and only while ``tracksEvictedInstances`` is on.
    /// Each entry is the instance's registered type (or key) name, once per live instance.
    public func liveInstancesFromPreviousScopes() -> [String] {
        let live = graphLock.withLock { () -> [_AnyType] in
            retired.removeAll { $0.object == nil }
            return retired.map(\.type)
        }
        return live.map(typeNames.name).sorted()
    }
}
