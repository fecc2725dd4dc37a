/// A cached instance being built by one resolution while others wait for it.
///
/// Threads wait on the container's condition; tasks suspend in `asyncWaiters` instead of blocking a
/// thread. Both are woken when the build finishes, even if a reset abandoned it meanwhile.
final class _Build: @unchecked Sendable {
    /// The root frame of the resolution building it.
    let owner: _Frame
    let container: ObjectIdentifier
    let key: _TypeID
    let type: _AnyType
    /// The container's scope number when the build started.
    let scope: UInt64
    /// Guarded by the container's lock.
    var isFinished = false
    /// Whether a resolution was ever told to wait for this build (so it may be in the wait-for graph);
    /// guarded by the container's lock.
    var hasWaiters = false
    /// Tasks waiting for this build; guarded by the container's lock.
    var asyncWaiters: [CheckedContinuation<Void, Never>] = []
    /// The same as `isFinished`, guarded by `_WaitGraph`'s lock: a waiter's edge to a finished build is
    /// stale (it is about to wake) and must not make a cycle.
    fileprivate var isFinishedInGraph = false

    init(owner: _Frame, container: ObjectIdentifier, key: _TypeID, type: _AnyType, scope: UInt64) {
        self.owner = owner
        self.container = container
        self.key = key
        self.type = type
        self.scope = scope
    }
}

/// Who waits for whose build, process-wide, so a wait that would close a loop is refused as a cycle.
enum _WaitGraph {
    private static let lock = _Lock()

    /// Records that the resolution running `frame` waits for `build`, or returns the cycle path if
    /// waiting would deadlock because `build`'s owner is, through other waits, waiting for it.
    ///
    /// A cycle is reported only if the chain of waits closes now: every build on it is still unfinished.
    /// A build that finished is an edge about to go away (its waiters are waking), `build` included: the
    /// caller was told to wait under the container's lock, but the build may have finished since.
    static func beginWaiting(_ frame: _Frame, for build: _Build) -> [_AnyType]? {
        let resolver = frame.root
        return lock.withLock { () -> [_AnyType]? in
            // Walk owner → the build it waits for → that build's owner ..., collecting each owner's
            // chain from the type it builds down to the frame that waits.
            var path: [_AnyType] = []
            var wanted = build
            while !wanted.isFinishedInGraph {
                let owner = wanted.owner
                if owner === resolver {
                    path += frame.chain(from: wanted.key, in: wanted.container) ?? [wanted.type]
                    path.append(build.type)
                    return path
                }
                guard let (next, ownerFrame) = owner.waiting else { break }
                path += ownerFrame.chain(from: wanted.key, in: wanted.container) ?? [wanted.type]
                wanted = next
            }
            resolver.waiting = (build, frame)
            return nil
        }
    }

    /// Marks `build` finished for the graph; call before its waiters are woken.
    static func finished(_ build: _Build) {
        lock.withLock { build.isFinishedInGraph = true }
    }

    /// Clears the wait recorded by ``beginWaiting(_:for:)``.
    static func endWaiting(_ frame: _Frame) {
        let resolver = frame.root
        lock.withLock { resolver.waiting = nil }
    }
}

/// Points where a test can act while a synchronous resolve starts waiting for another's build: before it
/// joins the wait-for graph and after. Each gets the type being built. Empty outside tests.
struct _WaitHooks: Sendable {
    var beforeJoining: (@Sendable (_AnyType) -> Void)?
    var afterJoining: (@Sendable (_AnyType) -> Void)?
}
