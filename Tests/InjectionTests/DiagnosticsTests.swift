import Foundation
import Injection
import InjectionTesting
import _InjectionPlatform
import Testing

// MARK: - Types for the graphs below

private final class Alpha: Sendable { init(_ beta: Beta) {} }
private final class Beta: Sendable { init(_ alpha: Alpha) {} }
private final class Gamma: Sendable {}
private final class Delta: Sendable {}
private final class Root: Sendable {}
private final class Leaf: Sendable {}
private protocol Missing: Sendable {}
private protocol AlsoMissing: Sendable {}
private struct Broken: Error {}

/// Two types that share the short name `Ledger`.
private enum Payments { final class Ledger: Sendable {} }
private enum Accounting { final class Ledger: Sendable {} }

/// 2^depth distinct types, `Zero<One<Zero<...>>>`, each needing `Leaf`, for graphs of many registrations.
private struct Zero<Inner>: Sendable {}
private struct One<Inner>: Sendable {}

/// A type whose factory checks the graph on first use, as some apps do.
private final class SelfChecking: Sendable {}

/// The stack sizes of the threads that built `ChainBase` (a factory records them).
private let chainBaseStacks = Collector<UInt>()

private func registerNumbered<T>(_: T.Type, depth: Int, in container: InjectionContainer) {
    guard depth > 0 else {
        container.register(T.self) { _ = Inject(Leaf.self); return unsafeBitCast((), to: T.self) }
        return
    }
    registerNumbered(Zero<T>.self, depth: depth - 1, in: container)
    registerNumbered(One<T>.self, depth: depth - 1, in: container)
}

@Suite("Diagnostics", .isolatedInjection)
struct DiagnosticsTests {
    // MARK: Cycles

