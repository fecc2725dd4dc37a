/// A cached instance being built by one resolution while others wait for it.
final class _Build: Sendable {
    let owner: _Resolver
    let container: ObjectIdentifier
    let key: ObjectIdentifier
    let type: _AnyType
    /// The container's scope number when the build started.
    let scope: UInt64

    init(owner: _Resolver, container: ObjectIdentifier, key: ObjectIdentifier, type: _AnyType, scope: UInt64) {
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

    /// Records that `resolver` (running `frame`) waits for `build`, or returns the cycle path if waiting
    /// would deadlock because `build`'s owner is, through other waits, waiting for `resolver`.
    static func beginWaiting(_ resolver: _Resolver, frame: _Frame?, for build: _Build) -> [_AnyType]? {
        lock.withLock {
            // Walk owner → the build it waits for → that build's owner ..., collecting each owner's
            // chain from the type it builds down to the frame that waits.
            var path: [_AnyType] = []
            var wanted = build
            while true {
                let owner = wanted.owner
                if owner === resolver {
                    path += frame?.chain(from: wanted.key, in: wanted.container) ?? [wanted.type]
                    path.append(build.type)
                    return path
                }
                guard let (next, ownerFrame) = owner.waiting else { break }
                path += ownerFrame?.chain(from: wanted.key, in: wanted.container) ?? [wanted.type]
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
