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

    func testAsyncTestsSeeTheContainerToo() async throws {
        InjectionManager.register(FirstOnly.self) { FirstOnly() }
        let fromChild = await Task { InjectionManager.isRegistered(FirstOnly.self) }.value
        XCTAssertTrue(fromChild)
    }
}
#endif
