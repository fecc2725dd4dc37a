import Foundation
import Injection
import InjectionTesting
import Testing

// `InjectLazy` resolves on first use, once, from the container current when it was made. A handle never
// keeps its container alive: a scoped instance holding one (the documented
// shape for a deliberate cycle) is freed with its container, and a handle read after its container is
// gone fails with `containerReleased` instead of resolving from nowhere.

private final class LazyDependency: Sendable {}
private final class HoldsLazy: Sendable {
    let dependency = InjectLazy(LazyDependency.self)
}

private final class AdvPlain: Sendable {}

private final class AdvLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

@Suite("InjectLazy")
struct InjectLazyTests {
    @Test("a scoped instance holding an InjectLazy does not keep its container alive")
    func handleDoesNotRetainContainer() throws {
        weak var weakContainer: InjectionContainer?
        weak var weakHolder: HoldsLazy?
        var handle: InjectLazy<LazyDependency>?
        do {
            let container = InjectionContainer()
            weakContainer = container
            container.register(LazyDependency.self) { LazyDependency() }
            container.register(HoldsLazy.self) { HoldsLazy() }
            let holder = try container.resolve(HoldsLazy.self)
            weakHolder = holder
            _ = holder.dependency.value  // Resolves while the container lives.
            handle = InjectionManager.withContainer(container) { InjectLazy(LazyDependency.self) }
        }
        #expect(weakContainer == nil, "container → instance → handle → container kept the container alive")
        #expect(weakHolder == nil)
        let error = #expect(throws: InjectionError.self) { try handle?.resolve() }
        #expect(error?.kind == .containerReleased)
        #expect(error?.description.hasPrefix("Injection: InjectLazy<LazyDependency> was read after its container was released") == true)
    }

    @Test("a handle resolved before its container went away keeps returning that instance")
    func resolvedHandleOutlivesContainer() throws {
        var handle: InjectLazy<LazyDependency>?
        var first: LazyDependency?
        do {
            let container = InjectionContainer()
            container.register(LazyDependency.self) { LazyDependency() }
            handle = InjectionManager.withContainer(container) { InjectLazy(LazyDependency.self) }
            first = try handle?.resolve()
        }
        #expect(try handle?.resolve() === first)
    }

    @Test("InjectLazy resolves on first use, once, from the container current at creation", .isolatedInjection)
    func lazyHandle() throws {
        let runs = Counter()
        InjectionManager.register(Expensive.self, lifetime: .transient) { Expensive(runs: runs) }
        let lazy = InjectLazy(Expensive.self)
        #expect(runs.value == 0)
        let first = lazy.value
        #expect(lazy.value === first)
        #expect(runs.value == 1)
        // Read from a thread outside any binding: still resolves from the creating container.
        InjectionManager.register(Detail.self) { Detail(id: "bound") }
        let detail = InjectLazy(Detail.self)
        let done = Gate(), ids = Collector<String>()
        onThread { ids.append(detail.value.id); done.open() }
        #expect(done.wait())
        #expect(ids.values == ["bound"])
    }

    @Test("InjectLazy of an optional does not keep a nil that the container refused to cache")
    func lazyNilOptional() throws {
        let container = InjectionContainer()
        let available = AdvLines()
        container.register(AdvPlain?.self) { available.all.isEmpty ? nil : AdvPlain() }
        let lazy = InjectionManager.withContainer(container) { InjectLazy(AdvPlain?.self) }
        #expect(try lazy.resolve() == nil)
        available.append("now")
        #expect(try container.resolve(AdvPlain?.self) != nil, "the container gives the instance now")
        #expect(try lazy.resolve() != nil, "the handle still holds the nil it saw first")
    }
}
