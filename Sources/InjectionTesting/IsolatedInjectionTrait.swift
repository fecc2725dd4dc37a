public import Testing
@_exported import Injection

/// A Swift Testing trait that runs each test against its own copy of the process-wide registrations.
///
/// ```swift
/// @Suite(.isolatedInjection)
/// struct LoginTests {
///     @Test func logsIn() {
///         InjectionManager.register(API.self) { MockAPI(user: "a") }   // this test only
///         #expect(LoginViewModel().userName == "a")
///     }
/// }
/// ```
/// Each test gets a fresh `InjectionContainer(copying: InjectionManager.sharedContainer)`: the app's
/// launch registrations are visible, and nothing a test registers, resolves or resets leaks into
/// another test, so such tests can run in parallel.
public struct IsolatedInjectionTrait: TestTrait, SuiteTrait, TestScoping {
    /// Creates the trait; usually written `.isolatedInjection`.
    public init() {}

    /// Applies to every test in a suite, not once around the suite.
    public var isRecursive: Bool { true }

    /// Runs `function` with a fresh copy of the process-wide container bound to its task.
    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        let container = InjectionContainer(copying: InjectionManager.sharedContainer)
        try await InjectionManager.withContainer(container) {
            try await function()
        }
    }
}

extension Trait where Self == IsolatedInjectionTrait {
    /// Gives each test its own copy of the process-wide registrations; see ``IsolatedInjectionTrait``.
    public static var isolatedInjection: Self { Self() }
}
