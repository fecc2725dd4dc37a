import Injection
import Testing

// Messages that point at what was registered (issue 34, point 5): the keys a missing type is registered
// under, the file that registered what `unregister` or `removeAll` removed, and a builder's own wording.

protocol HintDatabase: Sendable {}
final class HintSQLite: HintDatabase {}
enum HintPrimaryDatabase: InjectionKey { typealias Value = any HintDatabase }
enum HintCacheDatabase: InjectionKey { typealias Value = any HintDatabase }
/// A key for another type: never named for `HintDatabase`.
enum HintName: InjectionKey { typealias Value = String }

final class HintService: Sendable {}
final class HintLoop: Sendable {
    init(_ other: HintLoop?) {}
}

private struct HintBroken: Error, CustomStringConvertible {
    var description: String { "broken" }
}

struct HintBuilder: Builder, Sendable {
    typealias BuildResult = HintService
}

/// A builder whose closure builds it again, one level deeper.
struct HintDeepBuilder: Builder, Sendable {
    typealias BuildResult = Int
    let depth: Int
}

/// A builder whose closure resolves the transient that builds it: a cycle through a builder.
struct HintLoopBuilder: Builder, Sendable {
    typealias BuildResult = HintLoop
}

@Suite("Messages that point at what was registered")
struct RegisteredHintTests {
    /// The message for `HintService`, registered nowhere, as it was before this change.
    private static let plain = "Injection: no registration for HintService. Register it before it is resolved, "
        + "e.g. at launch: InjectionManager.register(HintService.self) { ... }"

    // MARK: Builders' wording

    @Test("a throwing build closure is reported as the build closure's, not a factory's")
    func throwingBuildClosure() throws {
        let container = InjectionContainer()
        container.register(HintBuilder.self) { _ in throw HintBroken() }
        let error = #expect(throws: InjectionError.self) { try container.build(HintBuilder()) }
        #expect(error?.kind == .factoryFailed)
        #expect(error?.underlyingError is HintBroken)
        #expect(error?.description == """
            Injection: the build closure for HintBuilder threw broken. Nothing was cached, so the next build \
            runs it again; fix the build closure or what it needs.
            """)
        #expect(error?.description.contains("factory") == false)
    }

    @Test("a build inside a reset block is refused in a builder's words")
    func builtDuringReset() {
        let container = InjectionContainer()
        container.register(HintBuilder.self) { _ in HintService() }
        container.reset {
            let error = #expect(throws: InjectionError.self) { try container.build(HintBuilder()) }
            #expect(error?.kind == .resolvedDuringReset)
            #expect(error?.description == """
                Injection: HintBuilder was built inside resetCurrentContainer { }, before the new scope exists. \
                Only register inside the block; build after it returns.
                """)
        }
    }

    @Test("a builder that builds itself without end fails with tooDeep, in a builder's words")
    func builderTooDeep() {
        let container = InjectionContainer()
        container.register(HintDeepBuilder.self) { [unowned container] model in
            try container.build(HintDeepBuilder(depth: model.depth + 1))
        }
        let outcome = onSizedStack(512 << 10) {
            Result { () throws(InjectionError) in try container.build(HintDeepBuilder(depth: 0)) }
        }
        guard case .failure(let error) = outcome else {
            Issue.record("a build without end returned \(outcome)")
            return
        }
        #expect(error.kind == .tooDeep)
        #expect(error.description.hasPrefix(
            "Injection: building HintDeepBuilder nests \(error.chain.count) factories and build closures deep "
                + "(HintDeepBuilder → … → HintDeepBuilder)"))
    }

    @Test("a cycle of transients through a builder is advised as one that caches nothing")
    func cycleThroughBuilder() {
        let container = InjectionContainer()
        container.register(HintLoop.self, lifetime: .transient) { try container.build(HintLoopBuilder()) }
        container.register(HintLoopBuilder.self) { _ in try HintLoop(container.resolve(HintLoop.self)) }
        let error = #expect(throws: InjectionError.self) { try container.resolve(HintLoop.self) }
        #expect(error?.kind == .cycle)
        #expect(error?.description == """
            Injection: dependency cycle: HintLoop → HintLoopBuilder → HintLoop. Break it by removing one of these \
            dependencies, or by resolving one of them on first use (InjectLazy): every type on it is .transient \
            or a builder, so none is cached for a back-reference to find.
            """)
    }
}
