import Foundation
@_spi(Testing) import Injection
import Testing

// A thread's cache keeps a table per container (ThreadState.swift): hundreds of keys and containers, address
// reuse, thread exit, releases that run user code, and containers replaced while other threads resolve.

/// Types made at runtime, one per number: `RKey(n)`, so a test can use hundreds of distinct keys.
private protocol Makeable: AnyObject, Sendable { init() }
private final class R0: Makeable { init() {} }
private final class RZ<T>: Makeable, @unchecked Sendable { init() {} }
private final class RO<T>: Makeable, @unchecked Sendable { init() {} }

private func wrap<T: Makeable>(_: T.Type, odd: Bool) -> any Makeable.Type { odd ? RO<T>.self : RZ<T>.self }
/// A distinct class per `n` (its binary digits, as nested generics).
private func RKey(_ n: Int) -> any Makeable.Type { n == 0 ? R0.self : wrap(RKey(n / 2), odd: n % 2 == 1) }

private func register<T: Makeable>(_: T.Type, in container: InjectionContainer, lifetime: InjectionLifetime) {
    container.register(T.self, lifetime: lifetime) { T() }
}
private func resolve<T: Makeable>(_: T.Type, in container: InjectionContainer) throws -> AnyObject {
    try container.resolve(T.self)
}
private func unregister<T: Makeable>(_: T.Type, in container: InjectionContainer) { container.unregister(T.self) }

private final class Wrapper: Sendable {}
private final class Owner: Sendable {
    let container: InjectionContainer
    init(_ container: InjectionContainer) { self.container = container }
}

/// Whether freed memory comes back at once, as malloc gives it: AddressSanitizer quarantines freed memory, so
/// under it no test can provoke address reuse (and the reuse tests check only that nothing stale is seen).
private func allocatorReusesAddresses() -> Bool {
    var seen: Set<ObjectIdentifier> = []
    for _ in 0..<64 {
        let container = InjectionContainer()  // Freed at the end of each iteration.
        if !seen.insert(ObjectIdentifier(container)).inserted { return true }
    }
    return false
}

