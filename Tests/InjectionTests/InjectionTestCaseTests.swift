#if canImport(XCTest)
import Injection
import InjectionTesting
import XCTest

private final class FirstOnly: Sendable {}
private final class SecondOnly: Sendable {}

/// XCTest runs these one after the other; whichever runs second proves the first left nothing behind.
final class InjectionTestCaseTests: InjectionTestCase {
    func testFirstRegistersItsOwnService() throws {
        XCTAssertTrue(InjectionManager.currentContainer === container)
        XCTAssertFalse(InjectionManager.isRegistered(SecondOnly.self))
        InjectionManager.register(FirstOnly.self) { FirstOnly() }
        let first = try InjectionManager.resolve(FirstOnly.self)
        XCTAssertTrue(try InjectionManager.resolve(FirstOnly.self) === first, "the test's container caches its own instance")
        XCTAssertFalse(InjectionManager.sharedContainer.isRegistered(FirstOnly.self))
    }

    func testSecondRegistersItsOwnService() throws {
        XCTAssertTrue(InjectionManager.currentContainer === container)
        XCTAssertFalse(InjectionManager.isRegistered(FirstOnly.self))
        InjectionManager.register(SecondOnly.self) { SecondOnly() }
        let second = try InjectionManager.resolve(SecondOnly.self)
        XCTAssertTrue(try InjectionManager.resolve(SecondOnly.self) === second, "the test's container caches its own instance")
        XCTAssertFalse(InjectionManager.sharedContainer.isRegistered(SecondOnly.self))
    }

    func testTheContainerKnowsTheTestItWasMadeFor() {
        XCTAssertEqual(container.testName, name, "a trap in this test names it")
    }

    func testStrictIsolationIsOffByDefault() {
        XCTAssertFalse(Self.strictIsolation)
    }

    func testAsyncTestsSeeTheContainerToo() async throws {
        InjectionManager.register(FirstOnly.self) { FirstOnly() }
        let fromChild = await Task { InjectionManager.isRegistered(FirstOnly.self) }.value
        XCTAssertTrue(fromChild)
    }
}

private final class StrictXCLaunch: Sendable {}
private final class StrictXCOwn: Sendable {}

/// `strictIsolation`: building a launch service fails the test once per type; the failures are caught here.
final class StrictInjectionTestCaseTests: InjectionTestCase {
    override class var strictIsolation: Bool { true }
    private var strictFailures: [String] = []

    override func invokeTest() {
        InjectionManager.sharedContainer.register(StrictXCLaunch.self) { StrictXCLaunch() }   // "at launch"
        super.invokeTest()
    }

    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
        guard description.contains("Injection: StrictXCLaunch") else {
            return super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
        }
        strictFailures.append(description)
    }

    func testBuildingALaunchServiceFailsOncePerType() throws {
        let first = try InjectionManager.resolve(StrictXCLaunch.self)   // the throwing API returns it
        XCTAssertTrue(Inject(StrictXCLaunch.self) === first)
        XCTAssertEqual(strictFailures.count, 1, "\(strictFailures)")
        XCTAssertTrue(strictFailures.first?.contains(name) == true, "names the test")
    }

    func testOwnRegistrationIsQuiet() {
        InjectionManager.register(StrictXCLaunch.self) { StrictXCLaunch() }
        InjectionManager.register(StrictXCOwn.self) { StrictXCOwn() }
        _ = Inject(StrictXCLaunch.self)
        _ = Inject(StrictXCOwn.self)
        XCTAssertEqual(strictFailures, [])
    }
}
#endif
