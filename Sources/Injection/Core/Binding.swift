import _InjectionPlatform

/// Where the running code resolves: the container, the factory run it is in (if any), and the innermost
/// open `resetCurrentContainer { }` block (if any).
///
/// One value in two places. A synchronous scope (a factory, a sync `withContainer`, a reset block)
/// publishes it in its thread's ``ThreadState``, where a resolve finds it with one thread-local read. A
/// scope that tasks inherit also publishes it in the task-local ``TaskBinding``. ``current(in:)`` is the one
/// reader: `Inject`, every `InjectionManager` entry point, `container.resolve`, the lazy handles and
/// `resolveAsync` ask it.
struct Binding: Sendable {
    let container: InjectionContainer
    /// The factory run the code is in: the innermost link of its resolution's chain.
    let frame: Frame?
    let transaction: Transaction?
    /// Whether a resolve here starts a resolution of its own though ``frame`` is set: the frame came
    /// through the task-local from another task (a task started inside a factory, a child of an async
    /// factory), which may be using it at the same time. The frame then serves the chain only.
    let startsResolution: Bool

    init(
        _ container: InjectionContainer, frame: Frame? = nil, transaction: Transaction? = nil,
        startsResolution: Bool = false
    ) {
        (self.container, self.frame, self.transaction) = (container, frame, transaction)
        self.startsResolution = startsResolution
    }

    /// The binding of the running code: its thread's synchronous scope, else its task's; `nil` where
    /// neither binds anything (the process-wide container applies). Skips the task-local read (25 to 40 ns on
    /// Linux x86_64) while no task binding exists anywhere in the process: the cached resolve target, ≤ 1.3x
    /// of a mutex and a dictionary, needs it.
    static func current(in thread: ThreadState?) -> Binding? {
        if let binding = thread?.binding { return binding }
        return TaskBinding.mayExist ? TaskBinding.current?.binding : nil
    }

    /// The container of code bound to none: `InjectionManager.sharedContainer`.
    static let processWide = InjectionContainer()

    /// The binding of the running code (see ``current(in:)``).
    static var current: Binding? { current(in: ThreadState.current) }

    /// Runs `body` with this binding published: in `thread`'s state, and, with `inTask`, in the task-local too,
    /// for the tasks `body` starts. A thread that is exiting has no state: there it goes to the task-local only.
    func publish<Result, Failure: Error>(
        on thread: ThreadState?, inTask: Bool, _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        guard inTask || thread == nil else { return try thread!.bind(self, body) }
        // On a thread with no state, the code in `body` reads this binding from the task-local as its own.
        let task = TaskBinding(self, owner: thread == nil ? currentTaskIdentity() : nil)
        return try TaskBinding.$current.withValue(task) {
            Swift.Result { () throws(Failure) -> Result in
                guard let thread else { return try body() }
                return try thread.bind(self, body)
            }
        }.get()
    }

    /// `container` bound inside the running code's binding: its chain, and its open reset blocks or, given one,
    /// `transaction` (which knows the blocks around it), stay.
    static func binding(_ container: InjectionContainer, transaction: Transaction? = nil) -> Binding {
        let outer = current
        return Binding(container, frame: outer?.frame, transaction: transaction ?? outer?.transaction,
                       startsResolution: outer?.startsResolution ?? false)
    }

    /// Runs the synchronous `body` bound to `container` (see ``binding(_:transaction:)``), for `body` and its
    /// tasks.
    static func withContainer<Result, Failure: Error>(
        _ container: InjectionContainer, transaction: Transaction? = nil, _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try binding(container, transaction: transaction).publish(on: ThreadState.currentOrNew, inTask: true, body)
    }
}

/// The task-local form of ``Binding``: inherited by child tasks and by tasks started inside its scope.
///
/// Every live one is counted process-wide, so ``Binding/current(in:)`` skips the task-local read while there
/// are none.
final class TaskBinding: Sendable {
    private let container: InjectionContainer
    private let frame: Frame?
    private let transaction: Transaction?
    /// The task whose own frame ``frame`` is (an async construction's task); any other task starts a
    /// resolution of its own under it.
    private let owner: Int?
    /// The test this runs in (`InjectionTesting`'s isolation), which a trap names: the container's, else
    /// the one of the binding this one was made inside, so that a container a test binds itself keeps it.
    let testName: String?