    @Test("a cycle through nested Inject() traps with its path and the fix")
    func nestedCycleTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            InjectionManager.register(Alpha.self) { Alpha(Inject()) }
            InjectionManager.register(Beta.self) { Beta(Inject()) }
            _ = Inject(Alpha.self)
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Injection: dependency cycle: Alpha → Beta → Alpha."))
        #expect(output.contains("postConstruction"))
        #expect(output.contains("InjectLazy"))
    }

    @Test("a cycle across two threads is reported as a cycle, never a deadlock")
    func crossThreadCycle() {
        let container = InjectionContainer()
        let alphaStarted = Latch(), betaStarted = Latch()
        // Factories resolve from the container running them; capturing `container` would be a retain cycle.
        container.register(Alpha.self) {
            alphaStarted.open()
            betaStarted.wait()
            return Alpha(try InjectionManager.resolve(Beta.self))
        }
        container.register(Beta.self) {
            betaStarted.open()
            alphaStarted.wait()
            return Beta(try InjectionManager.resolve(Alpha.self))
        }
        let errors = Collector<InjectionError>()
        let finished = runOnThreads(2, timeout: 20) { index in
            do throws(InjectionError) {
                if index == 0 { _ = try container.resolve(Alpha.self) } else { _ = try container.resolve(Beta.self) }
            } catch {
                errors.append(error)
            }
        }
        #expect(finished, "the two threads deadlocked")
        #expect(errors.values.count == 2)
        for error in errors.values {
            #expect(error.kind == .cycle)
            #expect(Set(error.chain) == ["Alpha", "Beta"])
            #expect(error.chain.first == error.chain.last)
        }
    }

    @Test("two threads resolving the same type at once is not a cycle")
    func concurrentResolveIsNotACycle() {
        let container = InjectionContainer()
        let bothStarted = Latch()
        let arrivals = Counter()
        container.register(Gamma.self) { Gamma() }
        container.register(Delta.self) {
            if arrivals.increment() == 1 { bothStarted.wait(seconds: 0.2) }
            _ = Inject(Gamma.self)
            return Delta()
        }
        let failures = Counter()
        let finished = runOnThreads(2) { _ in
            if arrivals.value >= 1 { bothStarted.open() }
            if (try? container.resolve(Delta.self)) == nil { failures.increment() }
        }
        #expect(finished)
        #expect(failures.value == 0)
    }

    // MARK: Names

    @Test("types that share a short name are qualified by module in messages")
    func ambiguousNamesAreQualified() {
        InjectionManager.register(Payments.Ledger.self) { Payments.Ledger() }
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve(Accounting.Ledger.self) }
        #expect(error?.typeName.hasSuffix("Accounting.Ledger") == true)
        #expect(error?.typeName.hasPrefix("InjectionTests.") == true)
        let unique = #expect(throws: InjectionError.self) { try InjectionManager.resolve(Delta.self) }
        #expect(unique?.typeName == "Delta")
    }

    // MARK: verify()

    @Test("verify() lists every problem at once and the process survives nested Inject() failures")
    func verifyListsEveryProblem() {
        InjectionManager.register(Root.self) { _ = Inject(Gamma.self); return Root() }       // fine
        InjectionManager.register(Gamma.self) { Gamma() }
        InjectionManager.register(Delta.self) { _ = Inject((any Missing).self); return Delta() }  // missing, nested
        InjectionManager.register(Leaf.self) { _ = Inject(Delta.self); return Leaf() }            // missing, two levels down
        InjectionManager.register(Alpha.self) { Alpha(Inject()) }                                 // cycle
        InjectionManager.register(Beta.self) { Beta(Inject()) }
        InjectionManager.register(Payments.Ledger.self) { throw Broken() }                         // throwing factory
        InjectionManager.register(String.self) { _ = try InjectionManager.resolve((any AlsoMissing).self); return "" } // missing, via try
        let error = #expect(throws: InjectionError.self) { try InjectionManager.verify() }
        guard let error else { return }
        #expect(error.kind == .verificationFailed)
        let summary = error.problems.map { "\($0.kind) \($0.chain.joined(separator: " → "))" }
        #expect(error.problems.count == 4, "\(summary)")
        #expect(error.problems.contains { $0.kind == .notRegistered && $0.typeName == "Missing" && $0.chain.last == "Missing" })
        #expect(error.problems.contains { $0.kind == .notRegistered && $0.typeName == "AlsoMissing" && $0.chain == ["String", "AlsoMissing"] })
        #expect(error.problems.contains { $0.kind == .cycle && Set($0.chain) == ["Alpha", "Beta"] })
        #expect(error.problems.contains { $0.kind == .factoryFailed && $0.underlyingError is Broken })
        #expect(error.description.hasPrefix("Injection: verify() found 4 problems in 8 registrations:"))
        #expect(error.description.contains("no registration for Missing (resolving "))
    }

    @Test("verify() checks a 500-deep chain on worker threads with an 8 MiB stack, whatever the caller's stack")
    func verifyDeepChain() throws {
        let container = InjectionContainer()
        container.register(ChainBase.self, lifetime: .transient) {
            var low: UInt = 0, size: UInt = 0
            _injection_thread_stack(&low, &size)
            chainBaseStacks.append(size)
            return 0
        }
        var registrar = ChainRegistrar(container: container, levels: 500, lifetime: .transient)
        registrar.visitNumbers(digits: 9, NoDigits.self)
        #expect(registrar.levels == 0)
        // Each transient level's resolve builds every level below it: the deepest one nests 500 factories.
        try container.verify()
        #expect(chainBaseStacks.values.count == 501)
        #expect(chainBaseStacks.values.allSatisfy { $0 >= 8 << 20 }, "verify()'s workers have at least 8 MiB of stack")
    }

    @Test("verify() called from a factory while that factory is being verified returns at once instead of recursing")
    func verifyFromFactory() throws {
        let container = InjectionContainer()
        let runs = Counter()
        container.register(SelfChecking.self) { [unowned container] in
            runs.increment()
            try container.verify()             // the container it was registered in...
            try InjectionManager.verify()      // ...and the current one: inside verify(), the copy it resolves in
            return SelfChecking()
        }
        let done = Gate()
        let outcome = Collector<Bool>()
        onThread {
            // The factory verifies, which builds SelfChecking in a copy, whose factory's verify() must not
            // start another verification.
            outcome.append((try? container.resolve(SelfChecking.self)) != nil)
            outcome.append((try? container.verify()) != nil)
            done.open()
        }
        #expect(done.wait(seconds: 30), "verify() inside a factory recursed instead of returning")
        #expect(outcome.values == [true, true])
        #expect(runs.value == 4, "the resolve, its two verifications, and the direct verify(): once each")
    }

    @Test("verify() leaves the real cache untouched")
    func verifyDoesNotTouchTheCache() throws {
        let runs = Counter()
        InjectionManager.register(Gamma.self) { runs.increment(); return Gamma() }
        try InjectionManager.verify()
        #expect(runs.value == 1)
        _ = try InjectionManager.resolve(Gamma.self)
        #expect(runs.value == 2)
    }

    @Test("verify() passes for a sound graph of a thousand registrations")
    func verifyManyRegistrations() throws {
        let container = InjectionContainer()
        container.register(Leaf.self, lifetime: .singleton) { Leaf() }
        registerNumbered(Void.self, depth: 10, in: container)
        try container.verify()
        #expect(container.dependencyGraph().edges.count == 1_024)
        #expect(container.dependencyGraph().nodes.count == 1_025)
    }

    // MARK: The graph

    @Test("the graph has every registration with its lifetime and the edges seen in real use")
    func graphFromRealResolutions() throws {
        InjectionManager.register(Root.self) { _ = Inject(Gamma.self); _ = Inject(Leaf.self); return Root() }
        InjectionManager.register(Gamma.self, lifetime: .singleton) { Gamma() }
        InjectionManager.register(Leaf.self, lifetime: .transient) { Leaf() }
        InjectionManager.register(Delta.self) { Delta() }
        _ = try InjectionManager.resolve(Root.self)
        let graph = InjectionManager.dependencyGraph()
        #expect(graph.nodes.map(\.name) == ["Delta", "Gamma", "Leaf", "Root"])
        #expect(graph.nodes.first { $0.name == "Gamma" }?.lifetime == .singleton)
        #expect(graph.edges == [.init(from: "Root", to: "Gamma"), .init(from: "Root", to: "Leaf")])
        #expect(graph.description == "Root → Gamma\nRoot → Leaf\nDelta")
    }

    @Test("cached dependencies are edges too, and verify() adds the edges it sees, missing ones included")
    func graphFromVerify() {
        InjectionManager.register(Gamma.self) { Gamma() }
        _ = Inject(Gamma.self)  // Cached before Root's factory ever runs.
        InjectionManager.register(Root.self) { _ = Inject(Gamma.self); _ = Inject((any Missing).self); return Root() }
        #expect(InjectionManager.dependencyGraph().edges.isEmpty)
        #expect(throws: InjectionError.self) { try InjectionManager.verify() }
        let graph = InjectionManager.dependencyGraph()
        #expect(graph.edges == [.init(from: "Root", to: "Gamma"), .init(from: "Root", to: "Missing")])
        #expect(graph.nodes.first { $0.name == "Missing" }?.lifetime == nil)
        #expect(graph.dot.contains("\"Root\" -> \"Gamma\";"))
        #expect(graph.dot.contains("\"Missing\" [label=\"Missing\\nnot registered\", color=red"))
        #expect(graph.mermaid.hasPrefix("flowchart LR\n"))
        #expect(graph.mermaid.contains("[\"Root<br/>scoped\"]"))
        #expect(graph.mermaid.contains("class n1 missing"))
    }

    @Test("the graph escapes function types for DOT and Mermaid")
    func graphEscapesNames() throws {
        InjectionManager.register(((String) -> Detail).self) { { Detail(id: $0) } }
        InjectionManager.register(Root.self) { _ = Inject(((String) -> Detail).self); return Root() }
        try InjectionManager.verify()
        let graph = InjectionManager.dependencyGraph()
        #expect(graph.dot.contains("\"Root\" -> \"(String) -> Detail\";"))
        #expect(graph.mermaid.contains("[\"(String) -#gt; Detail<br/>scoped\"]"))
    }
}
