import _InjectionPlatform

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
    /// Builders are not built: a build needs a model, which only its caller has. The types their
    /// implementations inject are registrations like any other, and are verified as such.
    ///
    /// `async` and main-actor factories are not run (they need `await` or the main actor, which
    /// verification's threads cannot offer), nor an `implements` alias of one while that type is
    /// registered; a synchronous factory that needs one of them is reported
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
        if verification != nil || Verification.isWorkerThread { return }
        // A verification of this container is under way: this call comes from code it runs, perhaps in a task
        // a factory started, which no binding links to it.
        guard Verification.verifying.withLock({ $0.insert(ObjectIdentifier(self)).inserted }) else { return }
        defer { _ = Verification.verifying.withLock { $0.remove(ObjectIdentifier(self)) } }
        let verification = Verification()
        let copy = InjectionContainer(copying: self, verification: verification)
        // In name order, so the chains reported (and a cycle's starting point) are the same every run.
        let types = copy.state.withLock { state in
            state.registrations.filter { registration in
                // What runs anywhere, synchronously: not a builder, a main-actor or async factory, nor an
                // `implements` alias of one (which resolves it). An alias whose primary is gone runs, and fails.
                guard registration.kind == .plain, !registration.type.isBuilder else { return false }
                return registration.options.primary.flatMap { state[$0] }.map { $0.kind == .plain } ?? true
            }.map(\.type)
        }.map { (String(reflecting: $0.type), $0) }.sorted { $0.0 < $1.0 }.map(\.1)
        let problems = verification.run(types) { type in
            do throws(InjectionError) {
                _ = try ThreadState.withCurrent { (thread) throws(InjectionError) -> Box in
                    try copy.resolveSlowly(type, binding: nil, thread: thread, caches: false, isOnMainActor: { false })
                }
                return nil
            } catch { return error }
        }
        let seen = copy.observations.withLock { $0.edges }
        observations.withLock { $0.edges.merge(seen) { $0.union($1) } }
        if !problems.isEmpty { throw .verificationFailed(problems, registrations: types.count) }
    }

    /// The registered types and the "A needs B" edges seen so far, from real resolutions and `verify()`.
    ///
    /// ```swift
    /// try InjectionManager.verify()   // resolves everything once, so every edge is known
    /// let graph = InjectionManager.dependencyGraph()
    /// try graph.dot.write(toFile: "graph.dot", atomically: true, encoding: .utf8)
    /// ```
    ///
    /// A builder shows as a `.transient` node (every build makes a new instance), with the types its
    /// implementation injected in the builds seen so far. A type registered again (or unregistered) loses
    /// the edges its old factory recorded, until its new one runs. A class registered both as itself and
    /// as a key (or a builder) is a node per registration, the key's named `Name (key)`.
    public func dependencyGraph() -> InjectionGraph {
        // A builder makes a new instance on every build: it shows as `.transient`.
        let registered = state.withLock { state in
            state.registrations.map { registration -> (AnyType, InjectionLifetime) in
                // An `implements` alias keeps nothing: it shows its primary's lifetime.
                let lifetime = registration.options.primary.flatMap { state[$0] }?.lifetime ?? registration.lifetime
                return (registration.type, registration.type.isBuilder ? .transient : lifetime)
            }
        }
        return InjectionGraph(registered: registered, edges: observations.withLock { $0.edges }, names: names)
    }

    /// Where this container reports mistakes that are not errors, one line per finding, starting with
    /// `Injection:`; `nil` (the default) reports them to the process-wide
    /// ``InjectionManager/diagnosticsHandler``.
    ///
    /// ```swift
    /// let reports = Reports()   // your collector
    /// InjectionManager.currentContainer.diagnosticsHandler = { reports.append($0) }
    /// ```
    /// A test that sets it on its own container (`InjectionManager.currentContainer` under
    /// `.isolatedInjection`) receives that container's reports only, never those of tests running beside it.
    /// A copy of a container (`InjectionContainer(copying:)`) starts with none.
    public var diagnosticsHandler: (@Sendable (String) -> Void)? {
        get { observations.withLock { $0.handler.value } }
        set {
            var replaced = Unchecked(newValue)  // Released after unlocking: what it captures may run a deinit.
            observations.withLock { swap(&$0.handler, &replaced) }
        }
    }

    /// Reports `line` to this container's handler, else to the process-wide one.
    func report(_ line: String) { (diagnosticsHandler ?? InjectionManager.diagnosticsHandler)(line) }

    /// Tells the diagnostics handler (once per type) that `type` was registered again,
    /// outside a reset block, while cached instances that were built with the old one are still cached.
    func reportStaleDependents(of type: AnyType) {
        var keptAlive: [AnyObject] = []  // Live weak instances, released after unlocking.
        defer { _ = keptAlive }
        let cached = state.withLock { $0.holders(of: type, keepingAliveIn: &keptAlive) }
        guard !cached.isEmpty, observations.withLock({ $0.reportedStale.insert(type).inserted }) else { return }
        let name = names.name(type)
        let holders = cached.map(names.name).sorted().joined(separator: ", ")
        // A builder's registration takes the model: `register(B.self) { builder in ... }`.
        let (held, closure) = type.isBuilder
            ? ("what the old one built", "{ builder in ... }") : ("the old one", "{ ... }")
        report("""
            Injection: \(name) was registered again while cached instances still hold \(held): \(holders). \
            They keep it until the next reset. Register it inside a reset, so they are rebuilt too: \
            resetCurrentContainer { register(\(TypeNames.literal(type.type, named: name)).self) \(closure) }
            """)
    }

    /// How many strict test containers are alive, published (under `strictTests`'s lock) for the slow path of
    /// code bound to no container, which reads it without a lock. (The pointee is only read and written
    /// atomically, through the C layer.)
    nonisolated(unsafe) static let strictTestsAlive = UnsafeMutablePointer<UInt64>.atomicWord()
    /// How many test containers are alive, and how many of them strict.
    private static let testContainers = LockedState((all: 0, strict: 0))

    /// Counts a test's container made (`change` 1) or gone (-1).
    static func countTestContainer(_ change: Int, isStrict: Bool) {
        testContainers.withLock { count in
            count = (count.all + change, count.strict + (isStrict ? change : 0))
            _injection_store_u64(strictTestsAlive, UInt64(count.strict))
        }
        // The process-wide container's instances leave every thread's cache, and stay out while strict tests
        // run (see `claim`): each resolve of them then takes the slow path, which reports one bound to nothing.
        // Each strict test clears them before it starts, not only the first: one that starts while the first
        // has counted itself but not cleared yet must not find them cached.
        guard isStrict && change > 0 else { return }
        var released: [AnyObject] = []  // Released after unlocking: a deinit may use the container.
        let shared = InjectionManager.sharedContainer
        shared.state.withLock { _ in ThreadCache.forget(ObjectIdentifier(shared), into: &released) }
    }

    /// Whether this is the process-wide container while a strict test runs: a resolve from it by code bound to
    /// no container is reported (``reportEscape(of:)``), and none of its instances enters a thread's cache.
    var isSharedDuringStrictTests: Bool { _injection_load_u64(Self.strictTestsAlive) != 0 && self === InjectionManager.sharedContainer }

    /// Whether a test's container is alive: code bound to none that finds nothing in the process-wide
    /// container is then probably work a test sent elsewhere.
    static var testContainersAlive: Bool { testContainers.withLock { $0.all > 0 } }

    /// The types reported as resolved by code bound to no container while strict tests ran: once each.
    private static let reportedEscapes = LockedState(Set<AnyType>())

    /// Reports, once per type for the process, that code bound to no container resolves `type` from the
    /// process-wide container while a strict test runs: probably work a test sent to a queue or a thread.
    func reportEscape(of type: AnyType) {
        guard Self.reportedEscapes.withLock({ $0.insert(type).inserted }) else { return }
        let name = names.name(type)
        InjectionManager.diagnosticsHandler("""
            Injection: \(name) was resolved from the process-wide container by code bound to no container while \
            strict tests run: probably work a test sent to a queue or a thread. Carry the test's container along: \
            DispatchQueue.global().async(execute: InjectionManager.bound { ... })
            """)
    }

    /// Reports, once per type, that a strict test's container builds `type` from the launch registrations.
    func reportLaunchRegistration(_ type: AnyType, report: @Sendable (String) -> Void) {
        guard observations.withLock({ $0.reportedLaunch.insert(type).inserted }) else { return }
        let name = names.name(type)
        report("""
            Injection: \(name) was built from the app's launch registrations in the strict test \(testName ?? "?"). \
            Register a mock for it in the test, before it is resolved: InjectionManager.register(\
            \(TypeNames.literal(type.type, named: name)).self) { ... }, or in .isolatedInjection(startingWith:strict:).
            """)
    }

    /// Tells the diagnostics handler that `call` (as written: `.postConstruction { }`) on a
    /// handle of `type`'s registration did nothing: `type` was registered again, or unregistered, since the
    /// `register` call that returned the handle.
    func reportStaleHandle(of type: AnyType, call: String) {
        let name = names.name(type)
        report("""
            Injection: \(call) on a stale handle of \(name) did nothing: \(name) was registered again, or \
            unregistered, after the register call that returned the handle. Chain it on the latest register \
            call: register(\(TypeNames.literal(type.type, named: name)).self) { ... }\(call)
            """)
    }

    /// Forgets what was observed of the registrations in `state`, which `removeAll` is about to remove: the
    /// graph's edges and the types reported stale. Called under the container's lock, which it holds while it
    /// takes the observations lock: no build of a registration made after the removal can record an edge
    /// before this forgets them.
    func forgetObservations() { observations.withLock { ($0.edges, $0.reportedStale) = ([:], []) } }

    /// Forgets every "`key` needs B" edge of the graph: `key`'s registration was replaced or removed.
    @inline(never) func forgetEdges(from key: AnyType) { observations.withLock { $0.edges[key] = nil } }

    /// Records that the factory running in `frame` resolves `requested`: as an edge of the graph, if the frame
    /// records edges (the first successful run of each registration does); and, with `collects`, as a
    /// dependency of the instance being built for the frame's ``Frame/collector`` (see
    /// ``ContainerState/record(_:for:)``).
    @inline(never) func record(_ requested: AnyType, by frame: FrameRef, collects: Bool = true) {
        if frame.recordsEdges { observations.withLock { _ = $0.edges[frame.type, default: []].insert(requested) } }
        if collects, let collector = frame.collector { state.withLock { $0.record(requested, for: collector) } }
    }

    /// Remembers evicted instances (weakly) for ``liveInstancesFromPreviousScopes()``, if tracking is on:
    /// the ones told they were evicted.
    func remember(_ evicted: [ContainerState.Evicted]) {
        guard !evicted.isEmpty, observations.withLock({ $0.tracksEvictions }) else { return }
        let retiring = evicted.filter { $0.isTold }.compactMap { evicted in
            evicted.box.object.map { WeakReference($0, type: evicted.type, valueType: evicted.box.type) }
        }
        _ = observations.withLock { observations in
            defer { observations.retired += retiring }
            return observations.retired.dropDead()
        }
    }

    /// Whether evicted instances are remembered (weakly) for ``liveInstancesFromPreviousScopes()``.
    ///
    /// On by default in debug builds, off in release builds, where it would cost a weak reference per
    /// evicted instance. Turning it off forgets what was remembered.
    public var tracksEvictedInstances: Bool {
        get { observations.withLock { $0.tracksEvictions } }
        set { observations.withLock { ($0.tracksEvictions, $0.retired) = (newValue, newValue ? $0.retired : []) } }
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
        // Left to right: the dead are dropped before the rest are listed.
        let (alive, live) = observations.withLock { ($0.retired.dropDead(), $0.retired.map(\.type)) }
        return withExtendedLifetime(alive) { live.map(names.name).sorted() }
    }
}

extension [WeakReference] {
    /// Drops the references whose instance is gone; returns the others' instances, which reading took a
    /// strong reference to: the caller releases them after unlocking, as the last reference may be among them.
    mutating func dropDead() -> [AnyObject] {
        let alive = compactMap(\.object)  // Held while the dead are dropped: none of them dies in between.
        removeAll { $0.object == nil }
        return alive
    }
}

/// What the diagnostics ask of a container's state.
extension ContainerState {
    /// The keys that hold an instance (cached, or held weakly and still alive) whose build resolved `type`.
    /// Reading a weak reference takes a strong one, which may turn out to be the last: a live weak instance is
    /// appended to `keptAlive`, to be released after unlocking, so its `deinit` never runs under the lock.
    func holders(of type: AnyType?, keepingAliveIn keptAlive: inout [AnyObject]) -> [AnyType] {
        if let type, !dependedOn.contains(type) { return [] }
        return slots.entries.filter { key, slot in
            guard type.map(slot.dependencies.contains) ?? true else { return false }
            return slot.hasLiveInstance(keepingAliveIn: &keptAlive)
        }.map(\.key)
    }
}
