import Injection
import InjectionTesting
import Testing

// Docs/Migrating.md, "From jmfieldman/Inject's core API": the seed's remaining names compile and do what their
// deprecation messages say. They are deprecated, so these tests reach them through protocols whose requirements
// they satisfy (a call through a requirement names no deprecated declaration, and warns about nothing): that
// each satisfies its requirement is itself the check that the seed's spelling compiles.

/// `InjectionManager`'s seed names, as jmfieldman/Inject spells them.
private protocol SeedInjectionManager {
    static func unsafeRegister<Value>(
        _ type: Value.Type, file: StaticString, _ resolutionFunction: @escaping @Sendable () -> Value)
    static var detectResolutionCycles: Bool { get set }
}
extension InjectionManager: SeedInjectionManager {}

/// `BuilderManager`'s seed name.
private protocol SeedBuilderManager {
    static func unsafeRegister<Model: Builder>(
        _ type: Model.Type, file: StaticString, _ resolutionFunction: @escaping @Sendable (Any) -> Model.BuildResult)
}
extension BuilderManager: SeedBuilderManager {}

/// The seed's error, as a catch site reads it.
private protocol SeedError {
    associatedtype Seed: Error
    var resolutionError: Seed { get }
}
extension InjectionError: SeedError {}

private final class SeedClock: Sendable {}
/// Needs itself: a cycle, which the nested resolve throws (an `Inject()` there would trap).
private final class SeedLoop: Sendable {
    init() throws { _ = try InjectionManager.resolve(SeedLoop.self) }
}
private struct SeedBadgeBuilder: Builder { typealias BuildResult = String; let count: Int }

private func seedRegister<M: SeedInjectionManager>(_: M.Type) {
    M.unsafeRegister(SeedClock.self, file: #fileID) { SeedClock() }
}

private func seedCycleSwitch<M: SeedInjectionManager>(_: M.Type, to value: Bool) -> Bool {
    M.detectResolutionCycles = value
    return M.detectResolutionCycles
}

private func seedRegisterBuilder<M: SeedBuilderManager>(_: M.Type) {
    M.unsafeRegister(SeedBadgeBuilder.self, file: #fileID) { builder in "\((builder as! SeedBadgeBuilder).count) new" }
}

private func described<E: SeedError>(_ error: E) -> String { "\(error.resolutionError)" }

@Suite("Recipes: from Inject's core API", .isolatedInjection)
struct InjectCoreRecipesTests {
    @Test("unsafeRegister registers, on InjectionManager and on BuilderManager")
    func unsafeRegisterRegisters() throws {
        seedRegister(InjectionManager.self)
        #expect(Inject(SeedClock.self) === Inject(SeedClock.self))
        seedRegisterBuilder(BuilderManager.self)
        #expect(SeedBadgeBuilder(count: 3).build() == "3 new")
    }

    @Test("detectResolutionCycles reads true whatever it is set to, and cycles are detected either way")
    func cyclesAreAlwaysDetected() {
        #expect(seedCycleSwitch(InjectionManager.self, to: false))
        InjectionManager.register(SeedLoop.self) { try SeedLoop() }
        #expect(throws: InjectionError.self) { try InjectionManager.resolve(SeedLoop.self) }
        #expect(seedCycleSwitch(InjectionManager.self, to: true))
    }

    @Test("error.resolutionError gives the seed's cases: noResolutionBlock, cycleDetected, unknown")
    func resolutionErrorCases() throws {
        let missing = try #require(throws: InjectionError.self) { try InjectionManager.resolve(SeedClock.self) }
        #expect(described(missing) == "noResolutionBlock(type: \"SeedClock\")")
        InjectionManager.register(SeedLoop.self) { try SeedLoop() }
        let cycle = try #require(throws: InjectionError.self) { try InjectionManager.resolve(SeedLoop.self) }
        #expect(described(cycle) == "cycleDetected(stack: [\"SeedLoop\"], keyName: \"SeedLoop\")")
        struct Offline: Error {}
        InjectionManager.register(SeedClock.self) { () throws -> SeedClock in throw Offline() }
        let failed = try #require(throws: InjectionError.self) { try InjectionManager.resolve(SeedClock.self) }
        #expect(described(failed).hasPrefix("unknown(error: "), "\(described(failed))")
        #expect(described(failed).contains("Offline"), "\(described(failed))")
    }
}
