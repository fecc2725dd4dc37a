import _InjectionPlatform

/// One run of a factory (or of a builder's build closure): a link of its resolution's chain.
///
/// A frame is retained by the binding of the code its factory runs, by the task-local binding of tasks
/// started there, and by deferred `postConstruction` calls; each keeps its parent alive, and a long chain is
/// released in a loop. Immutable but for what its own resolution's thread records in it while its factory
/// runs (``resolved``, ``collected``): other tasks reading the chain never see those.
package final class Frame: @unchecked Sendable {
    let container: ObjectIdentifier
    /// The requested type: the registered type, the `InjectionKey` type, or a builder model type.
    let type: AnyType
    /// The resolution the frame belongs to: its root's (a root starts one).
    let resolution: Resolution
    /// The container's epoch when this frame's resolution started: builds under it belong to that epoch.
    let epoch: UInt64
    /// Whether what this factory resolves from `container` is recorded as edges of the graph (``resolved``).
    let recordsEdges: Bool
    /// Whether the container keeps what this frame builds: it then collects its own dependencies.
    let keepsInstance: Bool
    /// Whether the resolve that started the chain was bound to no container (work a test may have sent to a queue).
    let isUnbound: Bool
    /// One bit per type in the chain, this frame's included (see ``bit(of:)``): a type whose bit is clear is
    /// not in the chain, which answers most cycle checks with no walk.
    let mask: UInt64
    /// Whether this frame is the root of its resolution: it has no parent, or starts a resolution of its own
    /// though it has one for the chain (an async construction's, or a resolve's under another task's frame: see
    /// ``Binding/startsResolution``).
    let isRoot: Bool
    private(set) var parent: Frame?
    /// The frame whose build collects what this one resolves, when it runs inside a build that keeps its
    /// instance (a transient, an alias or a builder's closure keeps nothing of its own).
    private let outerCollector: Frame?
    /// What this frame's factory resolved from its container, for the graph's edges.
    var resolved: [AnyType] = []
    /// What the build of a kept instance resolved, directly or through what keeps nothing of its own, for the
    /// re-registration report.
    var collected: [AnyType] = []

    /// A frame for resolving `type` in `container`, in `resolution` (a new one for a root), with the container's
    /// `epoch` now. A frame that continues a resolution of the same container keeps its parent's epoch.
    init(
        container: ObjectIdentifier, type: AnyType, epoch: UInt64, parent: Frame?, startsResolution: Bool,
        resolution: Resolution?, recordsEdges: Bool, keepsInstance: Bool, inBuild: Bool? = nil, isUnbound: Bool = false
    ) {
        self.isUnbound = parent?.isUnbound ?? isUnbound
        (self.container, self.type, self.parent) = (container, type, parent)
        isRoot = startsResolution || parent == nil
        (self.recordsEdges, self.keepsInstance) = (recordsEdges, keepsInstance)
        let continues = !startsResolution && parent != nil
        self.resolution = resolution ?? (continues ? parent!.resolution : .make())
        let inParent = parent?.container == container
        self.epoch = continues && inParent ? parent!.epoch : epoch
        mask = (parent?.mask ?? 0) | Self.bit(of: type)
        // `inBuild`: whether it runs inside its parent's build; by default, unless it starts a resolution.
        outerCollector = (inBuild ?? !startsResolution) && inParent ? parent?.collector : nil
    }

    deinit {
        // A long chain is released one frame at a time: each parent that only this chain holds is detached
        // from its own parent before it goes, so no `deinit` runs inside another. (A collector, an ancestor that
        // frames below it share, goes with the last of them: one level deeper, whatever the chain's length.)
        var next = parent
        parent = nil
        while isKnownUniquelyReferenced(&next), let frame = next {
            next = frame.parent
            frame.parent = nil
        }
    }

    /// The frame that collects what this one resolves (see ``collected``).
    var collector: Frame? { keepsInstance ? self : outerCollector }

    /// Records that this frame's factory resolved `requested` from its container: as an edge, and as a
    /// dependency of the build around it. Called by the frame's own resolution only.
    func record(_ requested: AnyType) {
        if recordsEdges { resolved.append(requested) }
        collector?.collected.append(requested)
    }

    /// The bit of `type` in a ``mask``.
    static func bit(of type: AnyType) -> UInt64 { 1 << ((type.bits &* 0x9E37_79B9_7F4A_7C15) >> 58) }

    // MARK: The chain

    /// The frames from this one outward.
    var chain: UnfoldFirstSequence<Frame> { sequence(first: self) { $0.parent } }

    /// The types from the outermost frame to this one.
    var types: [AnyType] { chain.map(\.type).reversed() }

    /// The types from the innermost frame that resolves `key` in `container` down to this one, or `nil`.
    func path(from key: AnyType, in container: ObjectIdentifier) -> [AnyType]? {
        var types: [AnyType] = []
        for frame in chain {
            types.append(frame.type)
            if frame.type == key && frame.container == container { return types.reversed() }
        }
        return nil
    }

    /// The frames of this frame's resolution, from its root to this one, as the wait-for graph keeps them.
    var resolutionChain: [Build.Link] {
        let frames = Array(chain), root = frames.firstIndex { $0.isRoot } ?? frames.count - 1
        return frames[...root].reversed().map { ($0.container, $0.type) }
    }

    /// Whether this frame or one above it resolves `key` in `container`: resolving it again would be a cycle.
    /// `ownResolution`: the caller runs in this frame's resolution, whose index it may use and update.
    func chainContains(_ key: AnyType, in container: ObjectIdentifier, ownResolution: Bool) -> Bool {
        guard mask & Self.bit(of: key) != 0 else { return false }
        if ownResolution && !resolution.index(below: self, mayContain: key) { return false }
        return path(from: key, in: container) != nil
    }
}

