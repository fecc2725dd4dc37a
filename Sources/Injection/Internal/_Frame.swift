/// One factory being run: a link in the chain of types being resolved.
///
/// The outermost frame of a resolution (its `root`) also stands for the whole resolution: it owns
/// the builds started under it, is what the wait-for graph follows, and collects the deferred
/// `postConstruction` calls.
final class _Frame: @unchecked Sendable {
    let container: ObjectIdentifier
    let key: ObjectIdentifier
    /// The requested type: the registered type, or the `InjectionKey` type.
    let type: _AnyType
    let parent: _Frame?
    /// Whether what this factory resolves is recorded in `dependencies`, for the graph.
    let recordsEdges: Bool
    /// What this factory resolved from `container`. Touched only by the thread running the factory.
    var dependencies: [_AnyType] = []
    /// Whether this frame starts a resolution of its own (an async resolve's build), though it has a
    /// parent for the chain: the wait-for graph and deferred work stop here.
    let isTaskRoot: Bool

    // MARK: Root frames only

    /// The build this resolution is blocked on and the frame that waits for it; guarded by `_WaitGraph`.
    var waiting: (build: _Build, frame: _Frame)?
    /// `postConstruction` calls deferred until the top-level resolve has built and cached everything,
    /// so a back-reference to any type of the graph finds it. Touched only by the resolving thread.
    var deferred: [() -> Result<_Box, InjectionError>] = []

    init(
        container: ObjectIdentifier, key: ObjectIdentifier, type: _AnyType, parent: _Frame?, recordsEdges: Bool,
        isTaskRoot: Bool = false
    ) {
        self.container = container
        self.key = key
        self.type = type
        self.parent = parent
        self.recordsEdges = recordsEdges
        self.isTaskRoot = isTaskRoot
    }

    /// The outermost frame of this resolution.
    var root: _Frame {
        var frame = self
        while !frame.isTaskRoot, let parent = frame.parent { frame = parent }
        return frame
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

    /// Whether a frame in the chain resolves `key` in `container`: would resolving it again be a cycle.
    @inline(__always)
    func contains(_ key: ObjectIdentifier, in container: ObjectIdentifier) -> Bool {
        var frame: _Frame? = self
        while let current = frame {
            if current.key == key && current.container == container { return true }
            frame = current.parent
        }
        return false
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
