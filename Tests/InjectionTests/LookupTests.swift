import Foundation
@_spi(Testing) import Injection
import Testing

// A container's registrations and each thread's cache of them answer as a dictionary would: whatever keys
// share a place in their hash tables, however the tables grow and lose entries, through any mix of
// registers, unregisters, resolves and resets. Checked against a model after every step: what the thread's
// cache holds for each key, whether it is registered, and the instance it resolves to.

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

@Suite("Lookups answer as a dictionary would")
struct LookupTests {
    /// Up to 12 keys (a 16-bucket table's most) whose home buckets crowd around the end of the table
    /// (13, 14, 15, 0, 1, 2), so runs wrap, in a thread's table and in the container's (16 buckets from 7
    /// registrations); removed, re-added, reset and resolved in random orders, every key checked against a
    /// model after every step: its thread-cache entry, its registration, the instance it resolves to, and
    /// how many instances are alive.
    @Test("keys sharing home buckets around a 16-bucket table's wrap, removed in every order, are all still found")
    func collidingKeysAroundTheWrap() throws {
        var byHome = [[Int]](repeating: [], count: 16)
        for index in stKeys.indices { byHome[homeBucket(stKeys[index], buckets: 16)].append(index) }
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
            let live = LiveTokens(), registrations = LiveTokens()
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
                        let where_ = "round \(round) step \(step) key \(i) (home \(homeBucket(stKeys[key], buckets: 16)))"
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
                    // The second resolve enters the thread's cache: a transient once its edges are known, an
                    // instance once the first cached it.
                    _ = try stResolve(stKeys[keys[i]], in: container)
                    if transient[i] {
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
                        _ = try stResolve(stKeys[keys[i]], in: container)
                        if transient[i] {
                            model[i] = .factory
                        } else {
                            if case .instance(let id) = model[i] { #expect(id == ObjectIdentifier(first)) }
                            model[i] = .instance(ObjectIdentifier(first))
                        }
                    default:
                        container.reset()
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
                    container.reset()
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
}
