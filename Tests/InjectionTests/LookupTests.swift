import Foundation
import Injection
import Testing

// A container's registrations answer as a dictionary would, through any mix of registers, unregisters,
// resolves and resets of hundreds of keys. Checked against a model: whether each key is registered, and the
// instance each cached key resolves to.

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
private func isRegistered<T: Makeable>(_: T.Type, in container: InjectionContainer) -> Bool { container.isRegistered(T.self) }

@Suite("Lookups answer as a dictionary would")
struct LookupTests {
    /// Random register / unregister / resolve / reset on one container with many keys, checked against a
    /// model every few steps, for every key: whether it is registered, and the instance a cached key
    /// resolves to.
    @Test("a container agrees with a model through random changes of hundreds of keys")
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
                guard step % 10 == 0 || step == 2499 else { continue }
                for i in 0..<keyCount {
                    let registered = isRegistered(keys[i], in: container)
                    var ok = registered == (model[i] != .unregistered)
                    if ok, model[i] == .instance, let instance = instances[i] {
                        ok = (try? ObjectIdentifier(resolve(keys[i], in: container))) == instance
                    }
                    if !ok {
                        Issue.record("seed \(seed) step \(step): key \(i) registered \(registered), model says \(model[i])")
                        return
                    }
                }
            }
        }
    }
}
