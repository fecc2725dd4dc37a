import Injection
import InjectionTesting
import Testing

// `Inject()` traps with a readable message, and so does a `register` of a type the library cannot store.
// Exit tests run in a fresh process, so they start with an empty process-wide container.

private final class NeedsAPI: Sendable {
    let api: any API
    init(api: any API = Inject()) { self.api = api }
}

private final class StaleUserSession: Sendable {}

private final class Alpha: Sendable { init(_ beta: Beta) {} }
private final class Beta: Sendable { init(_ alpha: Alpha) {} }

@Suite("Inject() traps with a readable message")
struct TrapTests {
    @Test("a missing registration names the type and the fix")
    func missingRegistrationTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let _: any API = Inject()
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Injection: no registration for API."))
        #expect(output.contains("InjectionManager.register((any API).self) { ... }"))
    }

    @Test("a registration that implements its own type traps at once, naming the type and what to write instead")
    func implementsItselfTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            InjectionContainer().register(StaleUserSession.self) { StaleUserSession() }.implements(StaleUserSession.self) { $0 }
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Injection: StaleUserSession cannot implement itself"), "\(output)")
        #expect(output.contains(".implements((any SomeProtocol).self) { $0 }"))
    }

    @Test("a missing registration inside a factory names the chain that needed it")
    func missingNestedRegistrationTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            InjectionManager.register(ViewModel.self) { ViewModel() }
            InjectionManager.register((any Clock).self) { SystemClock() }
            // Even the throwing API cannot report a failure inside a nested, non-throwing Inject().
            _ = try? InjectionManager.resolve(ViewModel.self)
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Injection: no registration for API (resolving ViewModel → API)."))
        #expect(output.contains("InjectionManager.register((any API).self) { ... }"))
    }

    @Test("a cycle through nested Inject() traps with its path and the fix", .isolatedInjection)
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

    @Test("a throwing factory traps through Inject() with its error")
    func throwingFactoryTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            struct Offline: Error {}
            InjectionManager.register((any API).self) { throw Offline() }
            _ = NeedsAPI()
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Injection: the factory for API threw Offline()"))
    }

    @Test("Inject() never traps for a registered type")
    func registeredTypeDoesNotTrap() async {
        await #expect(processExitsWith: .success) {
            InjectionManager.register((any API).self) { LiveAPI() }
            _ = NeedsAPI()
        }
    }

    @Test("Inject() that traps in a test's container names the test and how to register the mock")
    func trapNamesTheTest() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = InjectionContainer(copying: InjectionManager.sharedContainer, testName: "\"the profile test\"")
            InjectionManager.withContainer(container) {
                let _: StaleUserSession = Inject()
            }
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Injection: no registration for StaleUserSession."))
        #expect(output.contains("This happened in the test \"the profile test\"."))
        #expect(output.contains("InjectionManager.register(StaleUserSession.self) { ... }"))
        #expect(output.contains(".isolatedInjection(startingWith:)"))
    }

    // Testing.md, "A trap names the test": "When Inject() traps inside a test running under .isolatedInjection
    // or InjectionTestCase, the message says which test was running", also inside a container the test binds.
    @Test("a trap inside a test under .isolatedInjection names the test, also inside a container the test binds itself")
    func trapInsideAContainerTheTestBindsNamesTheTest() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let testContainer = InjectionContainer(copying: InjectionManager.sharedContainer, testName: "\"the nested test\"")
            InjectionManager.withContainer(testContainer) {
                InjectionManager.withContainer(InjectionContainer()) {
                    _ = Inject(StaleUserSession.self)
                }
            }
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Injection: no registration for StaleUserSession."), "\(output)")
        #expect(output.contains("This happened in the test \"the nested test\"."), "\(output)")
    }
}

// MARK: - register traps on a type whose size the compiler and the runtime disagree on

/// An error that is a class. As `any Error & AnyObject`, Swift 6.3's compiler and runtime disagree on its
/// size (16 bytes where the type is named, 8 in its metadata): a factory writes 16 bytes where generic code
/// made room for 8 (AddressSanitizer: dynamic-stack-buffer-overflow), and the runtime crashes taking its
/// dynamic type. The register refuses it with a message instead.
private final class ClassError: Error, @unchecked Sendable {}
private class ErrorBase {}
private final class DerivedError: ErrorBase, Error, @unchecked Sendable {}
private protocol AppFailure: Error, AnyObject {}
private final class AppFailureError: AppFailure, @unchecked Sendable {}

@Suite("Types whose size the compiler and the runtime disagree on")
struct UnreliableSizeTests {
    // Found by an adversarial review (a container crashed evicting one), and by LeakSanitizer's build
    // (AddressSanitizer reported the overflow in the factory itself).

    @Test("registering any Error & AnyObject traps, naming the type and what to register instead")
    func classConstrainedError() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            InjectionContainer().register((any Error & AnyObject).self) { ClassError() }
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Injection: (any Error & AnyObject) cannot be registered"))
        #expect(output.contains("protocol AppFailure: Error, AnyObject"))
    }

    @Test("an instance of it, an optional of it, and an Error existential bound to a superclass are refused too")
    func otherForms() async {
        await #expect(processExitsWith: .failure) {
            InjectionContainer().register((any Error & AnyObject).self, instance: ClassError())
        }
        await #expect(processExitsWith: .failure) {
            InjectionContainer().register((any Error & AnyObject)?.self) { ClassError() }
        }
        await #expect(processExitsWith: .failure) {
            InjectionContainer().register((any Error & ErrorBase).self) { DerivedError() }
        }
    }

    @Test("the suggested protocol registers, resolves, resets and releases like any class-bound protocol")
    func suggestedProtocolWorks() throws {
        final class Watch { weak var object: AnyObject? }
        let container = InjectionContainer()
        container.register((any AppFailure).self) { AppFailureError() }
        container.register((any Error).self) { ClassError() }
        for _ in 1...3 {
            let watch = Watch()
            watch.object = try container.resolve((any AppFailure).self)
            #expect(try container.resolve((any Error).self) is ClassError)
            container.reset()
            #expect(watch.object == nil)
        }
    }
}
