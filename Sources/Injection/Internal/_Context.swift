import _InjectionAtomics

/// What the current task resolves against: the bound container, the chain being resolved, an open reset.
///
/// Stored in a task-local, so child tasks inherit it. Every live context is counted process-wide;
/// while the count is zero, ``active`` answers `nil` without the (comparatively slow) task-local read.
final class _Context: Sendable {
    /// The container `InjectionManager` acts on.
    let container: InjectionContainer
    /// The innermost factory being run, or `nil` outside factories.
    let frame: _Frame?
    /// The open `resetCurrentContainer { }` of `container`, if any.
    let transaction: _Transaction?

    init(container: InjectionContainer, frame: _Frame?, transaction: _Transaction?) {
        self.container = container
        self.frame = frame
        self.transaction = transaction
        _injection_context_count_add(1)
    }

    deinit {
        _injection_context_count_add(-1)
    }

    @TaskLocal static var current: _Context?

    /// The current context: the thread's synchronous scope, else the task-local one; skips the
    /// task-local read when no context exists anywhere in the process.
    static var active: _Context? {
        if let context = _ThreadState.current?._withUnsafeGuaranteedRef({ $0.context }) {
            return context.takeUnretainedValue()
        }
        return _injection_context_count() == 0 ? nil : current
    }

    /// Runs the synchronous `body` with `context` current: in the task-local (so tasks created in
    /// `body` inherit it) and in this thread's state (so resolves in `body` find it cheaply).
    static func withSyncScope<Result, Failure: Error>(
        _ context: _Context, _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let state = _ThreadState.currentOrNew
        let outer = state.context
        state.context = .passUnretained(context)
        defer { state.context = outer }
        return try withExtendedLifetime(context) { () throws(Failure) -> Result in
            let result: Swift.Result<Result, Failure> = $current.withValue(context) {
                do throws(Failure) { return .success(try body()) } catch { return .failure(error) }
            }
            return try result.get()
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

/// One factory being run: a link in the chain of types being resolved.
final class _Frame: Sendable {
    let container: ObjectIdentifier
    let key: ObjectIdentifier
    let typeName: String
    let parent: _Frame?
    /// The top-level resolution this frame belongs to.
    let resolver: _Resolver

    init(container: ObjectIdentifier, key: ObjectIdentifier, typeName: String, parent: _Frame?, resolver: _Resolver) {
        self.container = container
        self.key = key
        self.typeName = typeName
        self.parent = parent
        self.resolver = resolver
    }

    /// The type names from the outermost frame to this one.
    var chain: [String] {
        var names: [String] = []
        var frame: _Frame? = self
        while let current = frame {
            names.append(current.typeName)
            frame = current.parent
        }
        return names.reversed()
    }

    /// The type names from the frame that resolves `key` in `container` down to this one, or `nil`
    /// if no frame in the chain does.
    func chain(from key: ObjectIdentifier, in container: ObjectIdentifier) -> [String]? {
        var names: [String] = []
        var frame: _Frame? = self
        while let current = frame {
            names.append(current.typeName)
            if current.key == key && current.container == container { return names.reversed() }
            frame = current.parent
        }
        return nil
    }
}

/// The identity of one top-level resolution and of every factory it runs, for cross-thread cycle checks.
final class _Resolver: @unchecked Sendable {
    /// The build this resolution is blocked on and the frame that waits for it; guarded by `_WaitGraph.lock`.
    var waiting: (build: _Build, frame: _Frame?)?
}

/// A cached instance being built by one resolution while others wait for it.
final class _Build: Sendable {
    let owner: _Resolver
    let container: ObjectIdentifier
    let key: ObjectIdentifier
    let typeName: String
    /// The container's scope number when the build started.
    let scope: UInt64

    init(owner: _Resolver, container: ObjectIdentifier, key: ObjectIdentifier, typeName: String, scope: UInt64) {
        self.owner = owner
        self.container = container
        self.key = key
        self.typeName = typeName
        self.scope = scope
    }
}

/// Who waits for whose build, process-wide, so a wait that would close a loop is refused as a cycle.
enum _WaitGraph {
    private static let lock = _Lock()

    /// Records that `resolver` (running `frame`) waits for `build`, or returns the cycle path if waiting
    /// would deadlock because `build`'s owner is, through other waits, waiting for `resolver`.
    static func beginWaiting(_ resolver: _Resolver, frame: _Frame?, for build: _Build) -> [String]? {
        lock.withLock {
            // Walk owner → the build it waits for → that build's owner ..., collecting each owner's
            // chain from the type it builds down to the frame that waits.
            var path: [String] = []
            var wanted = build
            while true {
                let owner = wanted.owner
                if owner === resolver {
                    path += frame?.chain(from: wanted.key, in: wanted.container) ?? [wanted.typeName]
                    path.append(build.typeName)
                    return path
                }
                guard let (next, ownerFrame) = owner.waiting else { break }
                path += ownerFrame?.chain(from: wanted.key, in: wanted.container) ?? [wanted.typeName]
                wanted = next
            }
            resolver.waiting = (build, frame)
            return nil
        }
    }

    /// Clears the wait recorded by ``beginWaiting(_:frame:for:)``.
    static func endWaiting(_ resolver: _Resolver) {
        lock.withLock { resolver.waiting = nil }
    }
}
