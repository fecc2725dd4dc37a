import _InjectionPlatform

/// One factory being run: a link in the chain of types being resolved.
///
/// A frame is a local variable of the call that runs the factory (``InjectionContainer/run(_:thread:transaction:_:)``),
/// published by pointer in its thread's binding: running a factory allocates nothing for it. A frame
/// moves to the heap (``HeapFrame``, by ``FrameRef/escape()``) only when it must outlive that call: the
/// frame of an async construction, which runs in a task; a chain published to the task-local binding,
/// which tasks inherit; a deferred `postConstruction`.
///
/// The outermost frame of a resolution (its root) also stands for the whole resolution: see
/// ``Resolution``, which the frame's place keeps (``StackFrame``, ``HeapFrame``), not the frame: a frame
/// holds no reference, so it copies with no reference count (the transient graph target, ≤ 3.5x).
struct Frame {
    let container: ObjectIdentifier
    /// The requested type: the registered type, the `InjectionKey` type, or a builder model type.
    let type: AnyType
    /// The container's epoch when this frame's resolution started: builds under it belong to that epoch.
    let epoch: UInt64
    /// Whether this frame starts a resolution of its own though it has a parent for the chain: the
    /// frame of an async construction, or of a resolve under another task's frame (see
    /// ``Binding/startsResolution``). The wait-for graph and deferred work stop here.
    let startsResolution: Bool
    /// Whether what this factory resolves from `container` is recorded as edges of the graph.
    let recordsEdges: Bool
    /// The key whose instance, being built, depends on what this frame resolves from `container` (for the
    /// re-registration report): its own, if the container keeps what it builds; else its parent's, when it
    /// runs inside that build (a transient, an alias or a builder's build keeps nothing of its own).
    let collector: AnyType?
    fileprivate(set) var parent: FrameRef?

    /// A frame for resolving `type` in `container`: a nested frame keeps its resolution's epoch; one that
    /// starts a resolution takes `epoch`, the container's current one.
    init(
        container: ObjectIdentifier, type: AnyType, epoch: UInt64, parent: FrameRef?, startsResolution: Bool,
        recordsEdges: Bool, keepsInstance: Bool = false, inBuild: Bool? = nil
    ) {
        (self.container, self.type, self.parent) = (container, type, parent)
        (self.startsResolution, self.recordsEdges) = (startsResolution, recordsEdges)
        let inParent = parent?.container == container
        self.epoch = !startsResolution && inParent ? parent!.epoch : epoch
        // `inBuild`: whether it runs inside its parent's build; by default, unless it starts a resolution.
        collector = keepsInstance ? type : (inBuild ?? !startsResolution) && inParent ? parent?.collector : nil
    }

    /// Whether this frame is the root of its resolution.
    var isRoot: Bool { startsResolution || parent == nil }
}

/// A frame on a thread's frame stack (``ThreadState/push(_:resolution:)``), with what it keeps: the
/// resolution it is the root of, made when first needed (a build, a wait, deferred work), and its copy
/// on the heap, once ``FrameRef/escape()`` made one (each frame is copied once).
typealias StackFrame = (frame: Frame, resolution: Resolution?, escaped: HeapFrame?)

/// A frame on the heap, for a frame that outlives the call that made it. Keeps its parents alive.
final class HeapFrame: @unchecked Sendable {  // Immutable but for `ownerTask`, set before it is shared.
    let frame: Frame
    /// The resolution this frame is the root of, given by whoever made it (see ``StackFrame``).
    let resolution: Resolution?
    /// For an async construction's frame, the task running it (set once, before the factory runs).
    var ownerTask: Int?
    /// The parent on the heap, if any, which ``frame`` refers to without retaining it.
    private var heapParent: HeapFrame?

    init(_ frame: Frame, resolution: Resolution? = nil) {
        (self.frame, self.resolution) = (frame, resolution)
        if case .heap(let parent)? = frame.parent { heapParent = parent.takeUnretainedValue() }
    }

    deinit {
        // A long chain is released one frame at a time: each parent that only this chain holds is
        // detached from its own parent before it goes, so no `deinit` runs inside another.
        var next = heapParent
        heapParent = nil
        while isKnownUniquelyReferenced(&next) {
            let parent = next?.heapParent
            next?.heapParent = nil
            next = parent
        }
    }

    /// Whether the resolution this frame belongs to has ended (see ``Resolution/hasEnded``).
    var hasEnded: Bool { FrameRef.on(self).root.resolution(making: false)?.hasEnded ?? false }

    /// Ends the resolution this frame is the root of, if it has one.
    func endResolution() { resolution?.end() }
}

