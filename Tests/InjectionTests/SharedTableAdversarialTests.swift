import Foundation
@_spi(Testing) import Injection
import Testing

// Adversarial tests of the one hash table (`ObjectTable`) behind a container's registrations and every
// thread's cache: keys that share a home bucket around the wrap of a 16-bucket table, a thread's table
// growing while a transient's factory has it pinned and other threads change the container, copies of
// thousands of registrations mutated on both sides at once, containers deinitialized while threads hold
// (and pin) their entries, threads exiting with grown tables, failing postConstruction through the
// bound-frame helper, and tasks holding copies of frames after their factories returned. Every object
// made here carries a token whose deinit is counted: each is released exactly once, and none is kept.

// MARK: - Counting tokens

/// Counts tokens made and freed.
private final class Live: @unchecked Sendable {  // Under `lock`.
    private let lock = NSLock()
    private var made = 0
    private var freed = 0
    private var freedSerials: Set<Int> = []
    func didMake() { lock.withLock { made += 1 } }
    func didFree(_ serial: Int) { lock.withLock { freed += 1; freedSerials.insert(serial) } }
    var alive: Int { lock.withLock { made - freed } }
    var madeCount: Int { lock.withLock { made } }
    func wasFreed(_ serial: Int) -> Bool { lock.withLock { freedSerials.contains(serial) } }
}

/// What an instance (or a registration's factory, which captures one) carries: which key, which
/// registration serial.
private final class Token: @unchecked Sendable {
    let index: Int
    let serial: Int
    private let live: Live
    init(_ index: Int, serial: Int, live: Live) {
        self.index = index
        self.serial = serial
        self.live = live
        live.didMake()
    }
    deinit { live.didFree(serial) }
}

// MARK: - Keys made at runtime

private protocol STKeyed: AnyObject, Sendable {
    init(token: Token)
    var token: Token { get }
}
private class STBase: @unchecked Sendable {
    let token: Token
    required init(token: Token) { self.token = token }
}
private final class ST0: STBase, STKeyed, @unchecked Sendable {}
private final class STZ<T>: STBase, STKeyed, @unchecked Sendable {}
private final class STO<T>: STBase, STKeyed, @unchecked Sendable {}

private func stWrap<T: STKeyed>(_: T.Type, odd: Bool) -> any STKeyed.Type { odd ? STO<T>.self : STZ<T>.self }
/// A distinct class per `n` (its binary digits, as nested generics).
private func STKey(_ n: Int) -> any STKeyed.Type { n == 0 ? ST0.self : stWrap(STKey(n / 2), odd: n % 2 == 1) }

/// The keys, made once (metadata for thousands of nested generic types takes a while).
private let stKeys: [any STKeyed.Type] = (0..<3200).map(STKey)

/// The home bucket of `type` in a table of `buckets` buckets, as `ObjectTable` hashes a key (the product's
/// high bits). Only chooses which keys a test uses: were the hash to change, the tests still hold, less sharply.
private func home(_ type: Any.Type, buckets: Int) -> Int {
    let bits = UInt64(UInt(bitPattern: ObjectIdentifier(type)))
    return Int((bits &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - buckets.trailingZeroBitCount))
}

private func stRegister<T: STKeyed>(
    _: T.Type, index: Int, serial: Int, in container: InjectionContainer, lifetime: InjectionLifetime, live: Live,
    registrations: Live
) {
    let factoryToken = Token(index, serial: serial, live: registrations)  // Freed with the registration's factory.
    container.register(T.self, lifetime: lifetime) { T(token: Token(factoryToken.index, serial: factoryToken.serial, live: live)) }
}
private func stResolve<T: STKeyed>(_: T.Type, in container: InjectionContainer) throws -> STBase {
    try container.resolve(T.self) as! STBase
}
private func stUnregister<T: STKeyed>(_: T.Type, in container: InjectionContainer) { container.unregister(T.self) }
private func stIsRegistered<T: STKeyed>(_: T.Type, in container: InjectionContainer) -> Bool { container.isRegistered(T.self) }

