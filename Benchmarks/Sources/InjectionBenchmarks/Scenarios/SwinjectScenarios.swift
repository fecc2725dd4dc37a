import Swinject

/// Swinject 2.10.0, used as its README recommends for multi-threaded apps: registrations on a
/// `Container`, resolution through `container.synchronize()`; cached services in `.container` scope.
enum SwinjectScenarios {
    /// The container with the same registrations as Injection's process-wide one.
    /// Swinject's `Container` is not `Sendable`; the synchronized resolver is its thread-safe face.
    nonisolated(unsafe) static let container = Container()
    nonisolated(unsafe) static let resolver: any Resolver = {
        let container = SwinjectScenarios.container
        container.register((any Service).self) { _ in LiveService(value: 1) }.inObjectScope(.container)

        container.register(GraphC.self) { _ in GraphC() }.inObjectScope(.transient)
        container.register(GraphB.self) { r in GraphB(c: r.resolve(GraphC.self)!) }.inObjectScope(.transient)
        container.register(GraphA.self) { r in
            GraphA(b: r.resolve(GraphB.self)!, c: r.resolve(GraphC.self)!)
        }.inObjectScope(.transient)

        container.register((any SessionService1).self) { _ in LiveSession1() }.inObjectScope(.container)
        container.register((any SessionService2).self) { _ in LiveSession2() }.inObjectScope(.container)
        container.register((any SessionService3).self) { _ in LiveSession3() }.inObjectScope(.container)
        container.register((any SessionService4).self) { _ in LiveSession4() }.inObjectScope(.container)
        container.register((any SessionService5).self) { _ in LiveSession5() }.inObjectScope(.container)
        return container.synchronize()
    }()

    static func setUp() {
        _ = resolver
    }

    // MARK: - 1, 3. Cached resolve of a protocol-typed service

    @inline(never)
    static func resolveService() -> any Service {
        resolver.resolve((any Service).self)!
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
        resolver.resolve(GraphA.self)!
    }

    @inline(never)
    static func graphLoop(_ iterations: Int) -> Int {
        var checksum = 0
        for _ in 0..<iterations {
            checksum &+= resolveGraph().checksum
        }
        return checksum
    }

    // MARK: - 5, 7. Login/logout: resolve 5 `.container`-scoped services, then `resetObjectScope`

    @inline(never)
    static func loginLogoutLoop(_ iterations: Int) -> Int {
        var checksum = 0
        for _ in 0..<iterations {
            checksum &+= resolver.resolve((any SessionService1).self)!.value
            checksum &+= resolver.resolve((any SessionService2).self)!.value
            checksum &+= resolver.resolve((any SessionService3).self)!.value
            checksum &+= resolver.resolve((any SessionService4).self)!.value
            checksum &+= resolver.resolve((any SessionService5).self)!.value
            container.resetObjectScope(.container)
        }
        return checksum
    }

    // MARK: - 6. 10,000 types

    /// Registers every type of `types` in `.container` scope (cached, like Injection's `.scoped`).
    @inline(never)
    static func register(_ types: [any Tag.Type], in container: Container) {
        func register<T: Tag>(_: T.Type) {
            container.register(T.self) { _ in T() }.inObjectScope(.container)
        }
        for type in types { register(type) }
    }

    @inline(never)
    static func resolveLoop(_ type: any Tag.Type, in resolver: any Resolver, iterations: Int) -> Int {
        func loop<T: Tag>(_: T.Type) -> Int {
            var checksum = 0
            for _ in 0..<iterations {
                let value = resolver.resolve(T.self)!
                checksum &+= MemoryLayout.size(ofValue: value) &+ 1
            }
            return checksum
        }
        return loop(type)
    }
}