/// A frame, wherever it lives: a local of the call running its factory, or on the heap. A local frame
/// is valid while that call runs, which whoever published it outlives.
enum FrameRef {
    case stack(UnsafeMutablePointer<StackFrame>)
    /// Not retained, so that a frame reference copies with no reference count (the transient graph target,
    /// ≤ 3.5x): whoever publishes one keeps its frame alive, as for a local frame (a task's binding, the
    /// resolve that made it, a copy of its child: a ``HeapFrame`` keeps its parent on the heap alive).
    case heap(Unmanaged<HeapFrame>)

    /// `frame`, which the caller keeps alive while the reference is used.
    static func on(_ frame: HeapFrame) -> FrameRef { .heap(.passUnretained(frame)) }

    /// Reads the frame in place, through a pointer: a frame passed as a value would be copied, with a
    /// reference count per field (the transient graph target, ≤ 3.5x, fails with that).
    @inline(__always)  // A closure call per question about a frame otherwise: the transient graph target.
    func read<Result>(_ body: (UnsafePointer<Frame>) -> Result) -> Result {
        switch self {
        case .stack(let pointer): withUnsafePointer(to: pointer.pointee.frame) { body($0) }
        case .heap(let frame): withUnsafePointer(to: frame.takeUnretainedValue().frame) { body($0) }
        }
    }

    var container: ObjectIdentifier { read { $0.pointee.container } }
    var epoch: UInt64 { read { $0.pointee.epoch } }
    var type: AnyType { read { $0.pointee.type } }
    var recordsEdges: Bool { read { $0.pointee.recordsEdges } }
    var collector: AnyType? { read { $0.pointee.collector } }
    /// Whether what this frame's factory resolves is recorded: as an edge, or as a dependency.
    var observes: Bool { read { $0.pointee.recordsEdges || $0.pointee.collector != nil } }
    var isRoot: Bool { read { $0.pointee.isRoot } }

    // MARK: The chain walker: every question about the chain is answered here, in a loop.

    /// Calls `body` with each frame from this one outward, until it returns `false`.
    func walk(_ body: (UnsafePointer<Frame>) -> Bool) {
        var current: FrameRef? = self
        while let frame = current {
            let (goOn, parent) = frame.read { (body($0), $0.pointee.parent) }
            if !goOn { return }
            current = parent
        }
    }

    /// Whether a frame in the chain resolves `key` in `container`: resolving it again would be a cycle.
    func contains(_ key: AnyType, in container: ObjectIdentifier) -> Bool {
        var found = false
        walk { frame in
            found = frame.pointee.type == key && frame.pointee.container == container
            return !found
        }
        return found
    }

    /// The types from the outermost frame to this one.
    var chain: [AnyType] {
        var types: [AnyType] = []
        walk { types.append($0.pointee.type); return true }
        return types.reversed()
    }

    /// The types from the innermost frame that resolves `key` in `container` down to this one, or
    /// `nil` if none does.
    func path(from key: AnyType, in container: ObjectIdentifier) -> [AnyType]? {
        var types: [AnyType] = [], found = false
        walk { frame in
            types.append(frame.pointee.type)
            found = frame.pointee.type == key && frame.pointee.container == container
            return !found
        }
        return found ? types.reversed() : nil
    }

    /// The frames of this frame's resolution, from this one to its root, with what the wait-for graph
    /// needs of each: a copy that stays valid after the frames are gone.
    var resolutionChain: [Build.Link] {
        var links: [Build.Link] = []
        walk { frame in
            links.append((frame.pointee.container, frame.pointee.type))
            return !frame.pointee.isRoot
        }
        return links.reversed()
    }

    /// The root frame of this frame's resolution.
    var root: FrameRef {
        var current = self
        while let parent = current.read({ $0.pointee.isRoot ? nil : $0.pointee.parent }) { current = parent }
        return current
    }

    /// The resolution this frame belongs to, made on first use. Call on the resolving thread only.
    var resolution: Resolution { resolution(making: true)! }

    /// The resolution this frame belongs to, if made; `making`: made now if it is not. (A root on the heap
    /// always has one: its maker gives it.)
    func resolution(making: Bool) -> Resolution? {
        switch root {
        case .stack(let pointer):
            if pointer.pointee.resolution == nil && making { pointer.pointee.resolution = Resolution.make() }
            return pointer.pointee.resolution
        case .heap(let frame): return frame.takeUnretainedValue().resolution
        }
    }