@Suite("Thread cache tables")
struct ThreadCacheTableTests {
    /// Random register / unregister / resolve / reset on one container with many keys, checked after every
    /// step against a model, for every key: table growth and backward-shift deletion.
    @Test("a thread's table agrees with a model through random changes of hundreds of keys")
    func randomizedModel() throws {
        enum Expect: Equatable { case unregistered, empty, instance, factory, unknownTransient }
        let keyCount = 300
        let keys = (0..<keyCount).map(RKey)
        var checks = 0, maxCached = 0
        defer { print("randomizedModel: \(checks) steps checked, at most \(maxCached) entries") }
        for seed in 1...4 as ClosedRange<UInt64> {
            var random = SeededRandom(seed: seed)
            let container = InjectionContainer()
            var model = [Expect](repeating: .unregistered, count: keyCount)
            var isTransient = [Bool](repeating: false, count: keyCount)
            var instances = [ObjectIdentifier?](repeating: nil, count: keyCount)
            for step in 0..<2500 {
                let k = Int.random(in: 0..<keyCount, using: &random)
                switch Int.random(in: 0..<1000, using: &random) {
                case 0..<300:
                    let transient = Bool.random(using: &random)
                    register(keys[k], in: container, lifetime: transient ? .transient : .scoped)
                    isTransient[k] = transient
                    model[k] = .empty
                    instances[k] = nil
                case 300..<400:
                    unregister(keys[k], in: container)
                    model[k] = .unregistered
                    instances[k] = nil
                case 400..<998:
                    guard model[k] != .unregistered else { continue }
                    // Twice: a transient enters the cache once its edges are known (after its first run).
                    let first = try resolve(keys[k], in: container)
                    let second = try resolve(keys[k], in: container)
                    if isTransient[k] {
                        #expect(ObjectIdentifier(first) != ObjectIdentifier(second))
                        model[k] = .factory
                    } else {
                        #expect(ObjectIdentifier(first) == ObjectIdentifier(second))
                        if let old = instances[k] { #expect(old == ObjectIdentifier(first), "seed \(seed) step \(step)") }
                        instances[k] = ObjectIdentifier(first)
                        model[k] = .instance
                    }
                default:
                    container.resetCurrentContainer()
                    for i in 0..<keyCount where model[i] == .instance || model[i] == .factory {
                        if isTransient[i] { model[i] = .unknownTransient } else { model[i] = .empty; instances[i] = nil }
                    }
                }
                checks += 1
                maxCached = max(maxCached, model.filter { $0 == .instance || $0 == .factory }.count)
                for i in 0..<keyCount {
                    let entry = InjectionProbe.threadCacheEntry(for: keys[i], in: container)
                    let ok: Bool
                    if model[i] == .unregistered || model[i] == .empty { ok = entry == InjectionProbe.ThreadCacheEntry.none }
                    else if model[i] == .instance { ok = entry == .instance }
                    else if model[i] == .factory { ok = entry == .factory }
                    else { ok = entry != .instance }
                    if !ok {
                        Issue.record("seed \(seed) step \(step): key \(i) is \(entry), model says \(model[i])")
                        return
                    }
                }
            }
        }
    }

    /// Hundreds of containers alive on one thread, each with a table: lookups find the right one, resolves
    /// hit the cache, and containers released in random order leave nothing for containers made after them
    /// (which malloc often puts at a freed one's address).
    @Test("hundreds of containers on one thread: right entries, cache hits, no stale entries at reused addresses")
    func manyContainers() throws {
        var random = SeededRandom(seed: 42)
        var containers: [InjectionContainer] = []
        var made: [ObjectIdentifier: ObjectIdentifier] = [:]  // container → its instance
        for _ in 0..<400 {
            let container = InjectionContainer()
            container.register(Wrapper.self, lifetime: .scoped) { Wrapper() }
            container.register(R0.self, lifetime: .transient) { R0() }
            #expect(InjectionProbe.threadCacheEntry(for: Wrapper.self, in: container) == .none)
            made[ObjectIdentifier(container)] = ObjectIdentifier(try container.resolve(Wrapper.self))
            for _ in 0..<2 { _ = try container.resolve(R0.self) }
            containers.append(container)
        }
        var seenReuse = 0
        for round in 0..<6 {
            for container in containers {
                #expect(InjectionProbe.threadCacheEntry(for: Wrapper.self, in: container) == .instance)
                #expect(InjectionProbe.threadCacheEntry(for: R0.self, in: container) == .factory)
                #expect(ObjectIdentifier(try container.resolve(Wrapper.self)) == made[ObjectIdentifier(container)])
            }
            containers.shuffle(using: &random)
            let released = Set(containers.suffix(150).map(ObjectIdentifier.init))
            containers.removeLast(150)
            for id in released { made[id] = nil }
            for _ in 0..<150 {
                let container = InjectionContainer()
                if released.contains(ObjectIdentifier(container)) { seenReuse += 1 }
                container.register(Wrapper.self, lifetime: .scoped) { Wrapper() }
                container.register(R0.self, lifetime: .transient) { R0() }
                #expect(InjectionProbe.threadCacheEntry(for: Wrapper.self, in: container) == .none, "round \(round)")
                #expect(InjectionProbe.threadCacheEntry(for: R0.self, in: container) == .none, "round \(round)")
                made[ObjectIdentifier(container)] = ObjectIdentifier(try container.resolve(Wrapper.self))
                for _ in 0..<2 { _ = try container.resolve(R0.self) }
                containers.append(container)
            }
        }
        #expect(seenReuse > 0 || !allocatorReusesAddresses(), "no address was reused: the test did not exercise reuse")
        print("manyContainers: \(seenReuse) reused")
    }

    /// A container that only resolved (on another thread) and was released there; a container made at its
    /// address on this thread. Also copies (`InjectionContainer(copying:)`) and a container that never
    /// registered anything.
    @Test("a container at a freed container's address sees none of its entries: plain, copies, from another thread")
    func addressReuse() throws {
        for kind in 0..<3 {
            var freed: Set<ObjectIdentifier> = []
            for _ in 0..<50 {
                let base = InjectionContainer()
                base.register(Wrapper.self, lifetime: .scoped) { Wrapper() }
                let container = kind == 1 ? InjectionContainer(copying: base) : base
                _ = try container.resolve(Wrapper.self)
                #expect(InjectionProbe.threadCacheEntry(for: Wrapper.self, in: container) == .instance)
                if kind == 2 {
                    // Also cached on another thread, which releases the last reference.
                    let box = Owner(container)
                    let done = Gate()
                    onThread { [box] in
                        _ = try? box.container.resolve(Wrapper.self)
                        done.open()
                    }
                    #expect(done.wait())
                }
                freed.insert(ObjectIdentifier(container))
            }
            var reused = 0
            var keep: [InjectionContainer] = []
            for _ in 0..<300 {
                let fresh = InjectionContainer()
                keep.append(fresh)
                if freed.contains(ObjectIdentifier(fresh)) {
                    reused += 1
                    #expect(InjectionProbe.threadCacheEntry(for: Wrapper.self, in: fresh) == .none)
                    fresh.register(Wrapper.self, lifetime: .scoped) { Wrapper() }
                    #expect(InjectionProbe.threadCacheEntry(for: Wrapper.self, in: fresh) == .none)
                }
            }
            #expect(reused > 0 || !allocatorReusesAddresses(), "kind \(kind): no reuse seen")
            print("addressReuse kind \(kind): \(reused) reused")
        }
    }

    /// Releasing what a thread's cache held drops the last reference to an object that owns another
    /// container with entries in the same thread's cache: that container's deinit takes the locks again.
    @Test("an evicted transient's registration that owns a container with thread-cache entries releases it without deadlock")
    func evictionReleasesContainerOwner() throws {
        for path in 0..<3 {
            let outer = InjectionContainer()
            weak var weakInner: InjectionContainer?
            do {
                let inner = InjectionContainer()
                inner.register(Wrapper.self, lifetime: .scoped) { Wrapper() }
                _ = try inner.resolve(Wrapper.self)
                weakInner = inner
                let owner = Owner(inner)
                outer.register(R0.self, lifetime: .transient) { _ = owner; return R0() }
            }
            for _ in 0..<3 { _ = try outer.resolve(R0.self) }
            #expect(InjectionProbe.threadCacheEntry(for: R0.self, in: outer) == .factory)
            switch path {
            case 0: outer.unregister(R0.self)
            case 1: outer.register(R0.self, lifetime: .transient) { R0() }
            default:
                // While this thread runs a cached transient (pinned): released by the unpin.
                outer.register(Wrapper.self, lifetime: .transient) { [unowned outer] in  // Not a cycle through its own container.
                    outer.unregister(R0.self)
                    return Wrapper()
                }
                for _ in 0..<3 { _ = try outer.resolve(Wrapper.self) }
            }
            #expect(weakInner == nil, "path \(path)")
        }
    }

    /// A thread exits while its tables hold a container's instance and transient registration: its
    /// state's deinit releases them (untagging the transient's pointer), so they go with the container.
    @Test("a thread's exit releases the tagged objects its tables hold")
    func threadExitReleasesTables() throws {
        weak var weakRegistration: AnyObject?
        weak var weakInstance: Wrapper?
        do {
            let container = InjectionContainer()
            container.register(R0.self, lifetime: .transient) { R0() }
            container.register(Wrapper.self, lifetime: .scoped) { Wrapper() }
            weakRegistration = InjectionProbe.registration(for: R0.self, in: container)
            let exited = Counter()
            let box = Owner(container)
            onThread { [box] in
                for _ in 0..<3 { _ = try? box.container.resolve(R0.self) }
                _ = try? box.container.resolve(Wrapper.self)
                #expect(InjectionProbe.threadCacheEntry(for: R0.self, in: box.container) == .factory)
                exited.increment()
            }
            #expect(exited.wait(atLeast: 1))
            weakInstance = try container.resolve(Wrapper.self)
            // Only the worker cached R0: once no live thread does, the worker's state was released while the
            // container still registers R0, so its table's entries can go only through the state's deinit.
            #expect(waitUntil { InjectionProbe.threadsCaching(R0.self, in: container) == 0 })
        }
        // The container goes once the worker's closure does (it holds `box`), whenever the thread ends, and its
        // deinit no longer sees the worker's state: only that state's deinit could have released the entries.
        #expect(waitUntil { weakRegistration == nil && weakInstance == nil })
    }
}

private final class Serial: Sendable {
    let value: Int
    init(_ value: Int) { self.value = value }
}
private final class Slot: @unchecked Sendable {
    private let lock = NSLock()
    private var containers: [(Int, InjectionContainer)] = []
    func put(_ serial: Int, _ container: InjectionContainer, at index: Int) {
        lock.withLock {
            if containers.count <= index { containers.append((serial, container)) } else { containers[index] = (serial, container) }
        }
    }
    func get(_ index: Int) -> (Int, InjectionContainer)? { lock.withLock { containers.isEmpty ? nil : containers[index % containers.count] } }
}

extension ThreadCacheTableTests {
    /// Threads resolve from containers that another thread keeps replacing (the last reference often
    /// dropped by a resolving thread); new containers often land at freed addresses. Each container's
    /// instances name its serial: a resolve that returns another serial read a stale table.
    @Test("containers freed and remade at the same addresses while other threads resolve from them")
    func concurrentForget() {
        let slots = Slot()
        for index in 0..<8 {
            let container = InjectionContainer()
            container.register(Serial.self, lifetime: .scoped) { Serial(index) }
            container.register(R0.self, lifetime: .transient) { R0() }
            slots.put(index, container, at: index)
        }
        let stale = Counter(), done = Counter(), resolves = Counter()
        runOnThreads(3) { thread in
            if thread == 0 {
                for serial in 8..<3000 {
                    let container = InjectionContainer()
                    container.register(Serial.self, lifetime: .scoped) { Serial(serial) }
                    container.register(R0.self, lifetime: .transient) { R0() }
                    slots.put(serial, container, at: serial % 8)
                }
                done.increment()
            } else {
                var i = thread
                while done.value == 0 {
                    i &+= 7
                    guard let (serial, container) = slots.get(i) else { continue }
                    if (try? container.resolve(Serial.self))?.value != serial { stale.increment() }
                    resolves.increment()
                    _ = try? container.resolve(R0.self)
                }
            }
        }
        #expect(stale.value == 0)
        print("concurrentForget: \(resolves.value) resolves")
    }
}