    init(_ binding: Binding, owner: Int? = nil) {
        (container, frame, transaction, self.owner) = (binding.container, binding.frame, binding.transaction, owner)
        testName = container.testName ?? (Self.mayExist ? TaskBinding.current?.testName : nil)
        _injection_count_add(Int32(_INJECTION_TASK_BINDINGS), 1)
    }

    deinit { _injection_count_add(Int32(_INJECTION_TASK_BINDINGS), -1) }

    @TaskLocal static var current: TaskBinding?

    /// Whether any task binding is alive in the process: while none is, no task can see one.
    static var mayExist: Bool { _injection_count(Int32(_INJECTION_TASK_BINDINGS)) != 0 }

    /// The binding this task runs under. A frame whose resolution has ended (the factory that started this
    /// task returned) is no chain at all: this task outlived it, and resolves as a resolution of its own.
    var binding: Binding {
        let frame = frame.flatMap { $0.resolution.hasEnded ? nil : $0 }
        return Binding(container, frame: frame, transaction: transaction,
                       startsResolution: frame != nil && owner != currentTaskIdentity())
    }
}

/// What each thread keeps for itself: the binding of the synchronous scope it is in, and where its stack ends.
///
/// A synchronous scope cannot hop threads, so it publishes its ``Binding`` here, where a resolve finds it with
/// a thread-local read instead of a task-local lookup. Only the owning thread touches it. The C platform
/// layer keeps its address in a thread-local and releases it when the thread exits; ``current`` and
/// ``currentOrNew`` are the one place that hands it across. Its fields are a `ManagedBuffer`'s header, read on
/// every resolve with no run-time exclusivity check (the transient graph floor, ≤ 6x of direct construction,
/// fails with checked ones).
final class ThreadState: ManagedBuffer<(binding: Binding?, stackLimit: UInt), Void> {
    /// The innermost synchronous scope on this thread.
    var binding: Binding? { withUnsafeMutablePointerToHeader { $0.pointee.binding } }

    /// Below this address the thread's stack has less than ``stackReserve`` left: a resolve that would
    /// nest deeper fails with ``InjectionError/Kind/tooDeep`` instead of overflowing.
    var stackLimit: UInt { withUnsafeMutablePointerToHeader { $0.pointee.stackLimit } }

    /// The stack a resolve keeps in hand for one more level of nesting, the factory's own frames, and
    /// the error path: reporting, or trapping with a message.
    static let stackReserve: UInt = 64 << 10

    /// A state for this thread.
    private static func make() -> ThreadState {
        var low: UInt = 0, size: UInt = 0
        _injection_thread_stack(&low, &size)
        return create(minimumCapacity: 0) { _ in (nil, low + stackReserve) } as! ThreadState
    }

    /// Runs `body` with `binding` as the thread's binding, then restores the one before.
    func bind<Result, Failure>(_ binding: Binding?, _ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        var other = binding
        withUnsafeMutablePointerToHeader { swap(&$0.pointee.binding, &other) }
        defer { withUnsafeMutablePointerToHeader { swap(&$0.pointee.binding, &other) } }
        return try body()
    }

    /// This thread's state, or `nil` if it has none yet (or is exiting).
    static var current: ThreadState? {
        _injection_thread_state().map { Unmanaged<ThreadState>.fromOpaque($0).takeUnretainedValue() }
    }

    /// The current thread's state, made on first use; `nil` on a thread that is exiting and whose state was
    /// already released (from a pthread key destructor that runs after the library's): a new state there
    /// would never be released, so bindings go to the task-local there (``Binding/publish(on:inTask:_:)``).
    static var currentOrNew: ThreadState? {
        if let current { return current }
        let state = make(), retained = Unmanaged.passRetained(state)
        guard _injection_thread_state_adopt(retained.toOpaque(), release) else {
            retained.release()  // The reference meant for the C layer, which refused it.
            return nil
        }
        return state
    }

    /// Releases a thread's state when the thread exits (called by the C platform layer once the thread
    /// can no longer read it).
    private static let release: _injection_thread_state_destructor = { Unmanaged<ThreadState>.fromOpaque($0).release() }
}