    /// This frame on the heap, with its parents: the same frame if it is there already, else a copy.
    /// The copy's root shares the original's ``Resolution``, so work deferred under a copy (by a
    /// `postConstruction`) still runs at the end of the original resolution. Each local frame is copied
    /// once, whatever asks; a loop, however long the chain.
    func escape() -> HeapFrame {
        var locals: [UnsafeMutablePointer<StackFrame>] = []
        var onHeap: HeapFrame?
        var current: FrameRef? = self
        while let frame = current, onHeap == nil {
            switch frame {
            case .heap(let frame): onHeap = frame.takeUnretainedValue()
            case .stack(let pointer):
                onHeap = pointer.pointee.escaped
                if onHeap == nil {
                    locals.append(pointer)
                    current = pointer.pointee.frame.parent
                }
            }
        }
        for pointer in locals.reversed() {  // From the outermost, each onto its parent's copy.
            var copy = pointer.pointee.frame
            copy.parent = onHeap.map { .on($0) }
            // A root's copy shares its resolution.
            let frame = HeapFrame(copy, resolution: copy.isRoot ? FrameRef.stack(pointer).resolution : nil)
            pointer.pointee.escaped = frame
            onHeap = frame
        }
        return onHeap!
    }
}

/// What belongs to a whole resolution rather than to one frame: the builds it owns point here, the
/// wait-for graph follows it, and it collects the `postConstruction` calls deferred to its end.
///
/// One allocation (a first resolve makes one): its fields are a `ManagedBuffer`'s header, reached through
/// the methods below, and whether it has ended is the buffer's one element, a word for the C layer's
/// atomic loads and stores.
final class Resolution: ManagedBuffer<Resolution.Fields, UInt64> {
    // Not `Sendable` (its superclass is not); see `Fields` for who touches what.
    /// `waiting` (under the wait-for graph's lock): the build this resolution is blocked on, and its chain
    /// from its root to the frame that waits. `deferred` and `undo` (the resolving thread's): the
    /// `postConstruction` calls deferred until the top-level resolve has built and cached everything, so a
    /// back-reference to any type of the graph finds it, each returning its failure; and what undoes what
    /// nested frames cached, should one fail.
    typealias Fields = (waiting: (Build, [Build.Link])?, deferred: [() -> InjectionError?], undo: [() -> Void])

    /// A new resolution.
    static func make() -> Resolution {
        // `create` is the superclass's, typed as it: a `Resolution` by construction (an `as!` walks the class
        // hierarchy on every first resolve: the login/logout target, at least 3x faster than Swinject).
        let resolution = unsafeDowncast(create(minimumCapacity: 1) { _ in (nil, [], []) }, to: Resolution.self)
        resolution.withUnsafeMutablePointerToElements { $0.initialize(to: 0) }
        return resolution
    }

    /// See ``Fields``.
    var waiting: (Build, [Build.Link])? {
        get { withUnsafeMutablePointerToHeader { $0.pointee.waiting } }
        set { withUnsafeMutablePointerToHeader { $0.pointee.waiting = newValue } }
    }

    /// Defers `work` (a `postConstruction`) to the end of the resolution; see ``Fields``.
    func deferToEnd(_ work: @escaping () -> InjectionError?) {
        withUnsafeMutablePointerToHeader { $0.pointee.deferred.append(work) }
    }

    /// Adds a step that undoes what a nested frame cached, should a deferred step fail.
    func undoOnFailure(_ undo: @escaping () -> Void) {
        withUnsafeMutablePointerToHeader { $0.pointee.undo.append(undo) }
    }

    /// Whether its root's factory has returned. A task started inside one of its factories holds copies
    /// of its frames and may outlive it: once it has ended, such a task resolves as a resolution of its
    /// own, with no chain (nothing is under construction any more, so nothing it resolves is a cycle).
    var hasEnded: Bool { withUnsafeMutablePointerToElements { _injection_load_u64($0) } != 0 }

    /// Marks it ended (see ``hasEnded``).
    func end() { withUnsafeMutablePointerToElements { _injection_store_u64($0, 1) } }

    /// Runs the deferred `postConstruction` calls (and any they defer in turn), then marks the
    /// resolution ended; returns the first failure. If one fails, everything this resolution cached is
    /// evicted too, so nothing stays cached holding an instance that was evicted for it.
    func close() -> InjectionError? {
        defer { end() }
        var failure: InjectionError?, next = 0
        // A step may defer more: read the next one anew each time.
        while let step = withUnsafeMutablePointerToHeader({ $0.pointee.deferred.dropFirst(next).first }) {
            if let error = step(), failure == nil { failure = error }
            next += 1
        }
        let undo = withUnsafeMutablePointerToHeader { fields in
            defer { (fields.pointee.deferred, fields.pointee.undo) = ([], []) }
            return fields.pointee.undo
        }
        if failure != nil { for evict in undo { evict() } }
        return failure
    }
}
