import Foundation
@_spi(Testing) import InjectionTesting
import Testing

// A released container frees what it held (its instances, and its registrations with what their factories
// captured), and a container made later, often at the freed one's address, sees none of it: on the releasing
// thread, on other threads, inside a factory that is running, and however many containers a thread has
// resolved from.

private final class Wrapper: Sendable {}
private final class R0: Sendable {}
/// Owned by a container only (a factory that never runs captures it): its deinit says that the container's
/// deinit ran, and where: `deinits` goes up on the thread that ran it.
private final class DeinitMark: Sendable {
    let deinits: Counter
    init(_ deinits: Counter) { self.deinits = deinits }
    deinit { deinits.increment() }
}
private final class Blocker: Sendable { init() {} }
private final class OtherTransient: Sendable {
    let token: CountedToken
    init(token: CountedToken) { self.token = token }
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

/// One long-lived thread that runs jobs, one at a time: a block it frees stays in its own malloc cache, so its
/// next allocation of that size gets the same address back (glibc's per-thread cache is last in, first out).
/// A new thread per job keeps the block in its cache until it exits, and whether another thread gets it back
/// after that is up to the allocator (a test that waited for it on the test thread once saw no reuse at all).
private final class Worker: @unchecked Sendable {  // `jobs` and `isStopped`: under `condition`.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var isStopped = false

    init() { onThread { [self] in while let job = next() { job() } } }

    private func next() -> (@Sendable () -> Void)? {
        condition.lock(); defer { condition.unlock() }
        while jobs.isEmpty && !isStopped { condition.wait() }
        return jobs.isEmpty ? nil : jobs.removeFirst()
    }

    /// Runs `job` on the worker's thread and returns once it is done (its locals released); `false` if
    /// `waitLimit` passed first.
    func run(_ job: @escaping @Sendable () -> Void) -> Bool {
        let done = Gate()
        condition.withLock {
            jobs.append { job(); done.open() }
            condition.signal()
        }
        return done.wait()
    }

