import Foundation
import Injection
import InjectionTesting
import Testing

// Transients behave like the first build of a cached lifetime: cycles, errors and their chains, deferred
// `postConstruction`, scopes across a reset, chains of any depth, and cleanup in the caller's context. Most
// tests first resolve a few times on one thread (the path that once served transients from a per-thread cache),
// then check what the next resolve does.

private final class Token: Sendable {}
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

private final class Chained: Sendable {
    let next: Chained?
    init(next: Chained? = nil) { self.next = next }
    var depth: Int { 1 + (next?.depth ?? 0) }
}
private final class Piece: @unchecked Sendable {
    private let lock = NSLock()
    private var _constructed = 0
    var constructed: Int { lock.withLock { _constructed } }
    func construct() { lock.withLock { _constructed += 1 } }
    /// How many resets had begun when it was built (`hitsRacingEvictions`).
    let generation: Int
    init(generation: Int = 0) { self.generation = generation }
}
private final class Outer: Sendable {
    let inner: Inner
    init(inner: Inner) { self.inner = inner }
}
private final class Inner: Sendable {
    let piece: Piece
    init(piece: Piece) { self.piece = piece }
}
private final class SelfRef: Sendable {}
private final class Ping: Sendable {}
private final class Pong: Sendable {}
private final class Unregistered: Sendable {}
private final class Fragile: Sendable {
    let onDeinit: @Sendable () -> Void
    init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}

/// A container held weakly, to be captured by closures that the container itself ends up holding.
private final class WeakContainer: @unchecked Sendable {
    weak var object: InjectionContainer?
    init(_ object: InjectionContainer) { self.object = object }
}

/// A switch flipped between the warm-up and the resolve under test.
private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var _value = 0
    var value: Int { get { lock.withLock { _value } } set { lock.withLock { _value = newValue } } }
}

/// Resolves `body` a few times before the resolve under test.
private func warm(_ body: () throws -> Void) rethrows {
    for _ in 0..<4 { try body() }
}

private enum LinkDepth0: InjectionKey { typealias Value = Chained }
private enum LinkDepth1: InjectionKey { typealias Value = Chained }
private enum LinkDepth2: InjectionKey { typealias Value = Chained }
private enum LinkDepth3: InjectionKey { typealias Value = Chained }
private enum LinkDepth4: InjectionKey { typealias Value = Chained }
private enum LinkDepth5: InjectionKey { typealias Value = Chained }
private enum LinkDepth6: InjectionKey { typealias Value = Chained }
private enum LinkDepth7: InjectionKey { typealias Value = Chained }
private enum LinkDepth8: InjectionKey { typealias Value = Chained }
private enum LinkDepth9: InjectionKey { typealias Value = Chained }
private enum LinkDepth10: InjectionKey { typealias Value = Chained }
private enum LinkDepth11: InjectionKey { typealias Value = Chained }
private enum LinkDepth12: InjectionKey { typealias Value = Chained }
private enum LinkDepth13: InjectionKey { typealias Value = Chained }
private enum LinkDepth14: InjectionKey { typealias Value = Chained }
private enum LinkDepth15: InjectionKey { typealias Value = Chained }
private enum LinkDepth16: InjectionKey { typealias Value = Chained }
private enum LinkDepth17: InjectionKey { typealias Value = Chained }
private enum LinkDepth18: InjectionKey { typealias Value = Chained }
private enum LinkDepth19: InjectionKey { typealias Value = Chained }
private enum LinkDepth20: InjectionKey { typealias Value = Chained }
private enum LinkDepth21: InjectionKey { typealias Value = Chained }
private enum LinkDepth22: InjectionKey { typealias Value = Chained }
private enum LinkDepth23: InjectionKey { typealias Value = Chained }
private enum LinkDepth24: InjectionKey { typealias Value = Chained }
private enum LinkDepth25: InjectionKey { typealias Value = Chained }
private enum LinkDepth26: InjectionKey { typealias Value = Chained }
private enum LinkDepth27: InjectionKey { typealias Value = Chained }
private enum LinkDepth28: InjectionKey { typealias Value = Chained }
private enum LinkDepth29: InjectionKey { typealias Value = Chained }
private enum LinkDepth30: InjectionKey { typealias Value = Chained }
private enum LinkDepth31: InjectionKey { typealias Value = Chained }
private enum LinkDepth32: InjectionKey { typealias Value = Chained }
private enum LinkDepth33: InjectionKey { typealias Value = Chained }
private enum LinkDepth34: InjectionKey { typealias Value = Chained }
private enum LinkDepth35: InjectionKey { typealias Value = Chained }
private enum LinkDepth36: InjectionKey { typealias Value = Chained }
private enum LinkDepth37: InjectionKey { typealias Value = Chained }
private enum LinkDepth38: InjectionKey { typealias Value = Chained }
private enum LinkDepth39: InjectionKey { typealias Value = Chained }

