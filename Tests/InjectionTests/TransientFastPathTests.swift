import Foundation
@_spi(Testing) import Injection
import InjectionTesting
import Testing

// The fast path for transients served from a thread's cache: their factories run under `_Link`s on
// the thread's link stack, with their registrations pinned instead of retained.

private final class Token: Sendable {}
private final class Slow: Sendable {
    let token: Token
    init(token: Token) { self.token = token }
}
private final class Top: Sendable {
    let shared: Shared
    init(shared: Shared) { self.shared = shared }
}
private final class Shared: @unchecked Sendable {
    var isConstructed = false
}
private struct Broken: Error, CustomStringConvertible {
    var description: String { "broken" }
}

private enum Base: InjectionKey { typealias Value = Int }
private enum Next<Inner: InjectionKey>: InjectionKey where Inner.Value == Int { typealias Value = Int }

/// Registers `levels` transient keys above `key`, each resolving the one below plus one, then
/// resolves the topmost one `times` times and returns the results.
private func registerChain<Key: InjectionKey>(
    above key: Key.Type, levels: Int, in container: InjectionContainer, resolvingTop times: Int
) -> [Result<Int, InjectionError>] where Key.Value == Int, Key: SendableMetatype {
    guard levels > 0 else {
        return (0..<times).map { _ in Result { () throws(InjectionError) -> Int in try container.resolve(Key.self) } }
    }
    container.register(Next<Key>.self, lifetime: .transient) { try InjectionManager.resolve(Key.self) + 1 }
    return registerChain(above: Next<Key>.self, levels: levels - 1, in: container, resolvingTop: times)
}

@Suite("Transient fast path", .isolatedInjection)
struct TransientFastPathTests {
    @Test("a transient evicted from the thread cache while its factory runs stays alive until that resolve returns, then is released")
    func pinnedRegistrationOutlivesEviction() throws {
        let container = InjectionContainer()
        let started = Gate(), proceed = Gate(), done = Gate()
        weak var weakToken: Token?
        do {
            let token = Token()
            weakToken = token
            let blocks = Counter()
            container.register(Slow.self, lifetime: .transient) { [token] in
                // Block only in the fourth run: by then the thread serves `Slow` from its cache.
                if blocks.increment() == 4 {
                    started.open()
                    proceed.wait()
                }
                return Slow(token: token)
            }
        }
        let outcome = Collector<Bool>()
        onThread {
            for _ in 0..<3 { _ = try? container.resolve(Slow.self) }
            outcome.append((try? container.resolve(Slow.self)) != nil)  // Holds no `Slow` past this line.
            done.open()
        }
        #expect(started.wait())
        weak let weakRegistration = InjectionProbe.registration(for: Slow.self, in: container)
        #expect(weakRegistration != nil)
        container.unregister(Slow.self)  // Evicts the registration from every thread's cache.
        // The factory runs with its registration pinned, not retained: the pin must keep it alive.
        #expect(weakRegistration != nil, "the running factory's registration must stay alive")
        proceed.open()
        #expect(done.wait())
        #expect(outcome.values == [true])
        #expect(weakRegistration == nil, "once the outermost transient returns, the evicted registration is released")
        #expect(weakToken == nil)
    }

    @Test("a transient chain deeper than the thread's link stack resolves, from the cache too", arguments: [31, 32, 33, 80])
    func deepChains(levels: Int) throws {
        let container = InjectionContainer()
        container.register(Base.self, lifetime: .transient) { 0 }
        // The first resolves record edges and fill the thread cache; the last ones run from it. On a thread
        // with a sized stack: 80 levels outgrow the 512 KiB of a test thread on Apple platforms.
        let results = onSizedStack { registerChain(above: Base.self, levels: levels, in: container, resolvingTop: 4) }
        #expect(results.map { try? $0.get() } == Array(repeating: levels, count: 4))
    }

    @Test("a failure deep under cached transients reports the whole chain")
    func deepFailureChain() throws {
        let container = InjectionContainer()
        let fails = Counter()
        container.register(Base.self, lifetime: .transient) {
            if fails.increment() > 3 { throw Broken() }
            return 0
        }
        let results = onSizedStack { registerChain(above: Base.self, levels: 40, in: container, resolvingTop: 4) }
        #expect(results.prefix(3).map { try? $0.get() } == [40, 40, 40])
        guard case .failure(let error) = results[3] else {
            Issue.record("the fourth resolve should fail")
            return
        }
        #expect(error.kind == .factoryFailed)
        #expect(error.chain.count == 41)
        #expect(error.chain.last?.hasPrefix("Base") == true)
        #expect(error.description.contains("threw broken"))
    }

    @Test("a cached transient whose factory builds a scoped type with postConstruction runs it once, after the factory returns")
    func deferredWorkUnderLink() throws {
        let container = InjectionContainer()
        let events = Collector<String>()
        container.register(Top.self, lifetime: .transient) {
            let top = Top(shared: Inject())
            events.append("Top built")
            return top
        }
        container.register(Shared.self) { Shared() } postConstruction: {
            $0.isConstructed = true
            events.append("Shared postConstruction")
        }
        for round in 0..<4 {
            let top = try container.resolve(Top.self)
            #expect(top.shared.isConstructed)
            if round == 2 { container.resetCurrentContainer() }  // The next resolve builds Shared again.
        }
        #expect(events.values == [
            "Top built", "Shared postConstruction", "Top built", "Top built",
            "Top built", "Shared postConstruction",
        ])
    }

    @Test("a cached transient that resolves itself reports the cycle instead of recursing")
    func selfCycleFromCache() throws {
        let container = InjectionContainer()
        let runs = Counter()
        container.register(Token.self, lifetime: .transient) {
            // The first runs fill the cache; the fourth asks for itself.
            if runs.increment() == 4 { _ = try InjectionManager.resolve(Token.self) }
            return Token()
        }
        for _ in 0..<3 { _ = try container.resolve(Token.self) }
        let error = #expect(throws: InjectionError.self) { try container.resolve(Token.self) }
        #expect(error?.kind == .cycle)
        #expect(error?.chain == ["Token", "Token"])
    }
}