/// A container a thread may take, or find gone.
private final class ContainerSlot: @unchecked Sendable {
    private let lock = NSLock()
    private var container: InjectionContainer?
    init(_ container: InjectionContainer?) { self.container = container }
    var value: InjectionContainer? {
        get { lock.withLock { container } }
        set { lock.withLock { container = newValue } }
    }
    /// Takes the container out, so that the caller's reference may be the last.
    func take() -> InjectionContainer? { lock.withLock { defer { container = nil }; return container } }
}

private final class WeakHolder: @unchecked Sendable {
    private let lock = NSLock()
    private weak var held: AnyObject?
    var object: AnyObject? {
        get { lock.withLock { held } }
        set { lock.withLock { held = newValue } }
    }
}

private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var set = false
    var value: Bool {
        get { lock.withLock { set } }
        set { lock.withLock { set = newValue } }
    }
}

/// Transients of the tests.
private final class PinnedOuter: Sendable { init() {} }
private final class PinnedInner: Sendable { init() {} }
private final class Blocker: Sendable { init() {} }
private final class OtherTransient: Sendable {
    let token: Token
    init(token: Token) { self.token = token }
}
private final class Unregistered: Sendable {}
private struct PostConstructionRefused: Error {}

@Suite("Shared table: adversarial", .serialized)
struct SharedTableAdversarialTests {
    // MARK: Colliding keys around the wrap

