/// One factory being run: a link in the chain of types being resolved.
///
/// The outermost frame of a resolution (its `root`) also stands for the whole resolution: it owns
/// the builds started under it, is what the wait-for graph follows, and collects the deferred
/// `postConstruction` calls.
final class _Frame: @unchecked Sendable {
    let container: ObjectIdentifier
    let key: _TypeID
    /// The requested type: the registered type, or the `InjectionKey` type.
    let type: _AnyType
    let parent: _Frame?
    /// `parent`, to walk the chain without retaining it.
    let unretainedParent: Unmanaged<_Frame>?
    /// Whether what this factory resolves is recorded in `dependencies`, for the graph.
    let recordsEdges: Bool
    /// What this factory resolved from `container`. Touched only by the thread running the factory.
    var dependencies: [_AnyType] = []
    /// Whether this frame starts a resolution of its own (an async resolve's build, or a resolve from
    /// another task than the one running `parent`), though it has a parent for the chain: the wait-for
    /// graph and deferred work stop here.
    let isTaskRoot: Bool
    /// The container's scope when this frame's resolution started: builds under it belong to that scope.
    let scope: UInt64
    /// For an async construction's frame, the task running it (set once, before the factory runs);
    /// `nil` for synchronous frames, which only their own thread sees through its scope.
    var ownerTask: Int?

    // MARK: Root frames only

    /// The build this resolution is blocked on and the frame that waits for it; guarded by `_WaitGraph`.
    var waiting: (build: _Build, frame: _Frame)?
    /// `postConstruction` calls deferred until the top-level resolve has built and cached everything,
    /// so a back-reference to any type of the graph finds it. Touched only by the resolving thread.
    var deferred: [() -> Result<_Box, InjectionError>] = []
    /// Evicts what nested frames of this resolution built and cached, should a deferred
    /// `postConstruction` fail. Touched only by the resolving thread.
    var evictions: [() -> Void] = []

    /// A frame for resolving `key` in `container`; `scope` is used only when it starts a resolution
    /// (it has no parent, or `isTaskRoot`): a nested frame keeps its resolution's scope.
    init(
        container: ObjectIdentifier, key: _TypeID, type: _AnyType, parent: _Frame?, recordsEdges: Bool,
        isTaskRoot: Bool = false, scope: UInt64
    ) {
        self.container = container
        self.key = key
        self.type = type
        self.parent = parent
        self.unretainedParent = parent.map { .passUnretained($0) }
        self.recordsEdges = recordsEdges
        self.isTaskRoot = isTaskRoot
        let inherits = !isTaskRoot && parent?.container == container
        self.scope = inherits ? parent!.scope : scope
    }

    /// Whether a resolve by the current task under this frame must start a resolution of its own:
    /// the frame reached it through a task-local (a child of an async factory, a task started inside a
    /// factory), so other tasks may be using it at the same time.
    var isForeignToCurrentTask: Bool {
        guard let ownerTask else { return true }
        return ownerTask != _currentTaskID()
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
    /// Walks the chain without retaining it (each frame keeps its parent alive).
    @inline(__always)
    func contains(_ key: _TypeID, in container: ObjectIdentifier) -> Bool {
        var frame: Unmanaged<_Frame>? = .passUnretained(self)
        while let current = frame {
            let (matches, parent) = current._withUnsafeGuaranteedRef {
                ($0.key == key && $0.container == container, $0.unretainedParent)
            }
            if matches { return true }
            frame = parent
        }
        return false
    }

    /// The types from the frame that resolves `key` in `container` down to this one, or `nil` if no
    /// frame in the chain does.
    func chain(from key: _TypeID, in container: ObjectIdentifier) -> [_AnyType]? {
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

/// A transient factory being run from this thread's cache: a link in the chain, kept on the stack.
///
/// Building a graph of transients is the hot path that frames would slow down most (an allocation and
/// reference counting per object), so the fast path pushes a `_Link` instead, and turns it into a
/// `_Frame` only when something needs one: a nested resolve that takes the slow path, an error's
/// chain, or a context that outlives the call (see ``UnsafeMutablePointer/frame``).
struct _Link {
    let container: ObjectIdentifier
    let key: _TypeID
    /// The requested type: the registered type, or the `InjectionKey` type.
    let type: _AnyType
    /// The link of the factory that resolved this one, when that one ran from the cache too.
    let parentLink: UnsafeMutablePointer<_Link>?
    /// Otherwise the frame of the factory that resolved this one, if any (kept alive by its caller).
    let parentFrame: Unmanaged<_Frame>?
    /// As `_Frame.isTaskRoot`.
    let isTaskRoot: Bool
    /// As `_Frame.scope`: the container's scope when this link's resolution started.
    let scope: UInt64
    /// The frame standing for this link, once one was needed; the same one every time. Retained;
    /// released when the link is popped (an unmanaged reference keeps `_Link` trivial to copy and drop).
    var frame: Unmanaged<_Frame>?
}

extension UnsafeMutablePointer where Pointee == _Link {
    /// The frame standing for this link, made (with its parents') on first use.
    var frame: _Frame {
        if let frame = pointee.frame { return frame.takeUnretainedValue() }
        let parent = pointee.parentLink?.frame ?? pointee.parentFrame?.takeUnretainedValue()
        let frame = _Frame(
            container: pointee.container, key: pointee.key, type: pointee.type, parent: parent, recordsEdges: false,
            isTaskRoot: pointee.isTaskRoot, scope: pointee.scope)
        pointee.frame = .passRetained(frame)
        return frame
    }

    /// The link's frame if one was made.
    var madeFrame: _Frame? { pointee.frame?.takeUnretainedValue() }

    /// Whether a link or frame in the chain resolves `key` in `container`, as `_Frame.contains`.
    @inline(__always)
    func contains(_ key: _TypeID, in container: ObjectIdentifier) -> Bool {
        var link = self
        while true {
            if link.pointee.key == key && link.pointee.container == container { return true }
            if let parent = link.pointee.parentLink {
                link = parent
            } else {
                return link.pointee.parentFrame?._withUnsafeGuaranteedRef { $0.contains(key, in: container) } ?? false
            }
        }
    }
}

/// An identity for the current task (0 outside tasks), to tell whether a frame is the current task's own.
func _currentTaskID() -> Int {
    withUnsafeCurrentTask { $0?.hashValue ?? 0 }
}
