/// One factory being run: a link in the chain of types being resolved.
final class _Frame: Sendable {
    let container: ObjectIdentifier
    let key: ObjectIdentifier
    /// The requested type: the registered type, or the `InjectionKey` type.
    let type: _AnyType
    let parent: _Frame?
    /// The top-level resolution this frame belongs to.
    let resolver: _Resolver

    init(container: ObjectIdentifier, key: ObjectIdentifier, type: _AnyType, parent: _Frame?, resolver: _Resolver) {
        self.container = container
        self.key = key
        self.type = type
        self.parent = parent
        self.resolver = resolver
    }

    /// The types from the outermost frame to this one.
    var chain: [_AnyType] {
        var types: [_AnyType] = []
        var frame: _Frame? = self
        while let current = frame {
            types.append(current.type)
            frame = current.parent
        }
        return types.reversed()
    }

    /// The types from the frame that resolves `key` in `container` down to this one, or `nil` if no
    /// frame in the chain does.
    func chain(from key: ObjectIdentifier, in container: ObjectIdentifier) -> [_AnyType]? {
        var types: [_AnyType] = []
        var frame: _Frame? = self
        while let current = frame {
            types.append(current.type)
            if current.key == key && current.container == container { return types.reversed() }
            frame = current.parent
        }
        return nil
    }
}

/// The identity of one top-level resolution and of every factory it runs, for cross-thread cycle checks.
final class _Resolver: @unchecked Sendable {
    /// The build this resolution is blocked on and the frame that waits for it; guarded by `_WaitGraph`.
    var waiting: (build: _Build, frame: _Frame?)?
    /// `postConstruction` calls deferred until the top-level resolve has built and cached everything,
    /// so a back-reference to any type of the graph finds it. Touched only by the resolving thread.
    var deferred: [() -> Result<_Box, InjectionError>] = []
}
