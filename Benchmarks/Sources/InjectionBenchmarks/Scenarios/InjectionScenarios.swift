import Injection

/// The library under test, used only through its public API, as an app would.
enum InjectionScenarios {
    /// Bound with `withContainer` in scenario 4; same registration as the process-wide one.
    static let isolatedContainer = InjectionContainer()

    /// Registers every scenario's types in the process-wide container (the same set Swinject gets).
    static func setUp() {
        InjectionManager.register((any Service).self) { LiveService(value: 1) }  // .scoped

        InjectionManager.register(GraphC.self, lifetime: .transient) { GraphC() }
        InjectionManager.register(GraphB.self, lifetime: .transient) { GraphB(c: Inject()) }
        InjectionManager.register(GraphA.self, lifetime: .transient) { GraphA(b: Inject(), c: Inject()) }

        InjectionManager.register((any SessionService1).self) { LiveSession1() }
        InjectionManager.register((any SessionService2).self) { LiveSession2() }
        InjectionManager.register((any SessionService3).self) { LiveSession3() }
        InjectionManager.register((any SessionService4).self) { LiveSession4() }
        InjectionManager.register((any SessionService5).self) { LiveSession5() }

        isolatedContainer.register((any Service).self) { LiveService(value: 1) }

        // `.scoped`: a nested resolve inside a `.scoped` or `.singleton` factory is where a second lock,
        // taken to record a graph edge, would show (issue 39); a `.transient` factory's would hide it.
        InjectionManager.register(InFactoryLoop.self, lifetime: .scoped) {
            InFactoryLoop(checksum: cachedLoop(pendingIterations))
        }
    }

    // MARK: - 1, 3. Cached resolve of a protocol-typed service

    @inline(never)
    static func resolveService() -> any Service {
        Inject()
    }

    @inline(never)
    static func cachedLoop(_ iterations: Int) -> Int {
        var checksum = 0
        for _ in 0..<iterations {
            checksum &+= resolveService().value
        }
        return checksum
    }

    // MARK: - 2. Transient 3-level graph

    @inline(never)
    static func resolveGraph() -> GraphA {
        Inject()
    }

    @inline(never)
    static func graphLoop(_ iterations: Int) -> Int {
        var checksum = 0
        for _ in 0..<iterations {
            checksum &+= resolveGraph().checksum
        }
        return checksum
    }

    // MARK: - 4. Cached resolve inside an isolated container

    /// The same loop as ``cachedLoop(_:)``, with ``isolatedContainer`` bound to the task.
    @inline(never)
    static func isolatedLoop(_ iterations: Int) -> Int {
        InjectionManager.withContainer(isolatedContainer) {
            cachedLoop(iterations)
        }
    }

    /// The result of running ``cachedLoop(_:)`` inside a factory (informational row, no floor).
    struct InFactoryLoop { let checksum: Int }
    /// How many resolves the next ``InFactoryLoop`` factory run makes (set right before it runs).
    nonisolated(unsafe) static var pendingIterations = 0

    /// The same loop as ``cachedLoop(_:)``, run by a `.scoped` factory, so every resolve is nested in a
    /// build. The reset first makes the factory run again (and rebuilds ``Service`` once, in the loop's
    /// first resolve): both are once per run of millions of resolves.
    @inline(never)
    static func inFactoryLoop(_ iterations: Int) -> Int {
        pendingIterations = iterations
        InjectionManager.resetCurrentContainer()
        return Inject(InFactoryLoop.self).checksum
    }

    // MARK: - 5, 7. Login/logout: resolve 5 scoped services, then reset

    @inline(never)
    static func loginLogoutLoop(_ iterations: Int) -> Int {
        var checksum = 0
        for _ in 0..<iterations {
            checksum &+= (Inject() as any SessionService1).value
            checksum &+= (Inject() as any SessionService2).value
            checksum &+= (Inject() as any SessionService3).value
            checksum &+= (Inject() as any SessionService4).value
            checksum &+= (Inject() as any SessionService5).value
            InjectionManager.resetCurrentContainer()
        }
        return checksum
    }

    // MARK: - 6. 10,000 types

    /// Registers every type of `types` (as `.scoped`) in `container`.
    @inline(never)
    static func register(_ types: [any Tag.Type], in container: InjectionContainer) {
        func register<T: Tag>(_: T.Type) {
            container.register(T.self) { T() }
        }
        for type in types { register(type) }
    }

    /// Resolves `type` from `container` `iterations` times.
    @inline(never)
    static func resolveLoop(_ type: any Tag.Type, in container: InjectionContainer, iterations: Int) -> Int {
        func loop<T: Tag>(_: T.Type) -> Int {
            var checksum = 0
            for _ in 0..<iterations {
                let value = try! container.resolve(T.self)
                checksum &+= MemoryLayout.size(ofValue: value) &+ 1
            }
            return checksum
        }
        return loop(type)
    }

    // MARK: - verify() over all 10,000 registrations (the VERIFY SPOT of issue 7)

    /// Runs `container.verify()` `iterations` times; returns how many problems it reported in total
    /// (0 for a sound graph). `verify()` resolves every registration once, in a throwaway copy.
    @inline(never)
    static func verifyLoop(_ container: InjectionContainer, iterations: Int) -> Int {
        var problems = 0
        for _ in 0..<iterations {
            do {
                try container.verify()
            } catch {
                problems &+= max(1, error.problems.count)
            }
        }
        return problems
    }
}
