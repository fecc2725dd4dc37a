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

    /// Whether a test that builds a service from the copied launch registrations, instead of registering its
    /// own, fails: one failure per type, naming the type and the test, and the test goes on with the instance,
    /// built in its own container. `false` unless a subclass overrides it, as Swift Testing's
    /// `.isolatedInjection(strict: true)` does. The failure is recorded on the test, with no source line (XCTest
    /// cannot tell where a test function is written), never at a line of this library.
    ///
    /// ```swift
    /// final class CheckoutTests: InjectionTestCase {
    ///     override class var strictIsolation: Bool { true }
    /// }
    /// ```
    open class var strictIsolation: Bool { false }

    /// Runs the test with a fresh copy of the process-wide container bound to it.
    override open func invokeTest() {
        // Recorded on the running test, at no line of this library: XCTest has no API, on Linux or Darwin, that
        // tells where a test function is written, and the report does not know which `Inject()` asked. The failure
        // names the test and the type; its location is `<unknown>:0`.
        let report: (@Sendable (String) -> Void)? = Self.strictIsolation ? { @Sendable message in
            XCTFail(message, file: "<unknown>", line: 0)
        } : nil
        container = InjectionContainer(copying: InjectionManager.sharedContainer, testName: name, strict: report)
        InjectionManager.withContainer(container) {
            super.invokeTest()
        }
    }
}
#endif
