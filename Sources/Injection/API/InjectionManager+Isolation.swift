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
    /// > wrap it in ``bound(_:)``, or capture `container` and call
    /// > ``InjectionContainer/resolve(_:isolation:)-(Value.Type,_)`` there.
    public static func withContainer<Result, Failure: Error>(
        _ container: InjectionContainer, operation: () throws(Failure) -> Result
    ) throws(Failure) -> Result { try Binding.withContainer(container, operation) }

    /// Returns `body` bound to the container that is current now: wherever and whenever it runs (a
    /// `DispatchQueue`, a `Thread`, a callback, after this scope has ended), its `Inject()` and
    /// `InjectionManager` calls act on that container.
    ///
    /// ```swift
    /// DispatchQueue.global().async(execute: InjectionManager.bound {
    ///     self.avatar = Inject((any AvatarAPI).self).fetch(user)
    /// })
    /// ```
    /// Tasks need none of this: a `Task` made in async code inherits the container. Work sent outside
    /// structured concurrency does not, and without `bound` resolves from the process-wide container: in a
    /// test, the live service instead of the test's mock. The closure keeps the container alive until it is
    /// released.
    public static func bound<Result>(_ body: @escaping @Sendable () -> Result) -> @Sendable () -> Result {
        let container = currentContainer
        return { withContainer(container, operation: body) }
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
        let binding = TaskBinding(Binding.binding(container))
        return try await TaskBinding.$current.withValue(binding, operation: operation, isolation: isolation)
    }
}