    /// Up to 12 keys (a 16-bucket table's most) whose home buckets crowd around the end of the table
    /// (13, 14, 15, 0, 1, 2), so runs wrap, in a thread's table and in the container's (16 buckets from 7
    /// registrations); removed, re-added, reset and resolved in random orders, every key checked against a
    /// model after every step: its thread-cache entry, its registration, the instance it resolves to, and
    /// how many instances are alive.
    @Test("keys sharing home buckets around a 16-bucket table's wrap, removed in every order, are all still found")
    func collidingKeysAroundTheWrap() throws {
        var byHome = [[Int]](repeating: [], count: 16)
        for index in stKeys.indices { byHome[home(stKeys[index], buckets: 16)].append(index) }
        let crowded = [13, 14, 15, 15, 15, 15, 0, 0, 0, 1, 1, 2]
        #expect(crowded.allSatisfy { bucket in byHome[bucket].count >= crowded.filter { $0 == bucket }.count })
        enum State: Equatable { case unregistered, empty, instance(ObjectIdentifier), factory, unknownTransient }
        var checks = 0
        for round in 0..<120 {
            var random = SeededRandom(seed: UInt64(round) &+ 7)
            // Keys of crowded homes, drawn anew each round.
            var picked: [Int] = []
            for bucket in crowded.shuffled(using: &random) {
                let candidates = byHome[bucket].filter { !picked.contains($0) }
                picked.append(candidates.randomElement(using: &random)!)
            }
            let keyCount = round % 3 == 0 ? 12 : Int.random(in: 5...12, using: &random)
            let keys = Array(picked.prefix(keyCount))
            let live = Live(), registrations = Live()
            do {
                let container = InjectionContainer()
                var model = [State](repeating: .unregistered, count: keys.count)
                var transient = [Bool](repeating: false, count: keys.count)
                var serial = 0
                func check(_ step: Int) throws {
                    checks += 1
                    for (i, key) in keys.enumerated() {
                        let type: any STKeyed.Type = stKeys[key]
                        let entry = InjectionProbe.threadCacheEntry(for: type, in: container)
                        let registered = stIsRegistered(type, in: container)
                        let where_ = "round \(round) step \(step) key \(i) (home \(home(stKeys[key], buckets: 16)))"
                        switch model[i] {
                        case .unregistered:
                            #expect(entry == .none, "\(where_)")
                            #expect(!registered, "\(where_)")
                        case .empty:
                            #expect(entry == .none, "\(where_)")
                            #expect(registered, "\(where_)")
                        case .instance(let id):
                            #expect(entry == .instance, "\(where_)")
                            let resolved = try stResolve(stKeys[key], in: container)
                            #expect(ObjectIdentifier(resolved) == id, "\(where_)")
                            #expect(resolved.token.index == key, "\(where_)")
                        case .factory:
                            #expect(entry == .factory, "\(where_)")
                        case .unknownTransient:
                            #expect(entry != .instance, "\(where_)")
                        }
                    }
                    // Only the cached instances are alive: every evicted one was released once.
                    let cached = model.filter { if case State.instance = $0 { true } else { false } }.count
                    #expect(live.alive == cached, "round \(round) step \(step): \(live.alive) instances alive, \(cached) cached")
                }
                // Fill: every key registered and resolved, in random order.
                for i in keys.indices.shuffled(using: &random) {
                    transient[i] = Bool.random(using: &random)
                    serial += 1
                    stRegister(stKeys[keys[i]], index: keys[i], serial: serial, in: container,
                               lifetime: transient[i] ? .transient : .scoped, live: live, registrations: registrations)
                    let first = try stResolve(stKeys[keys[i]], in: container)
                    if transient[i] {
                        _ = try stResolve(stKeys[keys[i]], in: container)  // Cached once its edges are known.
                        model[i] = .factory
                    } else {
                        model[i] = .instance(ObjectIdentifier(first))
                    }
                }
                try check(-1)
                for step in 0..<40 {
                    let i = Int.random(in: keys.indices, using: &random)
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0..<4:
                        stUnregister(stKeys[keys[i]], in: container)
                        model[i] = .unregistered
                    case 4..<6:
                        transient[i] = Bool.random(using: &random)
                        serial += 1
                        stRegister(stKeys[keys[i]], index: keys[i], serial: serial, in: container,
                                   lifetime: transient[i] ? .transient : .scoped, live: live, registrations: registrations)
                        model[i] = .empty
                    case 6..<9:
                        guard model[i] != .unregistered else { continue }
                        let first = try stResolve(stKeys[keys[i]], in: container)
                        if transient[i] {
                            _ = try stResolve(stKeys[keys[i]], in: container)
                            model[i] = .factory
                        } else {
                            if case .instance(let id) = model[i] { #expect(id == ObjectIdentifier(first)) }
                            model[i] = .instance(ObjectIdentifier(first))
                        }
                    default:
                        container.resetCurrentContainer()
                        for j in keys.indices {
                            switch model[j] {
                            case .instance: model[j] = .empty
                            case .factory: model[j] = .unknownTransient
                            default: break
                            }
                        }
                    }
                    try check(step)
                }
                // Unregister what is left, in random order, checking the rest each time.
                for i in keys.indices.shuffled(using: &random) where model[i] != .unregistered {
                    stUnregister(stKeys[keys[i]], in: container)
                    model[i] = .unregistered
                    try check(100 + i)
                }
                #expect(registrations.alive == 0, "round \(round): unregistered registrations still alive")
            }
            #expect(live.alive == 0 && registrations.alive == 0, "round \(round): something was kept")
        }
        print("collidingKeysAroundTheWrap: \(checks) checks")
    }

    // MARK: Growth while pinned, under churn

