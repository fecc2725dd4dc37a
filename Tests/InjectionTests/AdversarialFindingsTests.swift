import Foundation
import Injection
import Testing

// Adversarial review, 2026-11-27 (branch adv-2026-11-27): each test checks one documented promise and
// failed against a153181.

private protocol AdvFScreen: AnyObject, Sendable {}
@MainActor private final class AdvFMainScreen: AdvFScreen {}
private final class AdvFPlainScreen: AdvFScreen {}
private protocol AdvFStore: AnyObject, Sendable {}
private final class AdvFStoreImpl: AdvFStore {}

/// An internal type nested in another, as feature code often declares them (`Profile.Service`).
enum AdvFNamespace {
    final class Service: Sendable {}
}

private func resolveAsyncOffMainActor<T>(_ container: InjectionContainer, _ type: T.Type) async -> Result<T, InjectionError> {
    let unchecked = await Task.detached { () -> UncheckedResult in
        do throws(InjectionError) { return UncheckedResult(.success(try await container.resolveAsync(type))) } catch {
            return UncheckedResult(.failure(error))
        }
    }.value
    return unchecked.result.map { $0 as! T }
}

private struct UncheckedResult: @unchecked Sendable {
    let result: Result<Any, InjectionError>
    init(_ result: Result<Any, InjectionError>) { self.result = result }
}

@Suite("Adversarial findings")
struct AdversarialFindingsTests {
    // GettingStarted.md ("More ways to register"): "The other type resolves wherever the registered one does,
    // because it resolves the registered one. ... `resolveAsync` of it hops to the main actor or runs the async
    // factory, as `resolveAsync` of the registered type does." The alias's synchronous form follows the type's
    // current registration, but whether it has an async form was decided by the registration it was made on.
    @Test("implements: resolveAsync of an alias runs the async factory, as resolveAsync of its primary does, after the primary is registered again with an async factory")
    func aliasFollowsPrimaryReRegisteredAsync() async {
        let container = InjectionContainer()
        container.register(AdvFStoreImpl.self) { AdvFStoreImpl() }.implements((any AdvFStore).self) { $0 }
        container.register(AdvFStoreImpl.self) { () async -> AdvFStoreImpl in AdvFStoreImpl() }  // e.g. a test's fake
        let primary = await resolveAsyncOffMainActor(container, AdvFStoreImpl.self)
        #expect(throws: Never.self, "resolveAsync of the primary") { try primary.get() }
        container.resetCurrentContainer()
        let alias = await resolveAsyncOffMainActor(container, (any AdvFStore).self)
        #expect(throws: Never.self, "resolveAsync of the alias") { try alias.get() }
    }

    @Test("implements: resolveAsync of an alias hops to the main actor, as resolveAsync of its primary does, after the primary is registered again with isolation: MainActor")
    func aliasFollowsPrimaryReRegisteredAsMainActor() async {
        let container = InjectionContainer()
        container.register(AdvFPlainScreen.self) { AdvFPlainScreen() }.implements((any AdvFScreen).self) { $0 }
        container.register(AdvFPlainScreen.self, isolation: MainActor.shared) { AdvFPlainScreen() }
        let primary = await resolveAsyncOffMainActor(container, AdvFPlainScreen.self)
        #expect(throws: Never.self, "resolveAsync of the primary off the main actor") { try primary.get() }
        container.resetCurrentContainer()
        let alias = await resolveAsyncOffMainActor(container, (any AdvFScreen).self)
        #expect(throws: Never.self, "resolveAsync of the alias off the main actor") { try alias.get() }
    }

    // InjectionContainer.verify(): "Each missing registration is reported once, with the chain that needed
    // it"; Diagnostics.md: `try InjectionManager.verify()` "checks every registration at once". An alias is a
    // plain registration (since a153181), but verify() skips it when its primary was main-actor or async, even
    // when that primary is gone and every resolve of the alias fails with notRegistered.
    @Test("verify() reports an alias whose main-actor or async primary was unregistered, as it does for a plain primary's alias")
    func verifyReportsAliasOfMissingPrimary() async {
        let plain = InjectionContainer()
        plain.register(AdvFStoreImpl.self) { AdvFStoreImpl() }.implements((any AdvFStore).self) { $0 }
        plain.unregister(AdvFStoreImpl.self)
        #expect(throws: InjectionError.self, "plain primary: verify() reports the alias") { try plain.verify() }

        let main = InjectionContainer()
        main.register(AdvFMainScreen.self, isolation: MainActor.shared) { AdvFMainScreen() }.implements((any AdvFScreen).self) { $0 }
        main.unregister(AdvFMainScreen.self)
        let viaAlias = await resolveAsyncOffMainActor(main, (any AdvFScreen).self)
        #expect((try? viaAlias.get()) == nil, "every resolve of the alias fails: notRegistered")
        #expect(throws: InjectionError.self, "main-actor primary: verify() reports the alias") { try main.verify() }

        let async = InjectionContainer()
        async.register(AdvFStoreImpl.self) { () async -> AdvFStoreImpl in AdvFStoreImpl() }.implements((any AdvFStore).self) { $0 }
        async.unregister(AdvFStoreImpl.self)
        #expect(throws: InjectionError.self, "async primary: verify() reports the alias") { try async.verify() }
    }

    // Diagnostics.md: "Every message starts with `Injection:`, names the type as you write it in code (`API`,
    // not `any API` or a mangled name), ... and ends with what to change." TypeNames: "A name is the one a
    // user writes". A nested type is written `AdvFNamespace.Service`; the message says `Service`, and its fix,
    // `InjectionManager.register(Service.self) { ... }`, does not compile outside `AdvFNamespace`.
    @Test("a missing nested type is named as written in code, and the suggested register line compiles")
    func nestedTypeNamedAsWritten() {
        let container = InjectionContainer()
        do throws(InjectionError) {
            _ = try container.resolve(AdvFNamespace.Service.self)
            Issue.record("resolved an unregistered type")
        } catch {
            #expect(error.typeName == "AdvFNamespace.Service")
            #expect(error.description.contains("InjectionManager.register(AdvFNamespace.Service.self) { ... }"), "\(error)")
        }
    }
}
