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

    // MARK: Keys

    @Test("a type registered only under keys names every key, sorted, and suggests resolving one")
    func namesTheKeys() {
        let container = InjectionContainer()
        container.register(HintPrimaryDatabase.self) { HintSQLite() }
        container.register(HintCacheDatabase.self) { HintSQLite() }
        container.register(HintName.self) { "name" }
        let error = #expect(throws: InjectionError.self) { try container.resolve((any HintDatabase).self) }
        #expect(error?.kind == .notRegistered)
        #expect(error?.typeName == "HintDatabase")
        #expect(error?.description == """
            Injection: no registration for HintDatabase. It is registered under keys: HintCacheDatabase, \
            HintPrimaryDatabase — resolve one of them: Inject(HintCacheDatabase.self). Or register it before it \
            is resolved, e.g. at launch: InjectionManager.register((any HintDatabase).self) { ... }
            """)
    }

    @Test("a type both unregistered and registered under keys: the message tells both")
    func keysAndUnregistered() {
        let container = InjectionContainer()
        container.register(HintPrimaryDatabase.self) { HintSQLite() }
        container.register((any HintDatabase).self, file: "App/Launch.swift") { HintSQLite() }
        container.unregister((any HintDatabase).self)
        let error = #expect(throws: InjectionError.self) { try container.resolve((any HintDatabase).self) }
        #expect(error?.description == """
            Injection: no registration for HintDatabase. It is registered under keys: HintPrimaryDatabase — resolve \
            one of them: Inject(HintPrimaryDatabase.self). It was registered in App/Launch.swift, then removed by \
            unregister((any HintDatabase).self); register it again before it is resolved: \
            InjectionManager.register((any HintDatabase).self) { ... }
            """)
    }

    @Test("a type with no keys for it keeps the plain message, whatever other keys are registered")
    func noKeysPlainMessage() {
        let container = InjectionContainer()
        container.register(HintName.self) { "name" }
        container.register(HintPrimaryDatabase.self) { HintSQLite() }
        let error = #expect(throws: InjectionError.self) { try container.resolve(HintService.self) }
        #expect(error?.kind == .notRegistered)
        #expect(error?.description == Self.plain)
    }

    @Test("a key that is not registered is not told about other keys for its value")
    func missingKeyPlain() {
        let container = InjectionContainer()
        container.register(HintPrimaryDatabase.self) { HintSQLite() }
        let error = #expect(throws: InjectionError.self) { try container.resolve(HintCacheDatabase.self) }
        #expect(error?.kind == .notRegistered)
        #expect(error?.description.contains("registered under keys") == false)
    }

    // MARK: Removed registrations

    @Test("after unregister, the message says so and names the file that registered it")
    func unregistered() {
        let container = InjectionContainer()
        container.register(HintService.self) { HintService() }
        container.unregister(HintService.self)
        let error = #expect(throws: InjectionError.self) { try container.resolve(HintService.self) }
        #expect(error?.kind == .notRegistered)
        #expect(error?.description == """
            Injection: no registration for HintService. It was registered in \(#fileID), then removed by \
            unregister(HintService.self); register it again before it is resolved: \
            InjectionManager.register(HintService.self) { ... }
            """)
    }

    @Test("after removeAll, the message says so and names the file that registered it")
    func removedByRemoveAll() {
        let container = InjectionContainer()
        container.register(HintService.self) { HintService() }
        container.register(HintPrimaryDatabase.self, file: "App/Keys.swift") { HintSQLite() }
        container.removeAll()
        let error = #expect(throws: InjectionError.self) { try container.resolve(HintService.self) }
        #expect(error?.kind == .notRegistered)
        #expect(error?.description == """
            Injection: no registration for HintService. It was registered in \(#fileID), then removed by \
            removeAll(); register it again before it is resolved: InjectionManager.register(HintService.self) { ... }
            """)
        let key = #expect(throws: InjectionError.self) { try container.resolve(HintPrimaryDatabase.self) }
        #expect(key?.description.contains("It was registered in App/Keys.swift, then removed by removeAll()") == true)
    }

    @Test("registered again, it resolves; unregistered again, the message names the new registration's file")
    func registeredAgain() throws {
        let container = InjectionContainer()
        container.register(HintService.self) { HintService() }
        container.unregister(HintService.self)
        container.register(HintService.self, file: "App/Later.swift") { HintService() }
        _ = try container.resolve(HintService.self)
        container.unregister(HintService.self)
        container.unregister(HintService.self)  // Unregistering what is not registered forgets nothing.
        let error = #expect(throws: InjectionError.self) { try container.resolve(HintService.self) }
        #expect(error?.description.contains("It was registered in App/Later.swift, then removed by unregister") == true)
    }

    @Test("a reset keeps what was removed; a copy of the container carries it")
    func resetAndCopy() {
        let container = InjectionContainer()
        container.register(HintService.self) { HintService() }
        container.unregister(HintService.self)
        container.reset()
        let error = #expect(throws: InjectionError.self) { try container.resolve(HintService.self) }
        #expect(error?.description.contains("It was registered in \(#fileID), then removed by unregister") == true)
        let copy = InjectionContainer(copying: container)
        let copied = #expect(throws: InjectionError.self) { try copy.resolve(HintService.self) }
        #expect(copied?.description == error?.description)
    }

    @Test("an unregister in a reset block is remembered when the block commits, and not when it throws")
    func resetBlock() throws {
        let container = InjectionContainer()
        #expect(throws: HintBroken.self) {
            try container.reset { () throws(HintBroken) in
                container.register(HintService.self) { HintService() }
                container.unregister(HintService.self)
                throw HintBroken()
            }
        }
        let discarded = #expect(throws: InjectionError.self) { try container.resolve(HintService.self) }
        #expect(discarded?.description == Self.plain)
        container.reset {
            container.register(HintService.self) { HintService() }
            container.unregister(HintService.self)
        }
        let committed = #expect(throws: InjectionError.self) { try container.resolve(HintService.self) }
        #expect(committed?.description.contains("It was registered in \(#fileID), then removed by unregister") == true)
    }

    @Test("an unregistered builder's message says so, in the builder's words")
    func unregisteredBuilder() {
        let container = InjectionContainer()
        container.register(HintBuilder.self) { _ in HintService() }
        container.unregister(builder: HintBuilder.self)
        let error = #expect(throws: InjectionError.self) { try container.build(HintBuilder()) }
        #expect(error?.kind == .notRegistered)
        #expect(error?.description == """
            Injection: no builder registered for HintBuilder. It was registered in \(#fileID), then removed by \
            unregister(builder: HintBuilder.self); register it again: \
            InjectionManager.register(HintBuilder.self) { builder in ... }
            """)
    }

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
        container.register(HintLoop.self, lifetime: .transient) { [unowned container] in
            try container.build(HintLoopBuilder())
        }
        container.register(HintLoopBuilder.self) { [unowned container] _ in try HintLoop(container.resolve(HintLoop.self)) }
        let error = #expect(throws: InjectionError.self) { try container.resolve(HintLoop.self) }
        #expect(error?.kind == .cycle)
        #expect(error?.description == """
            Injection: dependency cycle: HintLoop → HintLoopBuilder → HintLoop. Break it by removing one of these \
            dependencies, or by resolving one of them on first use (InjectLazy): every type on it is .transient \
            or a builder, so none is cached for a back-reference to find.
            """)
    }
}
