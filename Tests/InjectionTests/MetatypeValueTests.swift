import Injection
import Testing

// A subclass's metatype passed as a `Base.Type` names one type while the generic `Value` is another (an
// `Any.Type` or `any P.Type` is opened, so `Value` is the type it names).
// Registering with one traps, with a message that names both types and the fix: the registration would be found
// as the subclass and make a base, a value of the wrong type. Resolving with one is sound.

private class MetatypeBase: @unchecked Sendable { init() {} }
private final class MetatypeSub: MetatypeBase, @unchecked Sendable { let extra = 42 }

/// Resolves `type` as the `Value` its static type says, as generic code over metatypes does.
private func resolveMetatype<Value>(_ type: Value.Type, in container: InjectionContainer) throws -> Value {
    try container.resolve(type)
}

@Suite("A metatype whose static type is wider than the type it names")
struct MetatypeValueTests {
    @Test("registering a subclass's metatype typed as its base's traps, naming both types, instead of keying the subclass")
    func registerTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let type: MetatypeBase.Type = MetatypeSub.self
            let container = InjectionContainer()
            container.register(type, lifetime: .transient) { MetatypeBase() }
            // Without the trap, this returned a MetatypeBase typed as a MetatypeSub.
            let sub = try container.resolve(MetatypeSub.self)
            print(sub.extra)
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Injection: got MetatypeSub.self as a MetatypeBase.Type"))
        #expect(output.contains("register(MetatypeBase.self)"))
    }

    @Test("an Any.Type is opened: resolving through one that names a registered type returns its instance")
    func anyTypeIsOpened() throws {
        let container = InjectionContainer()
        let instance = MetatypeSub()
        container.register(MetatypeSub.self, instance: instance)
        let type: Any.Type = MetatypeSub.self
        // Swift opens the existential metatype: `Value` is MetatypeSub, not Any.
        #expect(try resolveMetatype(type, in: container) as AnyObject === instance)
    }

    @Test("resolving with a subclass's metatype typed as its base's resolves the subclass's registration")
    func resolveWithSubclassMetatype() throws {
        let container = InjectionContainer()
        let instance = MetatypeSub()
        container.register(MetatypeSub.self, instance: instance)
        let type: MetatypeBase.Type = MetatypeSub.self
        #expect(try container.resolve(type) === instance)
        #expect(container.isRegistered(type))
    }

    @Test("a metatype that names its own static type registers and resolves as before")
    func exactMetatype() throws {
        let container = InjectionContainer()
        let type: MetatypeBase.Type = MetatypeBase.self
        container.register(type, lifetime: .transient) { MetatypeSub() }
        #expect(try container.resolve(MetatypeBase.self) is MetatypeSub)
        #expect(container.isRegistered(type))
        container.unregister(type)
        #expect(!container.isRegistered(MetatypeBase.self))
    }
}