/// Registers LinkDepth0 → LinkDepth1 → … → LinkDepth39 (all transient); LinkDepth39 runs `leaf`.
private func registerDeepChain(in container: InjectionContainer, leaf: @escaping @Sendable () throws -> Chained) {
    container.register(LinkDepth0.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth1.self)) }
    container.register(LinkDepth1.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth2.self)) }
    container.register(LinkDepth2.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth3.self)) }
    container.register(LinkDepth3.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth4.self)) }
    container.register(LinkDepth4.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth5.self)) }
    container.register(LinkDepth5.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth6.self)) }
    container.register(LinkDepth6.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth7.self)) }
    container.register(LinkDepth7.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth8.self)) }
    container.register(LinkDepth8.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth9.self)) }
    container.register(LinkDepth9.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth10.self)) }
    container.register(LinkDepth10.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth11.self)) }
    container.register(LinkDepth11.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth12.self)) }
    container.register(LinkDepth12.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth13.self)) }
    container.register(LinkDepth13.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth14.self)) }
    container.register(LinkDepth14.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth15.self)) }
    container.register(LinkDepth15.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth16.self)) }
    container.register(LinkDepth16.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth17.self)) }
    container.register(LinkDepth17.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth18.self)) }
    container.register(LinkDepth18.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth19.self)) }
    container.register(LinkDepth19.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth20.self)) }
    container.register(LinkDepth20.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth21.self)) }
    container.register(LinkDepth21.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth22.self)) }
    container.register(LinkDepth22.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth23.self)) }
    container.register(LinkDepth23.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth24.self)) }
    container.register(LinkDepth24.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth25.self)) }
    container.register(LinkDepth25.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth26.self)) }
    container.register(LinkDepth26.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth27.self)) }
    container.register(LinkDepth27.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth28.self)) }
    container.register(LinkDepth28.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth29.self)) }
    container.register(LinkDepth29.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth30.self)) }
    container.register(LinkDepth30.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth31.self)) }
    container.register(LinkDepth31.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth32.self)) }
    container.register(LinkDepth32.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth33.self)) }
    container.register(LinkDepth33.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth34.self)) }
    container.register(LinkDepth34.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth35.self)) }
    container.register(LinkDepth35.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth36.self)) }
    container.register(LinkDepth36.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth37.self)) }
    container.register(LinkDepth37.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth38.self)) }
    container.register(LinkDepth38.self, lifetime: .transient) { Chained(next: try InjectionManager.resolve(LinkDepth39.self)) }
    container.register(LinkDepth39.self, lifetime: .transient) { try leaf() }
}
private let deepChainNames = (0..<40).map { "LinkDepth\($0)" }

@Suite("Transients")
struct TransientFastPathTests {
    // MARK: - Deferred postConstruction

    @Test("a scoped postConstruction under two transients runs once, after the outermost factory")
    func deferredWorkUnderLinks() throws {
        let container = InjectionContainer()
        let order = Collector<String>()
        container.register(Outer.self, lifetime: .transient) {
            let inner = try InjectionManager.resolve(Inner.self)
            order.append("outer factory returns")
            return Outer(inner: inner)
        }
        container.register(Inner.self, lifetime: .transient) { Inner(piece: try InjectionManager.resolve(Piece.self)) }
        container.register(Piece.self) { Piece() } postConstruction: { piece in
            piece.construct()
            order.append("postConstruction")
        }
        try warm { _ = try container.resolve(Outer.self) }
        for _ in 0..<3 {
            container.reset()
            let before = order.values.count
            let outer = try container.resolve(Outer.self)
            #expect(outer.inner.piece.constructed == 1)
            #expect(Array(order.values.dropFirst(before)) == ["outer factory returns", "postConstruction"])
            #expect(try container.resolve(Piece.self) === outer.inner.piece)
        }
    }

