import Foundation
import Injection
import InjectionTesting
import Testing

// `verify()` lists every problem of a graph at once, leaves the real cache alone, and handles a thousand
// registrations; the dependency graph shows every registration with its lifetime and the edges seen, in
// text, DOT and Mermaid.

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
private protocol Shape: AnyObject, Sendable {}
private final class Circle: Shape {}
/// Built by `resolveAsync` or `prepare`, from an async factory or a synchronous one.
private final class AsyncResolved: Sendable {}
private final class AsyncPrepared: Sendable {}
private final class SyncResolvedAsync: Sendable {}
private final class SyncPrepared: Sendable {}

/// Two types that share the short name `Ledger`.
private enum Payments { final class Ledger: Sendable {} }

/// 2^depth distinct types, `Zero<One<Zero<...>>>`, each needing `Leaf`, for graphs of many registrations.
private struct Zero<Inner>: Sendable {}
private struct One<Inner>: Sendable {}

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

    // Concurrency.md: two parallel tests that both verify the process-wide container must both get a real
    // result. Only code the running verification started may return at once (ReentrancyTests covers that).
    @Test("a verify() from another thread while one runs checks the graph too: it reports the missing registration instead of returning at once")
    func concurrentVerifyReportsTheProblems() async {
        let container = InjectionContainer()
        let runs = Counter(), firstRunStarted = Gate(), release = Latch()
        container.register(Gamma.self) {
            if runs.increment() == 1 {
                firstRunStarted.open()
                // Until another verification runs this factory. A deadline, not a wait that must succeed: a
                // verify() that waits for the running verification's result gets it once this has passed.
                release.wait(seconds: 10)
            } else {
                release.open()
            }
            return Gamma()
        }
        container.register(Root.self) { _ = try InjectionManager.resolve((any Missing).self); return Root() }
        let verifying = { @Sendable () -> InjectionError.Kind? in
            do throws(InjectionError) { try container.verify(); return nil } catch { return error.kind }
        }
        // On threads of their own, with no hop through the pool between the first verification's start and
        // the second call: the first verification's factory blocks, and no thread of the pool waits for it.
        let (started, first, second) = await onOwnThread { () -> (Bool, [InjectionError.Kind?], InjectionError.Kind?) in
            let first = Collector<InjectionError.Kind?>(), firstDone = Gate()
            onThread {
                first.append(verifying())
                firstDone.open()
            }
            let started = firstRunStarted.wait()
            let second = verifying()  // While the first verification runs the slow factory.
            release.open()
            firstDone.wait()
            return (started, first.values, second)
        }
        #expect(started, "the first verification never ran the slow factory")
        #expect(first == [.verificationFailed])
        #expect(second == .verificationFailed, "a verify() made while another ran passed a graph with a missing registration")
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

    @Test("after removeAll, the graph shows only what was registered and seen since, also in a reset block")
    func graphAfterRemoveAll() throws {
        let container = InjectionContainer()
        container.register(Root.self) { _ = Inject(Gamma.self); return Root() }
        container.register(Gamma.self) { Gamma() }
        _ = try container.resolve(Root.self)
        container.removeAll()
        container.register(Delta.self) { Delta() }
        let graph = container.dependencyGraph()
        #expect(graph.edges.isEmpty)
        #expect(graph.nodes.map(\.name) == ["Delta"])

        container.register(Root.self) { _ = Inject(Gamma.self); return Root() }
        container.register(Gamma.self) { Gamma() }
        _ = try container.resolve(Root.self)
        container.reset {
            container.removeAll()
            container.register(Delta.self) { Delta() }
            container.register(Circle.self, lifetime: .singleton) { Circle() }.implements((any Shape).self) { $0 }
        }
        let rebuilt = container.dependencyGraph()
        #expect(rebuilt.edges.isEmpty)
        #expect(rebuilt.nodes.first { $0.name == "Shape" }?.lifetime == .singleton, "an alias made after removeAll stays one")
    }

    // InjectionGraph: "Edges are recorded whenever a factory resolves something, in real use and in verify()".
    @Test("builds made by resolveAsync and prepare record their edges, of async factories and synchronous ones alike")
    func asyncBuildsRecordEdges() async throws {
        let container = InjectionContainer()
        container.register(Gamma.self) { Gamma() }
        container.register(Leaf.self) { Leaf() }
        container.registerAsync(AsyncResolved.self) { _ = try await InjectionManager.resolveAsync(Gamma.self); return AsyncResolved() }
        container.registerAsync(AsyncPrepared.self) { _ = try await InjectionManager.resolveAsync(Leaf.self); return AsyncPrepared() }
        container.register(SyncResolvedAsync.self) { _ = Inject(Gamma.self); return SyncResolvedAsync() }
        container.register(SyncPrepared.self) { _ = Inject(Leaf.self); return SyncPrepared() }
        _ = try await container.resolveAsync(AsyncResolved.self)
        try await container.prepare(AsyncPrepared.self)
        _ = try await container.resolveAsync(SyncResolvedAsync.self)
        try await container.prepare(SyncPrepared.self)
        let edges = container.dependencyGraph().edges
        #expect(edges.contains(.init(from: "AsyncResolved", to: "Gamma")), "an async factory built by resolveAsync: \(edges)")
        #expect(edges.contains(.init(from: "AsyncPrepared", to: "Leaf")), "an async factory built by prepare: \(edges)")
        #expect(edges.contains(.init(from: "SyncResolvedAsync", to: "Gamma")), "a synchronous factory built by resolveAsync: \(edges)")
        #expect(edges.contains(.init(from: "SyncPrepared", to: "Leaf")), "a synchronous factory built by prepare: \(edges)")
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
