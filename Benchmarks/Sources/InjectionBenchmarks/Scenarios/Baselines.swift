import Foundation
import Synchronization

/// Hand-written registries that bound what a resolver can cost.
///
/// - (a) `[ObjectIdentifier: Any]` read under an `NSLock`, then `as!`: the classic registry.
/// - (b) a `Synchronization.Mutex` around `[ObjectIdentifier: AnyObject]` of typed boxes, read with
///   `unsafeDowncast`: no dynamic cast, one lock. The reference point.
/// - (c) the floor: a global `let`, no lookup at all.
enum Baselines {
    // MARK: - (a) NSLock + [ObjectIdentifier: Any] + as!

    final class AnyRegistry: @unchecked Sendable {
        private let lock = NSLock()
        private var storage: [ObjectIdentifier: Any] = [:]

        func register<T>(_ type: T.Type, _ value: T) {
            lock.withLock { storage[ObjectIdentifier(type)] = value }
        }

        @inline(__always)
        func resolve<T>(_ type: T.Type) -> T {
            let value = lock.withLock { storage[ObjectIdentifier(type)]! }
            return value as! T
        }
    }

    // MARK: - (b) Mutex + typed boxes + unsafeDowncast

    final class Box<T: Sendable>: Sendable {
        let value: T
        init(_ value: T) { self.value = value }
    }

    /// A cache of instances (scenarios 1, 3).
    final class BoxRegistry: Sendable {
        private let storage = Mutex<[ObjectIdentifier: AnyObject]>([:])

        func register<T: Sendable>(_ type: T.Type, _ value: T) {
            storage.withLock { $0[ObjectIdentifier(type)] = Box(value) }
        }

        @inline(__always)
        func resolve<T: Sendable>(_ type: T.Type) -> T {
            let key = ObjectIdentifier(type)
            return storage.withLock { unsafeDowncast($0[key].unsafelyUnwrapped, to: Box<T>.self) }.value
        }
    }

    final class FactoryBox<T: Sendable>: Sendable {
        let make: @Sendable () -> T
        init(_ make: @escaping @Sendable () -> T) { self.make = make }
    }

    /// A registry of factories (scenario 2): the box is read under the lock, the factory runs outside it
    /// (so it can resolve its own dependencies).
    final class FactoryRegistry: Sendable {
        private let storage = Mutex<[ObjectIdentifier: AnyObject]>([:])

        func register<T: Sendable>(_ type: T.Type, _ make: @escaping @Sendable () -> T) {
            storage.withLock { $0[ObjectIdentifier(type)] = FactoryBox(make) }
        }

        @inline(__always)
        func resolve<T: Sendable>(_ type: T.Type) -> T {
            let key = ObjectIdentifier(type)
            return storage.withLock { unsafeDowncast($0[key].unsafelyUnwrapped, to: FactoryBox<T>.self) }.make()
        }
    }

    static let anyRegistry = AnyRegistry()
    static let boxRegistry = BoxRegistry()
    static let factoryRegistry = FactoryRegistry()

    static func setUp() {
        anyRegistry.register((any Service).self, LiveService(value: 1))
        boxRegistry.register((any Service).self, LiveService(value: 1))
        factoryRegistry.register(GraphC.self) { GraphC() }
        factoryRegistry.register(GraphB.self) { GraphB(c: factoryRegistry.resolve(GraphC.self)) }
        factoryRegistry.register(GraphA.self) {
            GraphA(b: factoryRegistry.resolve(GraphB.self), c: factoryRegistry.resolve(GraphC.self))
        }
    }

    // MARK: - Cached resolve (scenarios 1, 3)

    @inline(never)
    static func resolveA() -> any Service {
        anyRegistry.resolve((any Service).self)
    }

    @inline(never)
    static func resolveB() -> any Service {
        boxRegistry.resolve((any Service).self)
    }

    /// (c): a global `let`, returned owned (+1) like every resolver's result, e.g. to be stored in a
    /// `let` property. Without `@_optimize(none)` the optimizer rewrites this function to return the
    /// reference borrowed ("owned to guaranteed") and the loop does no reference counting at all, which
    /// no resolver can do (its instance lives in a locked table); what remains here is the call, the
    /// once-check of the global, a retain in here and a release in the caller.
    @inline(never) @_optimize(none)
    static func resolveFloor() -> any Service {
        floorService
    }

    @inline(never)
    static func cachedLoopA(_ iterations: Int) -> Int {
        var checksum = 0
        for _ in 0..<iterations { checksum &+= resolveA().value }
        return checksum
    }

    @inline(never)
    static func cachedLoopB(_ iterations: Int) -> Int {
        var checksum = 0
        for _ in 0..<iterations { checksum &+= resolveB().value }
        return checksum
    }

    @inline(never)
    static func cachedLoopFloor(_ iterations: Int) -> Int {
        var checksum = 0
        for _ in 0..<iterations { checksum &+= resolveFloor().value }
        return checksum
    }

    // MARK: - Transient graph (scenario 2)

    @inline(never)
    static func resolveGraphB() -> GraphA {
        factoryRegistry.resolve(GraphA.self)
    }

    @inline(never)
    static func graphLoopB(_ iterations: Int) -> Int {
        var checksum = 0
        for _ in 0..<iterations { checksum &+= resolveGraphB().checksum }
        return checksum
    }

    @inline(never)
    static func graphLoopDirect(_ iterations: Int) -> Int {
        var checksum = 0
        for _ in 0..<iterations { checksum &+= makeGraphDirectly().checksum }
        return checksum
    }
}

/// The floor (c): a global `let` holding an ordinary heap object, like the instance a resolver caches.
///
/// Built through an opaque call on purpose: with a constant initializer the optimizer emits a statically
/// initialized, immortal object whose reference count is never written, so two threads would share nothing
/// and the floor would not pay the reference-count traffic every real cached instance pays.
let floorService: any Service = makeFloorService()

@inline(never)
private func makeFloorService() -> any Service {
    LiveService(value: 1)
}
