import Injection
import InjectionTesting
import Testing

// The `.isolatedInjection` trait (InjectionTesting): each test gets its own copy of the process-wide
// container, starting with what `startingWith:` registers (a suite's and its test's own, both), and leaves
// nothing behind for other tests; a trap inside such a test names the test and the registration to add.

@Suite(".isolatedInjection", .isolatedInjection)
struct IsolatedInjectionTraitTests {
    @Test("each test starts from a fresh container, not the process-wide one")
    func freshContainerPerTest() {
        #expect(InjectionManager.currentContainer !== InjectionManager.sharedContainer)
        InjectionManager.register(Formatter.self) { Formatter() }
        #expect(!InjectionManager.sharedContainer.isRegistered(Formatter.self))
    }

    @Test("tests in one suite do not see each other's registrations", arguments: 0..<20)
    func noLeaksBetweenTests(index: Int) {
        #expect(!InjectionManager.isRegistered(Detail.self))
        InjectionManager.register(Detail.self) { Detail(id: "\(index)") }
        #expect(Inject(Detail.self).id == "\(index)")
    }
}

private final class StaleUnrelated: Sendable {}

/// What the suite below starts each test with.
@Sendable private func registerStartingServices() {
    InjectionManager.register(StaleUnrelated.self) { StaleUnrelated() }
}

@Suite("isolatedInjection(startingWith:)", .isolatedInjection(startingWith: registerStartingServices))
struct StartingWithTests {
    @Test("each test starts with the registrations the function makes, in its own container")
    func startsWithTheRegistrations() throws {
        #expect(InjectionManager.isRegistered(StaleUnrelated.self))
        #expect(!InjectionManager.sharedContainer.isRegistered(StaleUnrelated.self))
        #expect(InjectionManager.currentContainer.testName?.contains("each test starts with the registrations") == true)
        let first = try InjectionManager.resolve(StaleUnrelated.self)
        InjectionManager.register(StaleUnrelated.self) { StaleUnrelated() }   // a test overrides what it mocks
        #expect(try InjectionManager.resolve(StaleUnrelated.self) !== first)
    }
}

private final class AdvFromSuite: Sendable {}
private final class AdvFromTest: Sendable {}

@Sendable private func registerSuiteServices() {
    InjectionManager.register(AdvFromSuite.self) { AdvFromSuite() }
}

@Sendable private func registerTestServices() {
    InjectionManager.register(AdvFromTest.self) { AdvFromTest() }
}

private struct AdvTrapBuilder: Builder, Sendable {
    typealias BuildResult = Int
}

@Suite("isolatedInjection(startingWith:) on a suite and on a test", .isolatedInjection(startingWith: registerSuiteServices))
struct NestedStartingWithTests {
    @Test("a test's own .isolatedInjection(startingWith:) keeps its suite's starting registrations",
          .isolatedInjection(startingWith: registerTestServices))
    func nestedStartingWith() {
        #expect(InjectionManager.isRegistered(AdvFromTest.self))
        #expect(InjectionManager.isRegistered(AdvFromSuite.self), "the suite's startingWith registrations were dropped")
    }

    @Test("a missing builder trapped in a test is told to register a builder closure, not a factory")
    func missingBuilderTrapAdvice() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = InjectionContainer(copying: InjectionManager.sharedContainer, testName: "\"the card test\"")
            InjectionManager.withContainer(container) {
                _ = AdvTrapBuilder().build()
            }
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("no builder registered for AdvTrapBuilder"))
        #expect(output.contains("This happened in the test \"the card test\"."))
        // `register(AdvTrapBuilder.self) { ... }` with a closure that takes no model registers the model as a
        // plain type, which the build never finds: the test hint must use the builder form too.
        #expect(!output.contains("InjectionManager.register(AdvTrapBuilder.self) { ... }"), "\(output)")
    }
}