    /// Lets the thread exit once its jobs are done.
    func stop() {
        condition.withLock {
            isStopped = true
            condition.signal()
        }
    }
}

/// What `fresh`, a container just made, shows of an older container: a registration of `Wrapper`, or (if
/// `registering`: it registers `Wrapper` on it) an instance its first resolve after registering did not build.
/// Empty if nothing.
private func showsNothingOld(_ fresh: InjectionContainer, registering: Bool = true) -> [String] {
    var seen: [String] = []
    if fresh.isRegistered(Wrapper.self) { seen.append("a registration") }
    if (try? fresh.resolve(Wrapper.self)) != nil { seen.append("an instance before registering") }
    guard registering else { return seen }
    let runs = Counter()
    fresh.register(Wrapper.self, lifetime: .scoped) { runs.increment(); return Wrapper() }
    if (try? fresh.resolve(Wrapper.self)) == nil || runs.value != 1 { seen.append("an instance it did not build") }
    return seen
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

@Suite("A released container: what it held freed, nothing stale at its address")
struct ContainerReleaseTests {
    /// Hundreds of containers alive on one thread: each resolves its own instance, again and again, and
    /// containers released in random order leave nothing for containers made after them (which malloc often
    /// puts at a freed one's address): a new container has no registration until it registers one, and its
    /// first resolve runs its own factory.
    @Test("hundreds of containers on one thread: right instances, no stale registrations or instances at reused addresses")
    func manyContainers() throws {
        var random = SeededRandom(seed: 42)
        var containers: [InjectionContainer] = []
        var made: [ObjectIdentifier: ObjectIdentifier] = [:]  // container → its instance
        var problems: [String] = []
        func add(round: Int) throws {
            let container = InjectionContainer()
            if container.isRegistered(Wrapper.self) || container.isRegistered(R0.self) { problems.append("round \(round): registered") }
            if (try? container.resolve(Wrapper.self)) != nil { problems.append("round \(round): resolved before registering") }
            let runs = Counter()
            container.register(Wrapper.self, lifetime: .scoped) { runs.increment(); return Wrapper() }
            container.register(R0.self, lifetime: .transient) { R0() }
            let first = try container.resolve(Wrapper.self)
            if runs.value != 1 { problems.append("round \(round): the first resolve did not run the new factory") }
            made[ObjectIdentifier(container)] = ObjectIdentifier(first)
            if try container.resolve(Wrapper.self) !== first { problems.append("round \(round): not cached") }
            if try container.resolve(R0.self) === (try container.resolve(R0.self)) { problems.append("round \(round): a transient cached") }
            containers.append(container)
        }
        for _ in 0..<400 { try add(round: -1) }
        var seenReuse = 0
        for round in 0..<6 {
            for container in containers {
                #expect(ObjectIdentifier(try container.resolve(Wrapper.self)) == made[ObjectIdentifier(container)])
            }
            containers.shuffle(using: &random)
            let released = Set(containers.suffix(150).map(ObjectIdentifier.init))
            containers.removeLast(150)
            for id in released { made[id] = nil }
            for _ in 0..<150 {
                try add(round: round)
                if released.contains(ObjectIdentifier(containers.last!)) { seenReuse += 1 }
            }
        }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        #expect(seenReuse > 0 || !allocatorReusesAddresses(), "no address was reused: the test did not exercise reuse")
        print("manyContainers: \(seenReuse) reused")
    }

    /// A container this thread resolved from, released here (plain, and a copy made with
    /// `InjectionContainer(copying:)`) or on another thread that resolved from it too: a container made later at
    /// its address shows neither thread any of its registrations or instances.
    @Test("a container at a freed container's address sees none of its registrations or instances: plain, copies, from another thread")
    func addressReuse() throws {
        for kind in 0..<2 {
            var freed: Set<ObjectIdentifier> = []
            for _ in 0..<50 {
                let base = InjectionContainer()
                base.register(Wrapper.self, lifetime: .scoped) { Wrapper() }
                let container = kind == 1 ? InjectionContainer(copying: base) : base
                let instance = try container.resolve(Wrapper.self)
                #expect(try container.resolve(Wrapper.self) === instance)
                freed.insert(ObjectIdentifier(container))
            }
            var reused = 0
            var keep: [InjectionContainer] = []
            // Until a few land at freed addresses: malloc hands out other free blocks of that size first, so
            // how many allocations that takes varies from run to run.
            var made = 0
            while reused < 3 && made < 5_000 {  // (`for … where` would go on making containers after the third.)
                made += 1
                let fresh = InjectionContainer()
                keep.append(fresh)
                if freed.contains(ObjectIdentifier(fresh)) {
                    reused += 1
                    let seen = showsNothingOld(fresh)
                    #expect(seen.isEmpty, "kind \(kind): \(seen)")
                }
            }
            #expect(reused > 0 || !allocatorReusesAddresses(), "kind \(kind): no reuse seen")
            print("addressReuse kind \(kind): \(reused) reused")
        }
        try addressReuseAfterAnotherThreadReleased()
    }

    /// Kind 2 of `addressReuse`: this thread and a worker thread resolve from a container, the worker drops
    /// the last reference (checked to be the last, and to run the deinit there) and, right after, makes new
    /// containers, one at the freed address (see `Worker`); this thread, and the worker, see none of the old
    /// container's registrations or instances there.
    private func addressReuseAfterAnotherThreadReleased() throws {
        let worker = Worker()
        defer { worker.stop() }
        let deinits = Counter()
        var reused = 0
        for iteration in 0..<50 {
            let slot = ContainerSlot(nil)
            do {
                let container = InjectionContainer()
                container.register(Wrapper.self, lifetime: .scoped) { Wrapper() }
                container.register(R0.self, lifetime: .transient) { [mark = DeinitMark(deinits)] in _ = mark; return R0() }
                let instance = try container.resolve(Wrapper.self)
                #expect(try container.resolve(Wrapper.self) === instance)
                slot.value = container
            }  // From here on only the slot holds the container.
            let problems = Collector<String>(), freedAt = Collector<ObjectIdentifier>(), made = Collector<InjectionContainer>()
            #expect(worker.run {
                var container = slot.take()  // No other local names it: its release below is checked to be the last.
                guard let address = container.map(ObjectIdentifier.init) else {
                    problems.append("no container")
                    return
                }
                freedAt.append(address)
                let instance = try? container!.resolve(Wrapper.self)
                if instance == nil || (try? container!.resolve(Wrapper.self)) !== instance { problems.append("the worker did not resolve it") }
                if !isKnownUniquelyReferenced(&container) { problems.append("the worker's reference is not the last") }
                // Empty the worker's cache of free blocks of a container's size (the deinits it ran filled it
                // with blocks the test thread made), so that the container's block goes there, not back to malloc.
                for _ in 0..<16 { made.append(InjectionContainer()) }
                let before = deinits.value
                container = nil
                if deinits.value != before + 1 { problems.append("the container's deinit did not run on the worker") }
                for _ in 0..<16 {  // The first lands at the freed address, unless the allocator does it differently.
                    let fresh = InjectionContainer()
                    made.append(fresh)
                    guard ObjectIdentifier(fresh) == address else { continue }
                    // Without registering: the test thread checks this container after the worker.
                    for seen in showsNothingOld(fresh, registering: false) { problems.append("the worker sees \(seen)") }
                    break
                }
            })
            #expect(problems.values.isEmpty, "iteration \(iteration): \(problems.values)")
            for fresh in made.values where ObjectIdentifier(fresh) == freedAt.values.first {
                reused += 1
                let seen = showsNothingOld(fresh)
                #expect(seen.isEmpty, "iteration \(iteration): \(seen)")
            }
        }
        #expect(reused > 0 || !allocatorReusesAddresses(), "kind 2: no reuse seen")
        print("addressReuse kind 2: \(reused) reused")
    }

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

