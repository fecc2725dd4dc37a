import Foundation
import Injection
import Testing

// A type and a typed key have separate identities, even when one class is both: a registration under
// one is never read as the other's value.

/// A class that is an `InjectionKey` for an `Int` and is also registered as a plain type.
private final class Both: InjectionKey, Sendable {
    typealias Value = Int
    let label: String
    init(label: String) { self.label = label }
}

@Suite("Key identity")
struct KeyIdentityTests {
    @Test("a class that is both an InjectionKey and a registered type keeps two registrations apart")
    func keyAndTypeAreDistinct() throws {
        let container = InjectionContainer()
        container.register(Both.self) { Both(label: "plain") }   // the type itself
        container.register(Both.self) { 42 }                     // the key, for an Int
        let plain: Both = try container.resolve(Both.self)
        let keyed: Int = try container.resolve(Both.self)
        #expect(plain.label == "plain")
        #expect(keyed == 42)
        #expect(ObjectIdentifier(type(of: plain)) == ObjectIdentifier(Both.self))
        // Cached: the second resolves take the thread-cache path.
        #expect(try (container.resolve(Both.self) as Both) === plain)
        #expect(try (container.resolve(Both.self) as Int) == 42)
    }

    @Test("unregistering the key leaves the plain registration, and the other way round")
    func unregisterOneIdentity() throws {
        let container = InjectionContainer()
        container.register(Both.self) { Both(label: "plain") }
        container.register(Both.self) { 7 }
        #expect(container.isRegistered(Both.self))      // an InjectionKey: asks about the key
        container.unregister(Both.self)                 // removes the key's registration
        #expect(!container.isRegistered(Both.self))
        #expect(try (container.resolve(Both.self) as Both).label == "plain")
        let error = #expect(throws: InjectionError.self) { try container.resolve(Both.self) as Int }
        #expect(error?.kind == .notRegistered)
    }

    @Test("a key registered only as a key is not found as a type, and a type only as a type is not found as a key")
    func oneIdentityOnly() throws {
        let container = InjectionContainer()
        container.register(Both.self) { 1 }
        var error = #expect(throws: InjectionError.self) { try container.resolve(Both.self) as Both }
        #expect(error?.kind == .notRegistered)
        let other = InjectionContainer()
        other.register(Both.self) { Both(label: "plain") }
        error = #expect(throws: InjectionError.self) { try other.resolve(Both.self) as Int }
        #expect(error?.kind == .notRegistered)
    }
}