    /// A cached transient's factory (the cache pinned) resolves ~100 scoped keys its thread's table of a
    /// fresh container has never held, growing it from 16 buckets to 256, with a transient resolved again
    /// between each (the pinned memo path); other threads meanwhile re-register, unregister and resolve
    /// those keys, re-register both transients and reset. Every instance is of the key asked for, and once
    /// the containers are gone every instance and registration was released exactly once.
    @Test("a thread's table grows inside a pinned transient while other threads evict, reset and re-register")
    func growthWhilePinnedUnderChurn() throws {
        let keyCount = 100
        let live = Live(), registrations = Live(), wrong = Live()
        let mismatches = Collector<String>()
        let pinnedResolves = Counter(), churn = Counter()
        for round in 0..<6 {
            let slot = ContainerSlot(InjectionContainer())
            let container = slot.value!
            let keys = Array(stKeys[(round * 7)..<(round * 7 + keyCount)])
            for (i, key) in keys.enumerated() {
                stRegister(key, index: round * 7 + i, serial: 0, in: container, lifetime: .scoped, live: live, registrations: registrations)
            }
            let phase = AtomicWord(0)  // 1: the outer factory resolves every key.
            let innerRuns = Counter()
            @Sendable func registerInner(_ serial: Int) {
                let token = Token(-1, serial: serial, live: registrations)
                container.register(PinnedInner.self, lifetime: .transient) { _ = token; innerRuns.increment(); return PinnedInner() }
            }
            @Sendable func registerOuter(_ serial: Int) {
                let token = Token(-2, serial: serial, live: registrations)
                container.register(PinnedOuter.self, lifetime: .transient) { [unowned container] in
                    _ = token
                    guard phase.value == 1 else { return PinnedOuter() }
                    for (i, key) in keys.enumerated() {
                        pinnedResolves.increment()
                        if let resolved = try? stResolve(key, in: container), resolved.token.index != round * 7 + i {
                            wrong.didMake()
                            mismatches.append("round \(round): key \(i) resolved an instance of key \(resolved.token.index)")
                        }
                        _ = try? container.resolve(PinnedInner.self)
                    }
                    return PinnedOuter()
                }
            }
            registerInner(0)
            registerOuter(0)
            for _ in 0..<3 { _ = try container.resolve(PinnedOuter.self) }  // Cached, pinned from now on.
            let start = Barrier(count: 3)
            let done = Counter()
            let finished = runOnThreads(3) { thread in
                var random = SeededRandom(seed: UInt64(round * 10 + thread))
                start.arrive()
                if thread == 0 {
                    // Fresh thread: its table of `container` starts at 16 buckets.
                    for _ in 0..<3 { _ = try? container.resolve(PinnedOuter.self) }
                    phase.value = 1
                    for _ in 0..<4 { _ = try? container.resolve(PinnedOuter.self) }
                    done.increment()
                } else {
                    var serial = thread * 100_000
                    while done.value == 0 {
                        serial += 1
                        churn.increment()
                        let i = Int.random(in: 0..<keyCount, using: &random)
                        switch Int.random(in: 0..<20, using: &random) {
                        case 0..<6:
                            stRegister(keys[i], index: round * 7 + i, serial: serial, in: container, lifetime: .scoped, live: live,
                                       registrations: registrations)
                        case 6..<8:
                            stUnregister(keys[i], in: container)
                            stRegister(keys[i], index: round * 7 + i, serial: serial, in: container, lifetime: .scoped, live: live,
                                       registrations: registrations)
                        case 8..<14:
                            if let resolved = try? stResolve(keys[i], in: container), resolved.token.index != round * 7 + i {
                                wrong.didMake()
                            }
                        case 14..<16: registerInner(serial)
                        case 16..<17: registerOuter(serial)
                        default: container.resetCurrentContainer()
                        }
                    }
                }
            }
            #expect(finished)
            #expect(innerRuns.value >= keyCount)
            // The last reference: the container's deinit forgets what threads still cache of it.
            _ = slot.take()
        }
        print("growthWhilePinnedUnderChurn: \(pinnedResolves.value) resolves inside pinned factories, \(churn.value) changes by other threads")
        #expect(wrong.madeCount == 0, "\(mismatches.values.prefix(5))")
        // Worker threads release their states as they exit; the containers are gone.
        #expect(waitUntil { live.alive == 0 && registrations.alive == 0 },
                "\(live.alive) instances, \(registrations.alive) registrations still alive")
    }

    // MARK: Copies of thousands of registrations, mutated on both sides at once

    /// A container with 3000 registrations, copied over and over by two threads while a third keeps
    /// changing 200 of its keys (re-registering, unregistering, resolving, resetting); each copy is checked
    /// against the 2800 keys nobody changes, then changed itself (its keys re-registered with a serial of its
    /// own, or unregistered), and the source must still show none of the copy's changes; copies of copies too.
    @Test("copies of a container with 3000 registrations, changed on both sides by several threads, never see each other's changes")
    func copiesChangedOnBothSides() throws {
        let total = 3000, hot = 200
        let live = Live(), registrations = Live()
        let failures = Collector<String>()
        do {
            let source = InjectionContainer()
            for index in 0..<total {
                stRegister(stKeys[index], index: index, serial: 0, in: source, lifetime: index % 3 == 0 ? .transient : .scoped,
                           live: live, registrations: registrations)
            }
            let done = Counter()
            let finished = runOnThreads(3) { thread in
                var random = SeededRandom(seed: UInt64(thread + 99))
                if thread == 0 {
                    for step in 0..<3000 {
                        let i = Int.random(in: 0..<hot, using: &random)
                        switch step % 10 {
                        case 0..<4:
                            stRegister(stKeys[i], index: i, serial: step + 1, in: source, lifetime: .scoped, live: live,
                                       registrations: registrations)
                        case 4..<6: stUnregister(stKeys[i], in: source)
                        case 6..<9: _ = try? stResolve(stKeys[i], in: source)
                        default: source.resetCurrentContainer()
                        }
                    }
                    done.increment()
                } else {
                    var copies = 0
                    while done.value == 0 || copies < 3 {
                        copies += 1
                        var copy = InjectionContainer(copying: source)
                        if copies % 4 == 0 { copy = InjectionContainer(copying: copy) }
                        // The stable keys, sampled: present, with the source's factory.
                        var changed: [Int: Int] = [:]  // key → serial, or -1 unregistered
                        for _ in 0..<40 {
                            let i = Int.random(in: hot..<total, using: &random)
                            guard let resolved = try? stResolve(stKeys[i], in: copy) else {
                                if changed[i] == nil { failures.append("copy lacks stable key \(i)") }
                                continue
                            }
                            let expected = changed[i] ?? 0
                            if resolved.token.index != i || resolved.token.serial != expected {
                                failures.append("copy: key \(i) resolved \(resolved.token.index)/\(resolved.token.serial), expected \(i)/\(expected)")
                            }
                            // Change the copy's stable keys; the source must never see it.
                            let serial = -(thread * 1_000_000 + copies * 100 + changed.count + 1)
                            if Bool.random(using: &random) {
                                stRegister(stKeys[i], index: i, serial: serial, in: copy, lifetime: .scoped, live: live,
                                           registrations: registrations)
                                changed[i] = serial
                            } else {
                                stUnregister(stKeys[i], in: copy)
                                changed[i] = -1
                            }
                        }
                        for (i, serial) in changed {
                            if serial == -1 {
                                if stIsRegistered(stKeys[i], in: copy) { failures.append("copy: unregistered key \(i) is registered") }
                            } else if let resolved = try? stResolve(stKeys[i], in: copy), resolved.token.serial != serial {
                                failures.append("copy: key \(i) lost its re-registration")
                            }
                            guard let original = try? stResolve(stKeys[i], in: source) else {
                                failures.append("source lost stable key \(i) after a copy changed it")
                                continue
                            }
                            if original.token.serial != 0 || original.token.index != i {
                                failures.append("source: key \(i) resolved serial \(original.token.serial) after a copy changed it")
                            }
                        }
                        // The hot keys, in the copy: whatever the source had, a key's own factory.
                        for _ in 0..<10 {
                            let i = Int.random(in: 0..<hot, using: &random)
                            if let resolved = try? stResolve(stKeys[i], in: copy), resolved.token.index != i {
                                failures.append("copy: hot key \(i) resolved key \(resolved.token.index)")
                            }
                        }
                    }
                }
            }
            #expect(finished)
            // Every stable key of the source is still there, as registered.
            for i in hot..<total where i % 50 == 0 {
                let resolved = try stResolve(stKeys[i], in: source)
                #expect(resolved.token.index == i && resolved.token.serial == 0)
            }
            #expect(source.dependencyGraph().nodes.count >= total - hot)
        }
        #expect(failures.values.isEmpty, "\(failures.values.count) failures, first: \(failures.values.prefix(5))")
        #expect(waitUntil { live.alive == 0 && registrations.alive == 0 },
                "\(live.alive) instances, \(registrations.alive) registrations still alive")
    }

    // MARK: A container deinitialized while threads hold (and pin) its entries

    /// Thread T holds entries of container B (an instance and a transient's registration, tagged) and runs a
    /// cached transient of container A, which waits. Another thread also caching B's entries; B's last
    /// reference dropped on a third thread: B's deinit forgets every thread's table. T's pinned cache keeps
    /// B's transient registration until the pinned factory returns; the instance goes at once. A container
    /// made then (often at B's address) shows T nothing of B, inside the pinned factory and after.
    @Test("a container deinitialized on another thread while a thread holding its entries runs a pinned transient")
    func forgetWhileAnotherThreadIsPinned() throws {
        for round in 0..<20 {
            let live = Live(), registrations = Live()
            let a = InjectionContainer()
            let bSlot = ContainerSlot(nil)
            weak var weakB: InjectionContainer?
            let weakInstance = WeakHolder()
            weak var weakTransientRegistration: AnyObject?
            do {
                let b = InjectionContainer()
                stRegister(ST0.self, index: 0, serial: 1, in: b, lifetime: .scoped, live: live, registrations: registrations)
                let token = Token(5, serial: 1, live: registrations)
                b.register(OtherTransient.self, lifetime: .transient) { OtherTransient(token: token) }
                weakB = b
                weakTransientRegistration = InjectionProbe.registration(for: OtherTransient.self, in: b)
                bSlot.value = b
            }
            let pinned = Gate(), proceed = Gate(), checked = Gate()
            let mode = AtomicWord(0)
            let seenInside = Collector<String>()
            let reuseSlot = ContainerSlot(nil)
            a.register(Blocker.self, lifetime: .transient) {
                if mode.value == 1 {
                    mode.value = 0
                    pinned.open()
                    _ = proceed.wait()
                    // Still pinned: the new container (maybe at B's address) shows nothing of B.
                    if let fresh = reuseSlot.value {
                        if InjectionProbe.threadCacheEntry(for: OtherTransient.self, in: fresh) != .none { seenInside.append("entry") }
                        if InjectionProbe.threadCacheEntry(for: ST0.self, in: fresh) != .none { seenInside.append("instance entry") }
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
            // U stays alive until B is gone, so B's deinit is what drops U's entries: a thread that exits
            // meanwhile releases its own a moment later, on its way out (seen once in CI).
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
            #expect(pinned.wait())
            // Dropped on a third thread, which holds the last reference.
            let dropped = Gate()
            onThread {
                do { _ = bSlot.take() }
                dropped.open()
            }
            #expect(dropped.wait())
            #expect(waitUntil { weakB == nil }, "round \(round): B was not deinitialized")
            #expect(weakInstance.object == nil, "round \(round): B's instance outlived B's deinit")
            #expect(weakTransientRegistration != nil, "round \(round): a registration in a pinned cache was released")
            let fresh = InjectionContainer()
            stRegister(ST0.self, index: 0, serial: 2, in: fresh, lifetime: .scoped, live: live, registrations: registrations)
            let freshToken = Token(5, serial: 2, live: registrations)
            fresh.register(OtherTransient.self, lifetime: .transient) { OtherTransient(token: freshToken) }
            reuseSlot.value = fresh
            proceed.open()
            checked.open()
            #expect(tDone.wait())
            #expect(seenInside.values.isEmpty, "round \(round): \(seenInside.values)")
            #expect(weakTransientRegistration == nil, "round \(round): the pinned registration was not released by the unpin")
            _ = reuseSlot.take()
            _ = fresh
        }
    }

    // MARK: Threads exiting with grown tables, racing their containers' deinit

    /// Threads fill tables of three containers past 48 entries each (instances and transients' tagged
    /// registrations, one pinned while others are inserted), then exit, while the containers are released on
    /// another thread at the same moment: the state's deinit and the containers' forget race for the
    /// entries, and each object is released exactly once.
    @Test("threads with grown tables exit while their containers are deinitialized: each entry released once")
    func threadExitRacesForget() throws {
        let live = Live(), registrations = Live()
        for round in 0..<8 {
            let slots = (0..<3).map { _ in ContainerSlot(InjectionContainer()) }
            for (c, slot) in slots.enumerated() {
                let container = slot.value!
                for i in 0..<60 {
                    let key: any STKeyed.Type = stKeys[c * 60 + i]
                    stRegister(key, index: c * 60 + i, serial: round, in: container,
                               lifetime: i % 4 == 0 ? .transient : .scoped, live: live, registrations: registrations)
                }
                let token = Token(-3, serial: round, live: registrations)
                // A transient that, pinned, fills the rest of its container's table.
                container.register(PinnedOuter.self, lifetime: .transient) { [unowned container] in
                    _ = token
                    for i in 30..<60 { let key: any STKeyed.Type = stKeys[c * 60 + i]; _ = try? stResolve(key, in: container) }
                    return PinnedOuter()
                }
            }
            let filled = Barrier(count: 4)
            let exited = Counter()
            for t in 0..<3 {
                let thread = Thread {
                    for (c, slot) in slots.enumerated() {
                        guard let container = slot.value else { continue }
                        for i in 0..<30 {
                            let key: any STKeyed.Type = stKeys[c * 60 + i]
                            _ = try? stResolve(key, in: container)
                            _ = try? stResolve(key, in: container)
                        }
                        if t != 0 { container.resetCurrentContainer() }  // Instances evicted, transients stay.
                        for _ in 0..<3 { _ = try? container.resolve(PinnedOuter.self) }
                    }
                    filled.arrive()
                    exited.increment()
                }
                thread.start()
            }
            filled.arrive()
            // The containers go now, as the threads exit.
            for slot in slots.shuffled() { _ = slot.take() }
            #expect(exited.wait(atLeast: 3))
        }
        #expect(waitUntil { live.alive == 0 && registrations.alive == 0 },
                "\(live.alive) instances, \(registrations.alive) registrations still alive")
    }

    // MARK: postConstruction through the bound frame

    /// A scoped type whose `postConstruction` resolves a cached transient (the pinned path under a heap
    /// frame) and fails every third time, resolved by threads and by tasks (the async path's synchronous
    /// factory, bound to a heap frame too) while another thread resets: a failed resolve leaves nothing
    /// of its instance in the resolving thread's cache, and every instance built is released once.
    @Test("a failing postConstruction bound to a heap frame, sync and async, racing resets, leaves no entry and no instance behind")
    func failingPostConstructionThroughRunBound() async throws {
        let live = Live(), registrations = Live(), postRuns = Counter(), transientRuns = Counter()
        let failures = Collector<String>()
        let refused = Counter()
        do {
            let container = InjectionContainer()
            let token = Token(0, serial: 0, live: registrations)
            container.register(PinnedInner.self, lifetime: .transient) { _ = token; transientRuns.increment(); return PinnedInner() }
            let postToken = Token(1, serial: 0, live: registrations)
            container.register(ST0.self, lifetime: .scoped) {
                ST0(token: Token(1, serial: postToken.serial, live: live))
            } postConstruction: { [unowned container] (instance: ST0) in
                for _ in 0..<3 { _ = try container.resolve(PinnedInner.self) }
                if postRuns.increment() % 3 == 0 { throw PostConstructionRefused() }
            }
            for _ in 0..<2 { _ = try? container.resolve(PinnedInner.self) }
            let workersDone = Counter(), syncResolves = Counter()
            let resetCount = AtomicWord(0)
            defer { print("failingPostConstructionThroughRunBound: \(syncResolves.value) sync resolves, \(resetCount.value) resets") }
            let threads = Task { await onOwnThread {  // Blocks a thread of its own, not one of the pool's.
                runOnThreads(3) { thread in
                    if thread == 0 {
                        var resets = 0
                        while workersDone.value < 2 || resets < 200 {
                            container.resetCurrentContainer()
                            resets += 1
                        }
                        resetCount.value = resets
                    } else {
                        defer { workersDone.increment() }
                        for i in 0..<600 {
                            if i % 3 == thread { container.resetCurrentContainer() }
                            do {
                                syncResolves.increment()
                                _ = try container.resolve(ST0.self)
                            } catch {
                                let error = error as! InjectionError
                                refused.increment()
                                if error.kind != .factoryFailed || !(error.underlyingError is PostConstructionRefused) { failures.append("sync: \(error)") }
                                if InjectionProbe.threadCacheEntry(for: ST0.self, in: container) != .none {
                                    failures.append("a failed resolve left its type in the thread's cache")
                                }
                            }
                        }
                    }
                }
            } }
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<200 {
                    group.addTask {
                        do {
                            _ = try await container.resolveAsync(ST0.self)
                        } catch {
                            let error = error as! InjectionError
                            refused.increment()
                            if error.kind != .factoryFailed || !(error.underlyingError is PostConstructionRefused) { failures.append("async: \(error)") }
                        }
                    }
                }
            }
            #expect(await threads.value)
            container.resetCurrentContainer()
            // After a reset nothing of ST0 is alive but what the caches still hold (none after a reset).
            #expect(live.alive == 0, "\(live.alive) instances alive after the last reset")
        }
        #expect(refused.value > 0)
        print("failingPostConstructionThroughRunBound: \(postRuns.value) postConstruction runs, \(refused.value) refused, \(transientRuns.value) transients")
        #expect(failures.values.isEmpty, "\(failures.values.prefix(5))")
        #expect(waitUntil { live.alive == 0 && registrations.alive == 0 },
                "\(live.alive) instances, \(registrations.alive) registrations still alive")
    }

    // MARK: Escaped frames outliving their factories

    /// Transients 40 deep, served from the thread cache (frames past the 32 kept in place allocate their
    /// own), each starting a task under `withContainer` (which copies the chain to the heap); the tasks run
    /// only after every factory returned and the thread resolved other chains over the same frame slots.
    /// Each task then sees no chain: its type is no cycle, and an error names only what it asked for.
    @Test("tasks holding copies of a 40-deep chain of pinned transients' frames resolve after the chain is gone")
    func escapedFramesOutliveDeepChain() async throws {
        let depth = 40
        let container = InjectionContainer()
        let gate = AsyncGate()
        let results = Collector<String>()
        let tasks = Collector<Task<Void, Never>>()
        let live = Live(), registrations = Live()
        let spawn = AtomicWord(0)
        func link<T: STKeyed>(_: T.Type, level: Int) {
            let token = Token(level, serial: 0, live: registrations)
            container.register(T.self, lifetime: .transient) { [unowned container] in
                if level + 1 < depth { let next: any STKeyed.Type = stKeys[level + 1]; _ = try stResolve(next, in: container) }
                if spawn.value == 1 {
                    InjectionManager.withContainer(container) {
                        tasks.append(Task {
                            await gate.wait()
                            // The type whose factory started this task, long returned: no cycle.
                            let own: any STKeyed.Type = stKeys[level]
                            if (try? stResolve(own, in: container)) == nil { results.append("level \(level): own type failed") }
                            do {
                                _ = try container.resolve(Unregistered.self)
                                results.append("level \(level): resolved an unregistered type")
                            } catch {
                                let error = error as! InjectionError
                                if error.chain.count != 1 { results.append("level \(level): stale chain \(error.chain)") }
                            }
                        })
                    }
                }
                return T(token: Token(token.index, serial: 0, live: live))
            }
        }
        for level in 0..<depth { link(stKeys[level], level: level) }
        await onOwnThread {
            for _ in 0..<3 { _ = try? stResolve(stKeys[0], in: container) }  // Every link cached.
            spawn.value = 1
            _ = try? stResolve(stKeys[0], in: container)
            spawn.value = 0
            // Other chains over the same frame slots.
            for start in stride(from: 0, to: depth, by: 5) { _ = try? stResolve(stKeys[start], in: container) }
        }
        #expect(tasks.values.count == depth)
        gate.open()
        for task in tasks.values { await task.value }
        #expect(results.values.isEmpty, "\(results.values.prefix(5))")
        #expect(live.alive == 0)
        _ = container
    }
}
