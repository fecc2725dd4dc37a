import Foundation
import Injection
import InjectionTesting
import Testing

// The two silent mistakes get a voice: re-registering a type that cached instances depend on, and a trap
// inside a test that does not say which test.

private final class StaleUserSession: Sendable {}
private final class StaleFeedRepository: Sendable {
    let session: StaleUserSession
    init(session: StaleUserSession = Inject()) { self.session = session }
}
private final class StaleUnrelated: Sendable {}

/// What the suite below starts each test with.
@Sendable private func registerStartingServices() {
    InjectionManager.register(StaleUnrelated.self) { StaleUnrelated() }
}

/// A container whose cached `StaleFeedRepository` holds its `StaleUserSession`.
private func containerWithACachedDependent() throws -> InjectionContainer {
    let container = InjectionContainer()
    container.register(StaleUserSession.self) { StaleUserSession() }
    container.register(StaleFeedRepository.self) { StaleFeedRepository() }
    _ = try InjectionManager.withContainer(container) { () throws(InjectionError) in
        try InjectionManager.resolve(StaleFeedRepository.self)
    }
    return container
}

@Suite("Mistakes get a voice", .serialized)
struct MistakeReportTests {
    @Test("re-registering a type that cached instances hold is reported once, naming them and the fix")
    func reRegistrationIsReported() throws {
        try withRecordedDiagnostics { lines in
            let container = try containerWithACachedDependent()
            container.register(StaleUserSession.self) { StaleUserSession() }   // the forgotten reset
            let reports = lines.about("StaleUserSession")
            #expect(reports.count == 1)
            let report = try #require(reports.first)
            #expect(report.hasPrefix("Injection: StaleUserSession was registered again"))
            #expect(report.contains("StaleFeedRepository"))
            #expect(report.contains("resetCurrentContainer { register(StaleUserSession.self) { ... } }"))

            _ = try container.resolve(StaleUserSession.self)
            container.register(StaleUserSession.self) { StaleUserSession() }
            #expect(lines.about("StaleUserSession").count == 1, "once per type")
        }
    }

    @Test("inside resetCurrentContainer { }, or with nothing cached that depends on it, nothing is reported")
    func correctReRegistrationIsSilent() throws {
        try withRecordedDiagnostics { lines in
            let container = try containerWithACachedDependent()
            container.resetCurrentContainer {
                container.register(StaleUserSession.self) { StaleUserSession() }
            }
            _ = try container.resolve(StaleUserSession.self)
            container.register(StaleUserSession.self) { StaleUserSession() }   // nothing holds the old one now
            #expect(lines.about("StaleUserSession").isEmpty)
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
