// MARK: - Binding a container to a task

extension InjectionManager {
    /// Runs `operation` with `container` as the ``currentContainer`` of the current task.
    ///
    /// Every `InjectionManager` call and every `Inject()` made by `operation`, directly or through the
    /// objects it creates, acts on `container`; the process-wide container is untouched.
    ///
    /// ```swift
    /// let container = InjectionContainer()
    /// InjectionManager.withContainer(container) {
    ///     InjectionManager.register((any API).self) { MockAPI() }
    ///     let viewModel = ViewModel()          // its `let api: any API = Inject()` gets MockAPI
    /// }
    /// ```
    ///
    /// > Warning: The binding is task-local. Child tasks inherit it, but work sent elsewhere outside
    /// > structured concurrency (`DispatchQueue.async`, `Thread`) sees the process-wide container:
    /// > capture `container` and call ``InjectionContainer/resolve(_:isolation:)-(Value.Type,_)`` there, or bind it again.
    public static func withContainer<Result, Failure: Error>(
        _ container: InjectionContainer, operation: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try Binding.withContainer(container, operation)
    }

    /// Runs the async `operation` with `container` as the ``currentContainer`` of the current task
    /// and every child task it creates.
    ///
    /// ```swift
    /// await InjectionManager.withContainer(container) {
    ///     await flow.run()
    /// }
    /// ```
    /// The operation runs on the caller's actor (`isolation`), so binding a container never hops.
    public static func withContainer<Result>(
        _ container: InjectionContainer, isolation: isolated (any Actor)? = #isolation,
        operation: () async throws -> Result
    ) async rethrows -> Result {
        let binding = TaskBinding(container, inside: Binding.current)
        return try await TaskBinding.$current.withValue(binding, operation: operation, isolation: isolation)
    }
}
