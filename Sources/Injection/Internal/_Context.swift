import _InjectionPlatform

/// What the current task resolves against: the bound container, the chain being resolved, an open reset.
///
/// Stored in a task-local, so child tasks inherit it. Every live task-local context is counted
/// process-wide; while the count is zero, ``active`` answers `nil` without the (comparatively slow)
/// task-local read. Synchronous scopes also publish a `_Scope` in the thread's state, which the hot
/// path reads first.
final class _Context: Sendable {
    /// The container `InjectionManager` acts on.
    let container: InjectionContainer
    /// The innermost factory being run, or `nil` outside factories.
    let frame: _Frame?
    /// The open `resetCurrentContainer { }` of `container`, if any.
    let transaction: _Transaction?
    /// Whether this context counts toward the process-wide count: only contexts a task-local can hold.
    private let isCounted: Bool

    /// Creates a context; `isTaskLocal: false` for a snapshot of a thread's scope.
    init(container: InjectionContainer, frame: _Frame?, transaction: _Transaction?, isTaskLocal: Bool = true) {
        self.container = container
        self.frame = frame
        self.transaction = transaction
        self.isCounted = isTaskLocal
        if isTaskLocal { _injection_context_count_add(1) }
    }

    deinit {
        if isCounted { _injection_context_count_add(-1) }
    }

    @TaskLocal static var current: _Context?

    /// The current context: the thread's synchronous scope, else the task-local one; skips the
    /// task-local read when no context exists anywhere in the process.
    static var active: _Context? {
        if let scope = _ThreadState.current?._withUnsafeGuaranteedRef({ $0.scope }) {
            return _Context(container: scope.container, frame: scope.frame, transaction: scope.transaction, isTaskLocal: false)
        }
        return _injection_context_count() == 0 ? nil : current
    }

    /// The innermost open `resetCurrentContainer { }` the current code runs in (see `_Transaction.outer`
    /// for the ones around it), without allocating a context.
    static var transaction: _Transaction? {
        if let scope = _ThreadState.current?._withUnsafeGuaranteedRef({ $0.scope }) { return scope.transaction }
        return _injection_context_count() == 0 ? nil : current?.transaction
    }

    /// The frame a resolve made now runs under, and whether that resolve must start a resolution of
    /// its own (the frame came through the task-local from another task; see `_Frame.isForeignToCurrentTask`).
    static var parent: (frame: _Frame?, startsRoot: Bool) {
        if let scope = _ThreadState.current?._withUnsafeGuaranteedRef({ $0.scope }) { return (scope.frame, false) }
        guard _injection_context_count() != 0, let frame = current?.frame else { return (nil, false) }
        return (frame, frame.isForeignToCurrentTask)
    }

    /// Runs the synchronous `body` with `context` current: in the task-local (so tasks created in
    /// `body` inherit it) and in this thread's state (so resolves in `body` find it cheaply).
    static func withSyncScope<Result, Failure: Error>(
        _ context: _Context, _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try withExtendedLifetime(context) { () throws(Failure) -> Result in
            try withThreadScope(_Scope(container: context.container, frame: context.frame, transaction: context.transaction)) {
                () throws(Failure) -> Result in
                let result: Swift.Result<Result, Failure> = $current.withValue(context) {
                    do throws(Failure) { return .success(try body()) } catch { return .failure(error) }
                }
                return try result.get()
            }
        }
    }

    /// Runs the synchronous `body` with `scope` current in this thread's state only: for factories,
    /// which run often. Tasks a factory creates inherit the caller's task-local context instead.
    /// The caller keeps the scope's objects alive.
    @inline(__always)
    static func withThreadScope<Result, Failure: Error>(
        _ scope: _Scope, _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try _ThreadState.withCurrent { state throws(Failure) -> Result in
            let outer = state.scope
            state.scope = scope
            defer { state.scope = outer }
            return try body()
        }
    }

    /// Runs `body` with a context that keeps the current one's chain and open reset but binds `container`.
    static func withContainer<Result, Failure: Error>(
        _ container: InjectionContainer, _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let outer = active
        let context = _Context(container: container, frame: outer?.frame, transaction: outer?.transaction)
        return try withSyncScope(context, body)
    }
}

/// A synchronous scope as a thread publishes it: unretained references, kept alive by whoever opened it.
///
/// The chain is either a frame or, while a transient runs from the thread's cache, a `_Link` on the
/// stack of the call that runs it (see `_Link`).
struct _Scope {
    private let _container: Unmanaged<InjectionContainer>
    private let _frame: Unmanaged<_Frame>?
    private let _link: UnsafeMutablePointer<_Link>?
    private let _transaction: Unmanaged<_Transaction>?

    init(container: InjectionContainer, frame: _Frame?, transaction: _Transaction?) {
        _container = .passUnretained(container)
        _frame = frame.map { .passUnretained($0) }
        _link = nil
        _transaction = transaction.map { .passUnretained($0) }
    }

    /// The scope of a transient's factory run from the cache, inside the open reset blocks of
    /// `transaction` (never its own container's: resolving that one inside its block is refused first).
    init(container: InjectionContainer, link: UnsafeMutablePointer<_Link>, transaction: _Transaction?) {
        _container = .passUnretained(container)
        _frame = nil
        _link = link
        _transaction = transaction.map { .passUnretained($0) }
    }

    var container: InjectionContainer { _container.takeUnretainedValue() }
    /// The container, when the scope holds nothing else (no chain, no open reset): a sync `withContainer`.
    var containerAlone: Unmanaged<InjectionContainer>? {
        _frame == nil && _link == nil && _transaction == nil ? _container : nil
    }
    /// The innermost frame; a link's frame is made on first use.
    var frame: _Frame? { _link?.frame ?? _frame?.takeUnretainedValue() }
    var transaction: _Transaction? { _transaction?.takeUnretainedValue() }

    /// Resolves in the scope's container with its chain, borrowing the references instead of
    /// retaining them: every resolve inside a factory goes through here. (A scope that holds only a
    /// container takes the process-wide path instead; see `containerAlone`.)
    @inline(__always)
    func resolve<Value>(
        _ requested: _AnyType, as _: Value.Type, threadState: Unmanaged<_ThreadState>?, caller: (any Actor)?
    ) throws(InjectionError) -> Value {
        do {
            return try _container._withUnsafeGuaranteedRef { container in
                if let link = _link {
                    return try container._resolve(
                        requested, as: Value.self, link: link, transaction: transaction, threadState: threadState, caller: caller)
                }
                guard _transaction == nil, let frame = _frame else {
                    return try container._resolve(
                        requested, as: Value.self, frame: self.frame, transaction: transaction,
                        threadState: threadState, caller: caller)
                }
                return try frame._withUnsafeGuaranteedRef { frame in
                    try container._resolve(
                        requested, as: Value.self, frame: frame, transaction: nil, threadState: threadState, caller: caller)
                }
            }
        } catch {
            throw error as! InjectionError  // `_withUnsafeGuaranteedRef` rethrows untyped; `_resolve` throws only this.
        }
    }
}
