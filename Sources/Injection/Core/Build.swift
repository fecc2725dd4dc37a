import Dispatch

/// A `.scoped` or `.singleton` instance being built by one resolution, as the others that wait for it
/// see it. Made by the first claim told to wait (an uncontended build needs none); the build is in
/// progress while its key's slot holds it. Threads block on the build itself (``wait()``), tasks suspend in
/// ``asyncWaiters``; waiters that find it gone claim again.
package final class Build: @unchecked Sendable {
    // `asyncWaiters` changes under the container's lock, `isFinished` under the wait-for graph's.
    /// The resolution building it.
    package let owner: Resolution
    let container: ObjectIdentifier
    package let type: AnyType
    /// Tasks waiting for it.
    package var asyncWaiters: [CheckedContinuation<Void, Never>] = []
    /// Whether it finished or was abandoned, for the wait-for graph: a waiter's edge to it is stale.
    fileprivate var isFinished = false
    /// Entered while the build runs, left when it finishes or is abandoned: what blocked threads wait on.
    private let done = DispatchGroup()

    init(owner: Resolution, container: ObjectIdentifier, type: AnyType) {
        (self.owner, self.container, self.type) = (owner, container, type)
        done.enter()
    }

    /// A build dropped unfinished (by a state driven event by event, in a test) leaves its group balanced.
    deinit { if !isFinished { done.leave() } }

    /// Blocks the calling thread until the build finishes or is abandoned.
    func wait() { done.wait() }
}

/// The wait-for graph: who waits for whose build, process-wide, so a wait that would close a loop is
/// refused as a cycle.
///
/// Lock order: a container's lock → the graph's lock (``finished(_:)`` is called under the former).
extension Build {
    /// A frame of a waiting resolution, as the graph keeps it.
    package typealias Link = (container: ObjectIdentifier, type: AnyType)

    /// The graph's edges: each waiting resolution (by identity: it is alive while it waits), with the build it
    /// waits for and its chain from its root to the frame that waits. Its lock also orders ``isFinished``.
    private static let graph = LockedState([ObjectIdentifier: (build: Build, chain: [Link])]())

    /// Records that `resolution`, whose frames from its root to the waiting one are `chain`, waits for
    /// `build`; or returns the cycle's path if waiting would deadlock because `build`'s owner is,
    /// through other waits, waiting for `resolution`.
    ///
    /// A cycle is reported only if the loop closes now: every build on it is unfinished. A finished
    /// build is an edge about to go away (its waiters are waking), `build` included: the caller was
    /// told to wait under the container's lock, but the build may have finished since.
    static func beginWaiting(_ resolution: Resolution, chain: [Link], for build: Build) -> [AnyType]? {
        graph.withLock { waits -> [AnyType]? in
            // Walk owner → the build it waits for → that build's owner ..., collecting each owner's
            // chain from the frame that resolves the build it waits for, down to the frame that waits.
            var path: [AnyType] = []
            var wanted = build
            while !wanted.isFinished {
                let owner = wanted.owner
                if owner === resolution { return path + Self.path(of: chain, from: wanted) + [build.type] }
                guard let (next, ownerChain) = waits[ObjectIdentifier(owner)] else { break }
                path += Self.path(of: ownerChain, from: wanted)
                wanted = next
            }
            waits[ObjectIdentifier(resolution)] = (build, chain)
            return nil
        }
    }

    /// Marks `build` finished or abandoned, and wakes the threads blocked on it; call under its container's
    /// lock, before waking its tasks.
    static func finished(_ build: Build) {
        let isFirst = graph.withLock { _ in
            defer { build.isFinished = true }
            return !build.isFinished
        }
        if isFirst { build.done.leave() }
    }

    /// Clears the wait recorded by ``beginWaiting(_:chain:for:)``.
    static func endWaiting(_ resolution: Resolution) { graph.withLock { $0[ObjectIdentifier(resolution)] = nil } }

    /// `chain` from its innermost frame that resolves `build`'s type, or just that type if none does.
    private static func path(of chain: [Link], from build: Build) -> [AnyType] {
        let start = chain.lastIndex { $0.type == build.type && $0.container == build.container }
        return start.map { chain[$0...].map(\.type) } ?? [build.type]
    }
}
