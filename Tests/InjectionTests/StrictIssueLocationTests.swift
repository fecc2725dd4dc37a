import Injection
import InjectionTesting
import Testing
#if canImport(XCTest)
import XCTest
#endif

// A strict test's failure (a service built from the launch registrations instead of a mock) points at the test,
// never inside the library, so an IDE shows it on the test: Swift Testing's issue is recorded at the test
// function; XCTest's failure is recorded on the test with no source line (XCTest cannot tell where a test is
// written), never at a line under Sources/.

private final class LocatedLaunchService: Sendable {}
private final class LocatedXCLaunchService: Sendable {}

/// The app's launch registrations, as these tests see them: a container of their own, bound around the trait's
/// scope as the copy's source, so the process-wide container is not touched.
private let launchContainer: InjectionContainer = {
    let container = InjectionContainer()
    container.register(LocatedLaunchService.self) { LocatedLaunchService() }
    return container
}()

@Suite("A strict test's issue points at the test")
struct StrictIssueLocationTests {
    @Test("a forgotten mock in a strict test is recorded at the test function, not in the library")
    func issueIsRecordedAtTheTestFunction() async throws {
        let test = try #require(Test.current)
        let recorded = Collector<Issue>()
        // One known issue: the strict report, recorded as `.isolatedInjection(strict: true)` records it for `test`.
        try await withKnownIssue {
            try await InjectionManager.withContainer(launchContainer) {
                try await IsolatedInjectionTrait.isolatedInjection(strict: true).provideScope(
                    for: test, testCase: Test.Case.current
                ) {
                    _ = Inject(LocatedLaunchService.self)
                }
            }
        } matching: { issue in
            recorded.append(issue)
            return true
        }
        #expect(recorded.values.count == 1, "\(recorded.values)")
        let issue = try #require(recorded.values.first)
        #expect(issue.comments.contains { $0.rawValue.hasPrefix("Injection: LocatedLaunchService") }, "\(issue)")
        let location = try #require(issue.sourceLocation)
        #expect(!location.filePath.contains("/Sources/"), "the issue points into the library: \(location)")
        #expect(location == test.sourceLocation, "not the test function: \(location)")
    }
}

#if canImport(XCTest)
/// `strictIsolation`: the failure is caught here, with the file and line XCTest was given for it.
final class StrictIssueLocationXCTests: InjectionTestCase {
    override class var strictIsolation: Bool { true }
    private var failures: [(description: String, file: String, line: Int)] = []

    override func invokeTest() {
        InjectionManager.sharedContainer.register(LocatedXCLaunchService.self) { LocatedXCLaunchService() }   // "at launch"
        defer { InjectionManager.sharedContainer.unregister(LocatedXCLaunchService.self) }
        super.invokeTest()
    }

    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
        guard description.contains("Injection: LocatedXCLaunchService") else {
            return super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
        }
        failures.append((description, filePath, lineNumber))
    }

    func testAStrictFailureIsRecordedOnTheTestNotInTheLibrary() {
        _ = Inject(LocatedXCLaunchService.self)
        XCTAssertEqual(failures.count, 1, "\(failures)")
        let file = failures.first?.file ?? ""
        XCTAssertFalse(file.contains("Sources/"), "the failure points into the library: \(file)")
        XCTAssertFalse(file.hasSuffix(".swift"), "no file of this library or of the test was given: \(file)")
    }
}
#endif