    @Test("a singleton postConstruction reached through container.resolve inside a transient runs once")
    func deferredWorkThroughPublicResolve() throws {
        let container = InjectionContainer()
        // Factories hold their container unowned: a strong capture would be a reference cycle (a leak).
        container.register(Inner.self, lifetime: .transient) { [unowned container] in
            Inner(piece: try container.resolve(Piece.self))
        }
        container.register(Piece.self, lifetime: .singleton) { Piece() } postConstruction: { $0.construct() }
        container.register(Outer.self, lifetime: .transient) { [unowned container] in
            Outer(inner: try InjectionManager.withContainer(container) { try InjectionManager.resolve(Inner.self) })
        }
        try warm { _ = try container.resolve(Inner.self); _ = try container.resolve(Outer.self) }
        let piece = try container.resolve(Outer.self).inner.piece
        #expect(piece.constructed == 1)
        for _ in 0..<5 { #expect(try container.resolve(Outer.self).inner.piece === piece) }
        #expect(piece.constructed == 1)
    }

    @Test("a transient whose factory builds a scoped type with postConstruction runs it once, after the factory returns", .isolatedInjection)
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
            if round == 2 { container.reset() }  // The next resolve builds Shared again.
        }
        #expect(events.values == [
            "Top built", "Shared postConstruction", "Top built", "Top built",
            "Top built", "Shared postConstruction",
        ])
    }

    @Test("a failing deferred postConstruction under a transient root evicts everything the resolve built")
    func failingDeferredUnderLinkEvictsGraph() throws {
        let container = InjectionContainer()
        let fails = Flag()
        container.register(Outer.self, lifetime: .transient) { Outer(inner: try InjectionManager.resolve(Inner.self)) }
        container.register(Inner.self) { Inner(piece: try InjectionManager.resolve(Piece.self)) }
        container.register(Piece.self) { Piece() } postConstruction: { _ in
            if fails.value == 1 { fails.value = 0; throw Broken() }
        }
        try warm { _ = try container.resolve(Outer.self) }
        container.reset()
        fails.value = 1
        let error = #expect(throws: InjectionError.self) { try container.resolve(Outer.self) }
        #expect(error?.chain == ["Outer", "Inner", "Piece"])
        let outer = try container.resolve(Outer.self)
        #expect(outer.inner === (try container.resolve(Inner.self)))
        #expect(outer.inner.piece === (try container.resolve(Piece.self)))
    }

    @Test("an instance dropped by a failing deferred postConstruction is released in the caller's context, on a first resolve and on later ones")
    func cleanupRunsInCallersContext() throws {
        let container = InjectionContainer()
        let seen = Collector<String>()
        let failing = Flag()
        // The instance's deinit closure must not own the container that caches the instance (a cycle).
        let weakContainer = WeakContainer(container)
        container.register(Fragile.self) {
            Fragile {
                guard let container = weakContainer.object else { return }
                // A deinit that resolves: what it sees must not depend on whether SelfRef ran before.
                let inLink = InjectionManager.currentContainer === container
                do throws(InjectionError) {
                    _ = try container.resolve(SelfRef.self)
                    seen.append("inLink=\(inLink) resolved")
                } catch { seen.append("inLink=\(inLink) \(error.kind) \(error.chain)") }
            }
        } postConstruction: { _ in
            if failing.value == 1 { failing.value = 0; throw Broken() }
        }
        container.register(SelfRef.self, lifetime: .transient) {
            if failing.value == 1 { _ = try InjectionManager.resolve(Fragile.self) }
            return SelfRef()
        }
        // SelfRef's first resolve.
        failing.value = 1
        #expect(throws: InjectionError.self) { try container.resolve(SelfRef.self) }
        try warm { _ = try container.resolve(SelfRef.self) }
        // Same graph, on a later resolve.
        failing.value = 1
        #expect(throws: InjectionError.self) { try container.resolve(SelfRef.self) }
        failing.value = 0
        #expect(seen.values == ["inLink=false resolved", "inLink=false resolved"])
    }

    // MARK: - Cycles

    @Test("a transient that resolves itself on its fourth run reports the cycle instead of recursing", .isolatedInjection)
    func selfCycleFromCache() throws {
        let container = InjectionContainer()
        let runs = Counter()
        container.register(Token.self, lifetime: .transient) {
            // The first runs succeed; the fourth asks for itself.
            if runs.increment() == 4 { _ = try InjectionManager.resolve(Token.self) }
            return Token()
        }
        for _ in 0..<3 { _ = try container.resolve(Token.self) }
        let error = #expect(throws: InjectionError.self) { try container.resolve(Token.self) }
        #expect(error?.kind == .cycle)
        #expect(error?.chain == ["Token", "Token"])
    }

    @Test("a transient that resolves itself reports a cycle T → T")
    func selfCycle() throws {
        let container = InjectionContainer()
        let cycling = Flag()
        container.register(SelfRef.self, lifetime: .transient) { [unowned container] in
            if cycling.value == 1 { _ = try InjectionManager.resolve(SelfRef.self) }
            if cycling.value == 2 { _ = try container.resolve(SelfRef.self) }
            return SelfRef()
        }
        try warm { _ = try container.resolve(SelfRef.self) }
        for mode in [1, 2] {
            cycling.value = mode
            let error = #expect(throws: InjectionError.self) { try container.resolve(SelfRef.self) }
            #expect(error?.kind == .cycle)
            #expect(error?.chain == ["SelfRef", "SelfRef"])
        }
    }

    @Test("transients Ping → Pong → Ping report the cycle with its path")
    func twoLinkCycle() throws {
        let container = InjectionContainer()
        let cycling = Flag()
        container.register(Ping.self, lifetime: .transient) { _ = try InjectionManager.resolve(Pong.self); return Ping() }
        container.register(Pong.self, lifetime: .transient) {
            if cycling.value == 1 { _ = try InjectionManager.resolve(Ping.self) }
            return Pong()
        }
        try warm { _ = try container.resolve(Ping.self) }
        cycling.value = 1
        let error = #expect(throws: InjectionError.self) { try container.resolve(Ping.self) }
        #expect(error?.kind == .cycle)
        #expect(error?.chain == ["Ping", "Pong", "Ping"])
    }

    @Test("InjectLazy resolved inside a transient keeps the chain")
    func injectLazyInsideLink() throws {
        let container = InjectionContainer()
        let cycling = Flag()
        container.register(SelfRef.self, lifetime: .transient) {
            if cycling.value == 1 { _ = try InjectLazy<SelfRef>().resolve() }
            return SelfRef()
        }
        try InjectionManager.withContainer(container) {
            try warm { _ = try container.resolve(SelfRef.self) }
            cycling.value = 1
            let error = #expect(throws: InjectionError.self) { try container.resolve(SelfRef.self) }
            #expect(error?.chain == ["SelfRef", "SelfRef"])
        }
    }

    @Test("Inject() cycling through a transient traps with the cycle's path")
    func injectCycleTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = InjectionContainer()
            let cycling = Flag()
            container.register(Ping.self, lifetime: .transient) { _ = Inject(Pong.self); return Ping() }
            container.register(Pong.self, lifetime: .transient) {
                if cycling.value == 1 { _ = Inject(Ping.self) }
                return Pong()
            }
            for _ in 0..<4 { _ = try? container.resolve(Ping.self) }
            cycling.value = 1
            _ = try? container.resolve(Ping.self)
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Injection: dependency cycle: Ping → Pong → Ping."))
    }

    @Test("two threads each under a transient, building scoped types in opposite order: a cycle, not a deadlock")
    func crossThreadCycleUnderLinks() throws {
        let container = InjectionContainer()
        let armed = Flag(), barrier = Barrier(count: 2)
        container.register(Ping.self) {
            if armed.value == 1 { barrier.arrive(seconds: 5) }
            _ = try InjectionManager.resolve(Pong.self)
            return Ping()
        }
        container.register(Pong.self) {
            if armed.value == 1 { barrier.arrive(seconds: 5) }
            _ = try InjectionManager.resolve(Ping.self)
            return Pong()
        }
        container.register(Outer.self, lifetime: .transient) { _ = try InjectionManager.resolve(Ping.self); return Outer(inner: Inner(piece: Piece())) }
        container.register(Inner.self, lifetime: .transient) { _ = try InjectionManager.resolve(Pong.self); return Inner(piece: Piece()) }
        let errors = Collector<String>()
        let warmed = Barrier(count: 2)
        let done = runOnThreads(2) { index in
            // Warm the transients only (Ping/Pong are a cycle).
            for _ in 0..<4 {
                if index == 0 { _ = try? container.resolve(Outer.self) } else { _ = try? container.resolve(Inner.self) }
            }
            warmed.arrive()
            if index == 0 { armed.value = 1 }
            warmed.arrive()
            do {
                if index == 0 { _ = try container.resolve(Outer.self) } else { _ = try container.resolve(Inner.self) }
            } catch { errors.append("\((error as? InjectionError)?.kind.description ?? "other")") }
        }
        #expect(done)
        #expect(errors.values.contains("cycle"))
    }

    // MARK: - Deep chains

    @Test("a transient chain 31, 32, 33 and 80 levels deep resolves, on every resolve", .isolatedInjection, arguments: [31, 32, 33, 80])
    func deepChains(levels: Int) throws {
        let container = InjectionContainer()
        container.register(Base.self, lifetime: .transient) { 0 }
        // The first resolve records edges; the later ones run with them recorded. On a thread
        // with a sized stack: 80 levels outgrow the 512 KiB of a test thread on Apple platforms.
        let results = onSizedStack { registerChain(above: Base.self, levels: levels, in: container, resolvingTop: 4) }
        #expect(results.map { try? $0.get() } == Array(repeating: levels, count: 4))
    }

    @Test("a failure deep under transients reports the whole chain", .isolatedInjection)
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

    @Test("40 nested transients: deferred work, errors and cycles keep the whole chain")
    func deepChain() throws {
        let container = InjectionContainer()
        let mode = Flag()
        registerDeepChain(in: container) { [unowned container] in
            switch mode.value {
            case 1: _ = try InjectionManager.resolve(Piece.self)
            case 2: throw Broken()
            case 3: _ = try InjectionManager.resolve(Unregistered.self)
            case 4: _ = try InjectionManager.resolve(LinkDepth0.self)
            case 5: _ = try container.resolve(LinkDepth20.self)
            default: break
            }
            return Chained()
        }
        container.register(Piece.self) { Piece() } postConstruction: { $0.construct() }
        // One thread with a sized stack: 40 levels outgrow the 512 KiB of a test thread on Apple platforms.
        let thread = SizedStackThread()
        defer { thread.stop() }
        try thread.run { try warm { _ = try container.resolve(LinkDepth0.self) } }
        #expect(try thread.run { try container.resolve(LinkDepth0.self).depth } == 40)

        mode.value = 1
        for _ in 0..<3 {
            thread.run { container.reset() }
            _ = try thread.run { try container.resolve(LinkDepth0.self) }
            #expect(try thread.run { try container.resolve(Piece.self).constructed } == 1)
        }

        mode.value = 2
        var error = #expect(throws: InjectionError.self) { try thread.run { try container.resolve(LinkDepth0.self) } }
        #expect(error?.kind == .factoryFailed)
        #expect(error?.chain == deepChainNames)
        #expect(error?.description.contains("(resolving \(deepChainNames.joined(separator: " → ")))") == true)

        mode.value = 3
        error = #expect(throws: InjectionError.self) { try thread.run { try container.resolve(LinkDepth0.self) } }
        #expect(error?.kind == .notRegistered)
        #expect(error?.chain == deepChainNames + ["Unregistered"])

        mode.value = 4
        error = #expect(throws: InjectionError.self) { try thread.run { try container.resolve(LinkDepth0.self) } }
        #expect(error?.kind == .cycle)
        #expect(error?.chain == deepChainNames + ["LinkDepth0"])

        mode.value = 5
        error = #expect(throws: InjectionError.self) { try thread.run { try container.resolve(LinkDepth0.self) } }
        #expect(error?.kind == .cycle)
        #expect(error?.chain == Array(deepChainNames[20...]) + ["LinkDepth20"])

        mode.value = 0  // The frame stack is balanced again: a shallow resolve still works.
        #expect(try thread.run { try container.resolve(LinkDepth30.self).depth } == 10)
    }

    // MARK: - Errors

    @Test("a transient that throws under another reports factoryFailed with the chain, and retries")
    func throwingUnderLink() throws {
        let container = InjectionContainer()
        let failing = Flag()
        container.register(Outer.self, lifetime: .transient) { Outer(inner: try InjectionManager.resolve(Inner.self)) }
        container.register(Inner.self, lifetime: .transient) {
            if failing.value == 1 { throw Broken() }
            return Inner(piece: Piece())
        }
        try warm { _ = try container.resolve(Outer.self) }
        failing.value = 1
        let error = #expect(throws: InjectionError.self) { try container.resolve(Outer.self) }
        #expect(error?.kind == .factoryFailed)
        #expect(error?.chain == ["Outer", "Inner"])
        #expect(error?.description.hasPrefix("Injection: the factory for Inner threw broken (resolving Outer → Inner)") == true)
        failing.value = 0
        _ = try container.resolve(Outer.self)
    }

    @Test("a transient that re-registers itself, then throws, reports its own type")
    func reregistersItselfThenThrows() throws {
        let container = InjectionContainer()
        let mode = Flag()
        container.register(SelfRef.self, lifetime: .transient) {
            if mode.value == 1 {
                InjectionManager.register(SelfRef.self, lifetime: .transient) { SelfRef() }
                InjectionManager.register(Piece.self, lifetime: .transient) { Piece() }
                throw Broken()
            }
            return SelfRef()
        }
        try warm { _ = try container.resolve(SelfRef.self) }
        mode.value = 1
        let error = #expect(throws: InjectionError.self) { try container.resolve(SelfRef.self) }
        #expect(error?.typeName == "SelfRef")
        _ = try container.resolve(SelfRef.self)
    }

    @Test("verify() reports a nested Inject() failing inside a transient on a later run of it")
    func verifyWithCachedTransient() throws {
        let container = InjectionContainer()
        let runs = Counter()
        container.register(SelfRef.self, lifetime: .transient) {
            if runs.increment() == 4 { _ = Inject(Unregistered.self) }
            return SelfRef()
        }
        for key in [0, 1, 2, 3] {
            switch key {
            case 0: container.register(Ping.self) { _ = Inject(SelfRef.self); return Ping() }
            case 1: container.register(Pong.self) { _ = Inject(SelfRef.self); return Pong() }
            case 2: container.register(Outer.self) { _ = Inject(SelfRef.self); return Outer(inner: Inner(piece: Piece())) }
            default: container.register(Inner.self) { _ = Inject(SelfRef.self); return Inner(piece: Piece()) }
            }
        }
        let error = #expect(throws: InjectionError.self) { try container.verify() }
        #expect(error?.problems.count == 1)
        #expect(error?.problems.first?.chain.suffix(2) == ["SelfRef", "Unregistered"])
    }

    // MARK: - Contexts that outlive the link

    @Test("a task started under withContainer in a transient resolves after the link is gone")
    func taskOutlivesLink() async throws {
        let container = InjectionContainer()
        container.register(Piece.self) { Piece() } postConstruction: { $0.construct() }
        container.register(Inner.self, lifetime: .transient) { Inner(piece: try InjectionManager.resolve(Piece.self)) }
        let tasks = Collector<Task<Int, any Error>>(), linksGone = AsyncGate()
        container.register(Outer.self, lifetime: .transient) { [unowned container] in
            InjectionManager.withContainer(container) {
                tasks.append(Task {
                    await linksGone.wait()
                    let inner = try InjectionManager.resolve(Inner.self)
                    _ = try container.resolve(Inner.self)
                    return inner.piece.constructed
                })
            }
            return Outer(inner: Inner(piece: Piece()))
        }
        try resolveOnOneThread {
            try warm { _ = try container.resolve(Outer.self) }
            for _ in 0..<20 { _ = try container.resolve(Outer.self) }
        }
        linksGone.open()
        #expect(!tasks.values.isEmpty, "no factory started a task")
        for task in tasks.values { #expect(try await task.value == 1) }
    }

    @Test("a task captures the frame of a link 35 deep: the chain while the link runs, none once it is gone")
    func deepLinkFrameOutlivesLink() async throws {
        // The task's copy of the 35 frames (some of them past the thread's frame stack) must be right while
        // the factories run, and must not dangle once they returned: the task then resolves on its own.
        let container = InjectionContainer()
        let tasks = Collector<Task<[String], Never>>(), linksGone = AsyncGate()
        @Sendable func chainOfUnregistered() -> String {
            do throws(InjectionError) { _ = try InjectionManager.resolve(Unregistered.self); return "resolved" } catch {
                return error.chain.joined(separator: ",")
            }
        }
        registerDeepChain(in: container) { [unowned container] in
            let resolvedOnce = DispatchSemaphore(value: 0)
            InjectionManager.withContainer(container) {
                tasks.append(Task {
                    let during = chainOfUnregistered()
                    resolvedOnce.signal()
                    await linksGone.wait()
                    return [during, chainOfUnregistered()]
                })
            }
            resolvedOnce.wait()  // On a thread of the test's own, not the tasks' pool.
            return Chained()
        }
        let resolved = await onOwnThread { () -> Bool in
            do {
                try warm { _ = try container.resolve(LinkDepth0.self) }
                for _ in 0..<10 { _ = try container.resolve(LinkDepth0.self) }
                return true
            } catch {
                return false
            }
        }
        #expect(resolved)
        linksGone.open()
        #expect(!tasks.values.isEmpty, "no factory started a task")
        for task in tasks.values {
            #expect(await task.value == [(deepChainNames + ["Unregistered"]).joined(separator: ","), "Unregistered"])
        }
    }

    // MARK: - Scopes and resets

    @Test("a transient graph that began before a reset on another thread does not seed the new scope")
    func resetDuringTransientGraph() throws {
        for route in 0..<3 {
            let container = InjectionContainer()
            let started = Latch(), resetDone = Latch(), pausing = Flag()
            container.register(Piece.self) { Piece() }
            container.register(Outer.self, lifetime: .transient) { Outer(inner: try InjectionManager.resolve(Inner.self)) }
            container.register(Inner.self, lifetime: .transient) {
                if pausing.value == 1 {
                    started.open()
                    resetDone.wait()
                }
                // The running factory's container, not a captured `container`: capturing it would be a cycle.
                let own = InjectionManager.currentContainer
                let piece: Piece = switch route {
                case 0: try InjectionManager.resolve(Piece.self)
                case 1: try own.resolve(Piece.self)
                default: try InjectionManager.withContainer(own) { try InjectionManager.resolve(Piece.self) }
                }
                return Inner(piece: piece)
            }
            let old = Collector<Outer>(), finished = Gate()
            onThread {
                try! warm { _ = try container.resolve(Outer.self) }
                container.reset()  // Piece is built again below, after the reset.
                pausing.value = 1
                old.append(try! container.resolve(Outer.self))
                finished.open()
            }
            #expect(started.wait())
            container.reset()
            resetDone.open()
            #expect(finished.wait())
            let newPiece = try container.resolve(Piece.self)
            #expect(old.values.first?.inner.piece !== newPiece, "route \(route)")
        }
    }

    @Test("resetCurrentContainer inside a transient: what it builds after the reset is not cached")
    func resetInsideCachedTransient() throws {
        let container = InjectionContainer()
        let resetting = Flag()
        container.register(Piece.self) { Piece() }
        container.register(Inner.self, lifetime: .transient) {
            if resetting.value == 1 { InjectionManager.resetCurrentContainer() }
            if resetting.value == 2 {
                InjectionManager.resetCurrentContainer { InjectionManager.register(Piece.self) { Piece() } }
            }
            return Inner(piece: try InjectionManager.resolve(Piece.self))
        }
        try warm { _ = try container.resolve(Inner.self) }
        for mode in [1, 2] {
            resetting.value = mode
            let inner = try container.resolve(Inner.self)
            resetting.value = 0
            #expect(try container.resolve(Piece.self) !== inner.piece, "mode \(mode)")
        }
    }

    @Test("resolving inside resetCurrentContainer { } opened in a transient reports the chain")
    func resolveDuringResetInsideLink() throws {
        let container = InjectionContainer()
        let mode = Flag()
        let errors = Collector<InjectionError>()
        container.register(Piece.self) { Piece() }
        container.register(Inner.self, lifetime: .transient) {
            if mode.value == 1 {
                InjectionManager.resetCurrentContainer {
                    do throws(InjectionError) { _ = try InjectionManager.resolve(Piece.self) } catch { errors.append(error) }
                }
            }
            return Inner(piece: try InjectionManager.resolve(Piece.self))
        }
        try warm { _ = try container.resolve(Inner.self) }
        mode.value = 1
        _ = try container.resolve(Inner.self)
        #expect(errors.values.first?.kind == .resolvedDuringReset)
        #expect(errors.values.first?.chain == ["Inner", "Piece"])
    }

    @Test("a transient under another container's frame builds scoped types in its own current scope")
    func crossContainerParentScope() throws {
        let c1 = InjectionContainer(), c2 = InjectionContainer()
        let needsPiece = Flag()
        c1.register(Piece.self) { Piece() }
        c1.register(Inner.self, lifetime: .transient) {
            Inner(piece: needsPiece.value == 1 ? try InjectionManager.resolve(Piece.self) : Piece())
        }
        c2.register(Outer.self) { Outer(inner: try c1.resolve(Inner.self)) }
        c1.reset()  // c1's scope is no longer 0.
        try warm { _ = try c1.resolve(Inner.self) }
        needsPiece.value = 1
        let outer = try c2.resolve(Outer.self)
        #expect(outer.inner.piece === (try c1.resolve(Piece.self)))
    }

    // MARK: - Thread safety

    @Test("cached resolves and transients racing resets and re-registrations")
    func hitsRacingEvictions() throws {
        let container = InjectionContainer()
        // Resets begun, and resets returned: a resolve that starts after reset n returned never gets a
        // Piece built before reset n began (one whose generation is below n).
        let resetsBegun = Counter(), resetsDone = Counter()
        container.register(Piece.self) { Piece(generation: resetsBegun.value) }
        container.register(Inner.self, lifetime: .transient) { Inner(piece: try InjectionManager.resolve(Piece.self)) }
        container.register(Outer.self, lifetime: .transient) { Outer(inner: try InjectionManager.resolve(Inner.self)) }
        let stop = Flag(), failures = Counter(), stale = Counter()
        let done = runOnThreads(5) { index in
            if index == 0 {
                for round in 0..<20_000 {
                    if round % 2 == 0 {
                        resetsBegun.increment()
                        container.reset()
                        resetsDone.increment()
                    } else {
                        container.register(Inner.self, lifetime: .transient) { Inner(piece: try InjectionManager.resolve(Piece.self)) }
                    }
                }
                stop.value = 1
                return
            }
            while stop.value == 0 {
                do {
                    let floor = resetsDone.value
                    let outer = try container.resolve(Outer.self)
                    let piece = try container.resolve(Piece.self)
                    if outer.inner.piece.generation < floor || piece.generation < floor { stale.increment() }
                } catch { failures.increment() }
            }
        }
        #expect(done)
        #expect(failures.value == 0)
        #expect(stale.value == 0, "a resolve got a Piece its container had evicted before the resolve began")
    }
}

/// Runs `body` on one thread with a sized stack.
private func resolveOnOneThread(_ body: () throws -> Void) rethrows {
    let thread = SizedStackThread()
    defer { thread.stop() }
    try thread.run(body)
}
