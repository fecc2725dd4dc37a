public import Testing
@_exported import Injection

/// A Swift Testing trait that runs each test against its own copy of the process-wide registrations.
///
/// ```swift
/// @Suite(.isolatedInjection)
/// struct LoginTests {
///     @Test func logsIn() {
///         InjectionManager.register((any API).self) { MockAPI(user: "a") }   // this test only
///         #expect(LoginViewModel().userName == "a")
///     }
/// }
/// ```
/// Each test gets a fresh `InjectionContainer(copying: InjectionManager.sharedContainer)`: the app's
/// launch registrations are visible, and nothing a test registers, resolves or resets leaks into
/// another test, so such tests can run in parallel.
///
/// A test that traps in `Inject()` names itself in the message, with how to register the missing mock.
/// `.isolatedInjection(startingWith: registerLiveServices)` starts each test's container with the
/// registrations that function makes, so a test registers only what it mocks.
///
/// `.isolatedInjection(strict: true)` also fails a test that builds a service from the copied launch
/// registrations (directly, or as a dependency of what it builds) instead of registering its own: one recorded
/// issue per type, naming the type and the test, and the test goes on with the instance, built in its own
/// container. What the test registers, or its own or its suite's `startingWith:` registers, is its own. The issue
/// is recorded at the test function, so Xcode shows it on the test.
public struct IsolatedInjectionTrait: TestTrait, SuiteTrait, TestScoping {
    /// Registers what each test's container starts with, in that container.
    private let startingWith: (@Sendable () -> Void)?
    /// Whether a build from the launch registrations records an issue.
    private let strict: Bool

    /// Creates the trait; usually written `.isolatedInjection` or `.isolatedInjection(strict: true)`.
    public init(strict: Bool = false) {
        startingWith = nil
        self.strict = strict
    }

    /// Creates the trait with registrations each test starts with; usually written
    /// `.isolatedInjection(startingWith:)`.
    public init(startingWith register: @escaping @Sendable () -> Void, strict: Bool = false) {
        startingWith = register
        self.strict = strict
    }

    /// Applies to every test in a suite, not once around the suite.
    public var isRecursive: Bool { true }

    /// Runs `function` with a fresh copy of the process-wide container bound to its task.
    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        // A copy of the current container: the process-wide one, or, when a suite's trait and a test's own
        // both apply, the suite's copy, so the test keeps what the suite's `startingWith:` registered.
        // A strict test's issue points at the test function, never at this file: where the test is, Xcode shows it.
        let report: (@Sendable (String) -> Void)? = strict ? { @Sendable message in
            Issue.record(Comment(rawValue: message), sourceLocation: test.sourceLocation)
        } : nil
        let container = InjectionContainer(
            copying: InjectionManager.currentContainer, testName: "\"\(test.displayName ?? test.name)\"", strict: report)
        try await InjectionManager.withContainer(container) {
            startingWith?()
            try await function()
        }
    }
}

extension Trait where Self == IsolatedInjectionTrait {
    /// Gives each test its own copy of the process-wide registrations; see ``IsolatedInjectionTrait``.
    public static var isolatedInjection: Self { Self() }

    /// Gives each test its own copy of the process-wide registrations, plus the ones `register` makes.
    ///
    /// ```swift
    /// @Suite(.isolatedInjection(startingWith: registerLiveServices))
    /// struct ProfileTests {
    ///     @Test func showsName() {
    ///         InjectionManager.register((any API).self) { MockAPI() }   // overrides only the API
    ///         #expect(ProfileViewModel().title == "mock")
    ///     }
    /// }
    /// ```
    public static func isolatedInjection(startingWith register: @escaping @Sendable () -> Void) -> Self {
        Self(startingWith: register)
    }

    /// Gives each test its own copy of the process-wide registrations; with `strict`, a test that builds a
    /// service from them instead of registering its own fails with an issue (see ``IsolatedInjectionTrait``).
    ///
    /// ```swift
    /// @Suite(.isolatedInjection(strict: true))
    /// struct CheckoutTests { ... }   // a forgotten mock is a failed test, not a call to the live service
    /// ```
    public static func isolatedInjection(strict: Bool) -> Self { Self(strict: strict) }

    /// ``isolatedInjection(startingWith:)``, with `strict` as in ``isolatedInjection(strict:)``: what `register`
    /// registers is the test's own.
    public static func isolatedInjection(
        startingWith register: @escaping @Sendable () -> Void, strict: Bool
    ) -> Self {
        Self(startingWith: register, strict: strict)
    }
}
