import Foundation
import Injection
import Testing

// Fuzz-style: random types (generics, optionals, function types, tuples, existentials, existential
// metatypes, a class that is also an `InjectionKey`) registered under random lifetimes and resolved
// from several threads while they are re-registered. Every resolve returns a value of exactly the
// registered type (same dynamic type, same value) or throws a documented error.

private protocol FuzzProtocol: Sendable {}
private struct FuzzImplementation: FuzzProtocol, CustomStringConvertible { var description: String { "impl" } }
private final class FuzzBox<Content: Sendable>: Sendable, CustomStringConvertible {
    let content: Content
    init(_ content: Content) { self.content = content }
    var description: String { "FuzzBox(\(content))" }
}
private struct FuzzPair<First: Sendable, Second: Sendable>: Sendable { let first: First, second: Second }
private final class FuzzKeyClass: InjectionKey, Sendable, CustomStringConvertible {
    typealias Value = [String]
    var description: String { "FuzzKeyClass" }
}

/// The dynamic type and printed value of `value`, seen through its static type.
private func identity<Value>(_ value: Value) -> String {
    "\(ObjectIdentifier(type(of: value)).hashValue)/\(String(reflecting: type(of: value)))/\(value)"
}

/// One registrable type: registers it with a lifetime, resolves it, and says what a correct resolve returns.
private struct Specimen: Sendable {
    let name: String
    let isClass: Bool
    let register: @Sendable (InjectionContainer, InjectionLifetime) -> Void
    let resolve: @Sendable (InjectionContainer) throws(InjectionError) -> String
    let expected: String

    static func plain<Value>(_ name: String, isClass: Bool = false, _ make: @escaping @Sendable () -> Value) -> Specimen {
        Specimen(
            name: name, isClass: isClass,
            register: { container, lifetime in container.register(Value.self, lifetime: lifetime, factory: make) },
            resolve: { container throws(InjectionError) in identity(try container.resolve(Value.self)) },
            expected: identity(make()))
    }

    static func key<Key: InjectionKey>(_ name: String, _: Key.Type, _ make: @escaping @Sendable () -> Key.Value) -> Specimen
    where Key: SendableMetatype {
        Specimen(
            name: name, isClass: false,
            register: { container, lifetime in container.register(Key.self, lifetime: lifetime, factory: make) },
            resolve: { container throws(InjectionError) in identity(try container.resolve(Key.self)) },
            expected: identity(make()))
    }
}

private let specimens: [Specimen] = [
    .plain("Int") { 7 },
    .plain("Int?") { Optional(8) },
    .plain("String??") { Optional(Optional("nested")) },
    .plain("[Int]") { [1, 2, 3] },
    .plain("(Int, String)") { (4, "tuple") },
    .plain("(Int) -> String") { { (number: Int) in "f\(number)" } as @Sendable (Int) -> String },
    .plain("any FuzzProtocol") { FuzzImplementation() as any FuzzProtocol },
    .plain("(any FuzzProtocol).Type") { FuzzImplementation.self as any FuzzProtocol.Type },
    .plain("FuzzBox<Int>", isClass: true) { FuzzBox(1) },
    .plain("FuzzBox<String>", isClass: true) { FuzzBox("s") },
    .plain("FuzzBox<Int?>", isClass: true) { FuzzBox<Int?>(nil) },
    .plain("FuzzPair<Int, String>") { FuzzPair(first: 1, second: "two") },
    .plain("FuzzKeyClass (the type)", isClass: true) { FuzzKeyClass() },
    .key("FuzzKeyClass (the key)", FuzzKeyClass.self) { ["key", "value"] },
]

@Suite("Type fuzz")
struct TypeFuzzTests {
    @Test("random types under random lifetimes resolve, from several threads, to exactly the registered type")
    func randomTypesResolveExactly() {
        let seed = SeededRandom.seed(fromEnvironment: "INJECTION_SEED") ?? UInt64.random(in: 0...UInt64.max)
        let lifetimes: [InjectionLifetime] = [.scoped, .singleton, .transient, .weak]
        let container = InjectionContainer()
        for specimen in specimens { specimen.register(container, .scoped) }
        let problems = Collector<String>()
        let finished = runOnThreads(4, timeout: 120) { thread in
            var random = SeededRandom(seed: seed &+ UInt64(thread))
            for _ in 0..<2_000 {
                let specimen = random.pick(specimens)
                if thread == 0 && random.chance(0.2) {
                    specimen.register(container, random.pick(lifetimes))
                    continue
                }
                do throws(InjectionError) {
                    let got = try specimen.resolve(container)
                    if got != specimen.expected { problems.append("\(specimen.name): got \(got), expected \(specimen.expected)") }
                } catch {
                    // The one documented failure here: a `.weak` registration of a value that is not a class.
                    if !(error.kind == .weakNeedsClass && !specimen.isClass) {
                        problems.append("\(specimen.name): \(error.kind): \(error)")
                    }
                }
            }
        }
        #expect(finished)
        #expect(problems.values.isEmpty, "seed \(seed) (replay with INJECTION_SEED=\(seed)): \(problems.values.prefix(5))")
    }
}
