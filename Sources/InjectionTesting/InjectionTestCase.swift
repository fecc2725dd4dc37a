#if canImport(XCTest)
@_exported import Injection
import XCTest

/// An `XCTestCase` whose every test runs against its own copy of the process-wide registrations.
///
/// Subclass it instead of `XCTestCase`; `register` and `Inject()` in a test then act on ``container``,
/// a fresh `InjectionContainer(copying: InjectionManager.sharedContainer)` per test, and nothing leaks
/// into the next test. A test that traps in `Inject()` names itself in the message.
///
/// ```swift
/// final class LoginTests: InjectionTestCase {
///     func testLogsIn() {
///         InjectionManager.register((any API).self) { MockAPI(user: "a") }
///         XCTAssertEqual(LoginViewModel().userName, "a")
///     }
/// }
/// ```
///
/// If your tests already inherit from another base class, wrap the test instead: override
/// `invokeTest()` and call `InjectionManager.withContainer(InjectionContainer(copying:
/// InjectionManager.sharedContainer)) { super.invokeTest() }`.
open class InjectionTestCase: XCTestCase {
    /// The container the running test resolves from; a new one for every test.
    public private(set) var container = InjectionContainer()

    /// Runs the test with a fresh copy of the process-wide container bound to it.
    override open func invokeTest() {
        container = InjectionContainer(copying: InjectionManager.sharedContainer, testName: name)
        InjectionManager.withContainer(container) {
            super.invokeTest()
        }
    }
}
#endif