/// What belongs to a whole resolution rather than to one frame: the builds it owns point here, the
/// wait-for graph follows it, and it collects the `postConstruction` calls deferred to its end.
///
/// Touched by its own thread (or task) only, but for whether it has ended (an atomic word: tasks started inside
/// its factories ask). One allocation: the fields are a
/// `ManagedBuffer`'s header, read with no run-time exclusivity check, and the ended word its one element (the
/// transient graph floor, ≤ 6x of direct construction, fails with a lock of its own and checked fields).
package final class Resolution: ManagedBuffer<Resolution.Fields, UInt64> {
    /// `deferred`: the `postConstruction` calls deferred until the top-level resolve has built and cached
    /// everything, so a back-reference to any type of the graph finds it, each returning its failure; `undo`: what
    /// undoes what nested frames cached, should one fail. `index`: how many frames of the chain below `top` have
    /// each type, kept once a chain's ``Frame/mask`` stops answering (about 64 levels deep), so a cycle check costs
    /// the same at any depth.
    package typealias Fields = (
        deferred: [() -> InjectionError?], undo: [() -> Void],
        index: (top: Frame?, counts: [AnyType: Int])?
    )

    /// A new resolution.
    static func make() -> Resolution {
        // `create` is the superclass's, typed as it: a `Resolution` by construction (an `as!` walks the class
        // hierarchy on every root build: the transient graph floor).
        let resolution = unsafeDowncast(create(minimumCapacity: 1) { _ in ([], [], nil) }, to: Resolution.self)
        resolution.withUnsafeMutablePointerToElements { $0.initialize(to: 0) }
        return resolution
    }

    private var fields: UnsafeMutablePointer<Fields> { withUnsafeMutablePointerToHeader { $0 } }

    /// Whether `frame`'s chain may contain `key` (`false`: it does not).
    func index(below frame: Frame, mayContain key: AnyType) -> Bool {
        let fields = fields
        if fields.pointee.index?.top !== frame || fields.pointee.index == nil {
            fields.pointee.index = (frame, [:])
            for link in frame.chain { fields.pointee.index!.counts[link.type, default: 0] += 1 }
        }
        return fields.pointee.index!.counts[key] != nil
    }

    /// Notes that `frame`, a frame of this resolution, starts running its factory.
    func enter(_ frame: Frame) {
        let fields = fields
        guard fields.pointee.index != nil, fields.pointee.index!.top === frame.parent else { return }
        fields.pointee.index!.top = frame
        fields.pointee.index!.counts[frame.type, default: 0] += 1
    }

    /// Notes that `frame`'s factory returned.
    func leave(_ frame: Frame) {
        let fields = fields
        guard fields.pointee.index != nil, fields.pointee.index!.top === frame else { return }
        fields.pointee.index!.top = frame.parent
        fields.pointee.index!.counts[frame.type]! -= 1
        if fields.pointee.index!.counts[frame.type] == 0 { fields.pointee.index!.counts[frame.type] = nil }
    }

    /// Defers `work` (a `postConstruction`) to the end of the resolution; see ``Fields``.
    func deferToEnd(_ work: @escaping () -> InjectionError?) { fields.pointee.deferred.append(work) }

    /// Adds a step that undoes what a nested frame cached, should a deferred step fail.
    func undoOnFailure(_ step: @escaping () -> Void) { fields.pointee.undo.append(step) }

    /// Whether its root's factory has returned. A task started inside one of its factories holds its frames
    /// and may outlive it: once it has ended, such a task resolves as a resolution of its own, with no chain.
    var hasEnded: Bool { withUnsafeMutablePointerToElements { _injection_load_u64($0) } != 0 }

    /// Marks it ended (see ``hasEnded``).
    func end() { withUnsafeMutablePointerToElements { _injection_store_u64($0, 1) } }

    /// Runs the deferred `postConstruction` calls (and any they defer in turn), then marks the resolution
    /// ended; returns the first failure. If one fails, everything this resolution cached is evicted too, so
    /// nothing stays cached holding an instance that was evicted for it.
    func close() -> InjectionError? {
        defer { end() }
        let fields = fields
        var failure: InjectionError?, next = 0
        while next < fields.pointee.deferred.count {  // A step may defer more: read the count anew each time.
            let step = fields.pointee.deferred[next]
            if let error = step(), failure == nil { failure = error }
            next += 1
        }
        let undo = fields.pointee.undo
        (fields.pointee.deferred, fields.pointee.undo, fields.pointee.index) = ([], [], nil)
        if failure != nil { for evict in undo { evict() } }
        return failure
    }
}
