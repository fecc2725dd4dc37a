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
    public func verify() throws(InjectionError) { try verify(registeredLater: []) }

    /// Verifies the graph as ``verify()`` does, where the types in `later` are registered after launch, at login
    /// for example: a registration missing for one of them is not a problem.
    ///
    /// ```swift
    /// // At launch, in debug builds: UserSession is registered at login.
    /// try InjectionManager.verify(registeredLater: [UserSession.self])
    /// ```
    /// A factory that needs one of them stops there, as it would at launch: what it would resolve after it is
    /// not checked. Verify again once they are registered (after login) to check those too.
    public func verify(registeredLater later: [Any.Type]) throws(InjectionError) {
        // Inside a verification: a factory it runs, or a task or `bound` closure one started (a verification's
        // copy publishes its factories' binding in the task-local too). Starting another would build this factory
        // again, which would verify again, without end. Any other caller runs a verification of its own.
        if verification != nil || Binding.current?.container.verification != nil { return }
        let verification = Verification()
        let copy = InjectionContainer(copying: self, verification: verification)
        // In name order, so the chains reported (and a cycle's starting point) are the same every run.
        let registrations = copy.state.withLock { $0.registrations }
        let types = copy.state.withLock { state in
            registrations.filter { registration in
                // What runs anywhere, synchronously: not a builder, a main-actor or async factory, nor an
                // `implements` alias of one (which resolves it). An alias whose primary is gone runs, and fails.
                guard registration.kind == .plain, !registration.type.isBuilder else { return false }
                return registration.options.primary.flatMap { state[$0] }.map { $0.kind == .plain } ?? true
            }.map(\.type)
        }.map { (String(reflecting: $0.type), $0) }.sorted { $0.0 < $1.0 }.map(\.1)
        let laterNames = Set(later.map(copy.names.name(of:)))
        let problems = verification.run(types, of: registrations) { type in
            do throws(InjectionError) {
                _ = try copy.resolve(type, binding: nil, thread: .currentOrNew) { false }
                return nil
            } catch { return error }
        }.filter { $0.kind != .notRegistered || !laterNames.contains($0.typeName) } + copy.captiveDependencies()
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
        let captive = captiveDependencies().flatMap { zip($0.chain, $0.chain.dropFirst()) }
            .map(InjectionGraph.Edge.init)
        return InjectionGraph(
            registered: registered, edges: observations.withLock { $0.edges }, captive: Set(captive), names: names)
    }

    /// Every `.singleton` or `.weak` registration whose factory resolved a `.scoped` one, directly or through what
    /// keeps nothing of its own (a transient, an `implements` alias, a builder's closure), by the edges seen so far:
    /// one error per pair, with the shortest path.
    func captiveDependencies() -> [InjectionError] {
        let lifetimes = state.withLock { state in
            Dictionary(state.registrations.map { ($0.type, $0.type.isBuilder ? .transient : $0.lifetime) }) { $1 }
        }
        let edges = observations.withLock { $0.edges }
        return lifetimes.filter { $0.value == .singleton || $0.value == .weak }.keys.flatMap { holder in
            // Breadth first through what keeps nothing, so each scoped type is reached by its shortest path.
            var paths = [[holder]], seen: Set<AnyType> = [holder], found: [InjectionError] = []
            while !paths.isEmpty {
                let path = paths.removeFirst()
                for next in edges[path[path.count - 1]] ?? [] where seen.insert(next).inserted {
                    if lifetimes[next] == .transient { paths.append(path + [next]) }
                    guard lifetimes[next] == .scoped else { continue }
                    found.append(.captiveDependency(path + [next], lifetime: lifetimes[holder]!, names: names))
                }
            }
            return found
        }.sorted { ($0.typeName, $0.chain.joined()) < ($1.typeName, $1.chain.joined()) }
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
        let builtWithIt = observations.withLock { $0.dependencies.filter { $0.value.contains(type) }.map(\.key) }
        guard !builtWithIt.isEmpty else { return }
        let (cached, lifetime) = state.withLock { state in  // Those that hold an instance, and their lifetimes.
            (builtWithIt.filter { state.slots[$0]?.hasLiveInstance(keepingAliveIn: &keptAlive) == true }
                .map { ($0, state[$0]?.lifetime) }, state[type]?.lifetime)
        }
        guard !cached.isEmpty, observations.withLock({ $0.reportedStale.insert(type).inserted }) else { return }
        let name = names.name(type)
        // What rebuilds each holder: a reset for a scoped one; for a singleton, only registering it again.
        let lists = [.scoped, .singleton, .weak].map { kept in cached.filter { $0.1 == kept }.map { names.name($0.0) }.sorted() }
        let (scoped, singletons, weak) = (lists[0], lists[1], lists[2])
        // A builder's registration takes the model: `register(B.self) { builder in ... }`; the line keeps the lifetime.
        let (held, closure) = type.isBuilder
            ? ("what the old one built", "{ builder in ... }") : ("the old one", "{ ... }")
        let keeps = lifetime.map { $0 == .scoped || type.isBuilder ? "" : ", lifetime: .\($0)" } ?? ""
        let one = { (list: [String], single: String, plural: String) in list.count == 1 ? single : plural }
        var advice = scoped.isEmpty ? [] : ["""
            \(singletons.isEmpty && weak.isEmpty ? "They keep" : scoped.joined(separator: ", ")
                + one(scoped, " keeps", " keep")) it until the next \
            reset. Register it inside a reset, so they are rebuilt too: resetCurrentContainer { \
            register(\(TypeNames.literal(type.type, named: name)).self\(keeps)) \(closure) }
            """]
        if !singletons.isEmpty {
            let list = singletons.joined(separator: ", ")
            advice.append("A reset does not rebuild a singleton: \(list) \(one(singletons, "keeps", "keep")) it until "
                + "registered again. Register \(list) again too, or make \(one(singletons, "it", "them")) .scoped.")
        }
        if !weak.isEmpty {
            let them = one(weak, "it", "them")
            advice.append("\(weak.joined(separator: ", ")) (.weak) \(one(weak, "keeps", "keep")) it until nothing holds "
                + "\(them); the next resolve then builds \(them) with the new one.")
        }
        let all = cached.map { names.name($0.0) }.sorted().joined(separator: ", ")
        report("Injection: \(name) was registered again while cached instances still hold \(held): \(all). "
            + advice.joined(separator: " "))
    }

    /// How many test containers are alive.
    private static let testContainers = LockedState(0)

    /// Counts a test's container made (`change` 1) or gone (-1); a strict one also in the count every resolve
    /// bound to no container reads (``isSharedDuringStrictTests``).
    static func countTestContainer(_ change: Int, isStrict: Bool) {
        testContainers.withLock { $0 += change }
        if isStrict { _injection_count_add(Int32(_INJECTION_STRICT_TESTS), change) }
    }

    /// Whether a test's container is alive: code bound to none that finds nothing in the process-wide
    /// container is then probably work a test sent elsewhere.
    static var testContainersAlive: Bool { testContainers.withLock { $0 > 0 } }

    /// The types reported as resolved by code bound to no container while strict tests ran: once each.
    private static let reportedEscapes = LockedState(Set<AnyType>())

    /// Reports, once per type for the process, that code bound to no container resolves `type` from the
    /// process-wide container while a strict test runs: probably work a test sent to a queue or a thread.
    func reportEscape(of type: AnyType) {
        guard Self.reportedEscapes.withLock({ $0.insert(type).inserted }) else { return }
        InjectionManager.diagnosticsHandler("""
            Injection: \(names.name(type)) was requested from the process-wide container by code bound to no container while \
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
    func forgetObservations() {
        observations.withLock { ($0.edges, $0.dependencies, $0.reportedStale) = ([:], [:], []) }
    }

    /// Forgets every "`key` needs B" edge of the graph: `key`'s registration was replaced or removed.
    @inline(never) func forgetEdges(from key: AnyType) { observations.withLock { $0.edges[key] = nil } }

    /// Records that the factory running in `frame`, of another task's resolution, resolves `requested`, as an
    /// edge of the graph: the frame's own resolution records in the frame (``Frame/record(_:)``).
    func record(_ requested: AnyType, by frame: Frame) {
        guard frame.recordsEdges else { return }
        observations.withLock { _ = $0.edges[frame.type, default: []].insert(requested) }
    }

    /// Takes what `frame` recorded while its factory ran: its edges, if it recorded them (also when the factory
    /// failed: what it needed, missing or not), and, if its instance was `stored`, what its build resolved (for
    /// the re-registration report). One lock hold per build, none for a build that records neither.
    func noteBuilt(_ frame: Frame, stored: Bool) {
        let dependencies = stored && frame.keepsInstance ? frame.collected : nil
        guard frame.recordsEdges || dependencies != nil else { return }
        observations.withLock { observations in
            if frame.recordsEdges { observations.edges[frame.type, default: []].formUnion(frame.resolved) }
            if let dependencies { observations.dependencies[frame.type] = dependencies }
        }
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
    /// What a `notRegistered` message for `key` tells of what was registered: the keys registered for its type
    /// (their `Value`), for a type, and what ``removed`` remembers of `key`. Only on that failure path: a pass
    /// over the table's keys, the words only. (Among 32,768 registrations, a failed resolve took 46 ms in a
    /// debug build with a copy of every slot; 18 ms with the keys, 0.4 ms in release.)
    func registered(around key: AnyType) -> (keys: [AnyType], removed: (file: StaticString, byRemoveAll: Bool)?) {
        // Compared as identities: `==` on metatypes takes `any ~Copyable.Type`, whose metadata needs the Swift
        // 5.7 runtime (iOS 16, macOS 13).
        func value<Key: InjectionKey>(of _: Key.Type) -> ObjectIdentifier { ObjectIdentifier(Key.Value.self) }
        let type = ObjectIdentifier(key.type)
        let keys = key.isKey || key.isBuilder ? [] : slots.keys.filter { candidate in
            candidate.isKey && (candidate.type as? any InjectionKey.Type).map { value(of: $0) } == type
        }
        return (keys, removed[key])
    }
}