    /// Thread T resolved from container B (an instance and a transient) and runs a transient of container A,
    /// which waits. Another thread also resolved from B; B's last reference is dropped on a third thread. B's instance goes at once, B's transient registration by the time T's
    /// resolve returns, and a container made then (often at B's address) shows T nothing of B, inside A's
    /// running factory and after.
    @Test("a container released on another thread while a thread that resolved from it runs a transient frees what it held, and a container at its address shows that thread none of it")
    func releasedWhileAnotherThreadRunsACachedTransient() throws {
        for round in 0..<20 {
            let live = LiveTokens(), registrations = LiveTokens()
            let a = InjectionContainer()
            let bSlot = ContainerSlot(nil)
            weak var weakB: InjectionContainer?
            let weakInstance = WeakHolder()
            weak var weakTransientRegistration: AnyObject?
            do {
                let b = InjectionContainer()
                stRegister(ST0.self, index: 0, serial: 1, in: b, lifetime: .scoped, live: live, registrations: registrations)
                let token = CountedToken(5, serial: 1, live: registrations)
                b.register(OtherTransient.self, lifetime: .transient) { OtherTransient(token: token) }
                weakB = b
                weakTransientRegistration = InjectionProbe.registration(for: OtherTransient.self, in: b)
                bSlot.value = b
            }
            let running = Gate(), proceed = Gate(), checked = Gate()
            let mode = AtomicWord(0)
            let seenInside = Collector<String>()
            let reuseSlot = ContainerSlot(nil)
            a.register(Blocker.self, lifetime: .transient) {
                if mode.value == 1 {
                    mode.value = 0
                    running.open()
                    _ = proceed.wait()
                    // Still inside A's transient: the new container (maybe at B's address) shows nothing of B.
                    if let fresh = reuseSlot.value {
                        for _ in 0..<3 {
                            guard let made = try? fresh.resolve(OtherTransient.self) else { seenInside.append("fresh failed"); continue }
                            if made.token.serial != 2 { seenInside.append("stale transient \(made.token.serial)") }
                        }
                        if (try? stResolve(ST0.self, in: fresh))?.token.serial != 2 { seenInside.append("stale instance") }
                    }
                    checked.wait()
                }
                return Blocker()
            }
            let bothCached = Counter()
            let tDone = Gate(), uDone = Gate()
            // U stays alive until B is gone: no thread's exit comes between B's release and the checks.
            let uExits = Gate()
            defer { uExits.open() }
            onThread {
                do {  // T's own reference to B ends with this block.
                    guard let b = bSlot.value else { return }
                    weakInstance.object = try? stResolve(ST0.self, in: b)
                    for _ in 0..<3 { _ = try? b.resolve(OtherTransient.self) }
                }
                for _ in 0..<3 { _ = try? a.resolve(Blocker.self) }
                bothCached.increment()
                mode.value = 1
                _ = try? a.resolve(Blocker.self)
                tDone.open()
            }
            onThread {
                do {
                    if let b = bSlot.value {
                        _ = try? stResolve(ST0.self, in: b)
                        for _ in 0..<3 { _ = try? b.resolve(OtherTransient.self) }
                    }
                }
                bothCached.increment()
                uDone.open()
                _ = uExits.wait()
            }
            #expect(bothCached.wait(atLeast: 2))
            #expect(uDone.wait())
            #expect(running.wait())
            // Dropped on a third thread, which holds the last reference.
            let dropped = Gate()
            onThread {
                do { _ = bSlot.take() }
                dropped.open()
            }
            #expect(dropped.wait())
            #expect(waitUntil { weakB == nil }, "round \(round): B was not deinitialized")
            #expect(weakInstance.object == nil, "round \(round): B's instance outlived B's deinit")
            let fresh = InjectionContainer()
            stRegister(ST0.self, index: 0, serial: 2, in: fresh, lifetime: .scoped, live: live, registrations: registrations)
            let freshToken = CountedToken(5, serial: 2, live: registrations)
            fresh.register(OtherTransient.self, lifetime: .transient) { OtherTransient(token: freshToken) }
            reuseSlot.value = fresh
            proceed.open()
            checked.open()
            #expect(tDone.wait())
            #expect(seenInside.values.isEmpty, "round \(round): \(seenInside.values)")
            #expect(weakTransientRegistration == nil, "round \(round): B's transient registration outlived B and T's resolve")
            _ = reuseSlot.take()
            _ = fresh
        }
    }
}
