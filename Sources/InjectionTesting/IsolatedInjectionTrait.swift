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
public struct IsolatedInjectionTrait: TestTrait, SuiteTrait, TestScoping {
    /// Registers what each test's container starts with, in that container.
    private let startingWith: (@Sendable () -> Void)?

    /// Creates the trait; usually written `.isolatedInjection`.
    public init() {
        startingWith = nil
    }

    /// Creates the trait with registrations each test starts with; usually written
    /// `.isolatedInjection(startingWith:)`.
    public init(startingWith register: @escaping @Sendable () -> Void) {
        startingWith = register
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
        let container = InjectionContainer(copying: InjectionManager.currentContainer, testName: "\"\(test.displayName ?? test.name)\"")
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
}
