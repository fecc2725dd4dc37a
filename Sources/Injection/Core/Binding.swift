import _InjectionPlatform

/// Where the running code resolves: the container, the frame of the factory it runs in (if any), and
/// the innermost open `resetCurrentContainer { }` block (if any).
///
/// One value in two forms. A synchronous scope (a factory, a sync `withContainer`, a reset block)
/// publishes it in its thread's state, for a resolve to read with one thread-local read. A scope that
/// tasks inherit also publishes it in the task-local ``TaskBinding``. ``current(in:)`` is the one reader
/// for synchronous code: `Inject`, every `InjectionManager` entry point, `container.resolve` and the lazy
/// handles ask it. An async resolve reads ``TaskBinding/current`` itself: a task has no thread binding
/// to prefer.
///
/// The container, the frame and the transaction are not retained: the scope that published them outlives
/// every use of the binding (a retain of one shared container from every thread would make threads contend),
/// and a binding copies with no reference count (the transient graph target, ≤ 3.5x).
struct Binding {
    let container: Unmanaged<InjectionContainer>
    let frame: FrameRef?
    private let unretainedTransaction: Unmanaged<Transaction>?
    /// Whether a resolve here starts a resolution of its own though ``frame`` is set: the frame came
    /// through the task-local from another task (a child of an async factory, a task started inside a
    /// factory), which may be using it at the same time. The frame then serves the chain only.
    let startsResolution: Bool

    init(_ container: InjectionContainer, frame: FrameRef?, transaction: Transaction?, startsResolution: Bool = false) {
        (self.container, self.frame) = (.passUnretained(container), frame)
        (unretainedTransaction, self.startsResolution) = (transaction.map { .passUnretained($0) }, startsResolution)
    }

    /// The innermost open `resetCurrentContainer { }` block around the running code, if any.
    var transaction: Transaction? { unretainedTransaction?.takeUnretainedValue() }

    /// The binding of the running code: its thread's synchronous scope, else its task's; `nil` where
    /// neither binds anything (the process-wide container applies). Skips the task-local read while no
    /// task binding exists anywhere in the process.
    static func current(in thread: ThreadState?) -> Binding? {
        if let binding = thread?.binding { return binding }
        return _injection_context_count() != 0 ? TaskBinding.current?.binding : nil
    }

    /// The binding of the running code (see ``current(in:)``).
    static var current: Binding? { current(in: ThreadState.current?.takeUnretainedValue()) }

    /// Runs the synchronous `body` bound to `container`, keeping the running code's chain, and its open
    /// reset blocks or, given one, `transaction` (which knows the blocks around it). The binding is
    /// published in this thread's state (so resolves in `body` find it cheaply) and in the task-local (so
    /// tasks created in `body` inherit it).
    static func withContainer<Result, Failure: Error>(
        _ container: InjectionContainer, transaction: Transaction? = nil, _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let outer = current
        let task = TaskBinding(container, inside: outer, transaction: transaction)
        let binding = Binding(container, frame: outer?.frame, transaction: task.transaction,
                              startsResolution: outer?.startsResolution ?? false)
        return try ThreadState.withCurrent { state throws(Failure) -> Result in
            try state.bind(binding) { () throws(Failure) -> Result in
                try TaskBinding.$current.withValue(task) { Swift.Result { () throws(Failure) in try body() } }.get()
            }
        }
    }
}

/// The task-local form of ``Binding``: retained, inherited by child tasks.
///
/// Every live one is counted process-wide, so ``Binding/current(in:)`` skips the task-local read (25 to
/// 40 ns on Linux x86_64) while there are none.
final class TaskBinding: Sendable {
    let container: InjectionContainer
    let frame: HeapFrame?
    let transaction: Transaction?
    /// The test this runs in (`InjectionTesting`'s isolation), which a trap names: the container's, else
    /// the one of the binding this one was made inside, so that a container a test binds itself keeps it.
    let testName: String?

    init(container: InjectionContainer, frame: HeapFrame?, transaction: Transaction?) {
        (self.container, self.frame, self.transaction) = (container, frame, transaction)
        testName = container.testName ?? (_injection_context_count() == 0 ? nil : TaskBinding.current?.testName)
        _injection_context_count_add(1)
    }

    /// `container` bound for tasks inside `outer`, the running code's binding: its chain, and its open
    /// reset blocks or, given one, `transaction` (which knows the blocks around it), stay.
    convenience init(_ container: InjectionContainer, inside outer: Binding?, transaction: Transaction? = nil) {
        self.init(container: container, frame: outer?.frame?.escape(), transaction: transaction ?? outer?.transaction)
    }

    deinit { _injection_context_count_add(-1) }

    @TaskLocal static var current: TaskBinding?

    /// The binding this task runs under. A frame is the current task's own only if it is the frame
    /// of an async construction this task runs; any other starts a resolution of its own. A frame whose
    /// resolution has ended (the factory that started this task returned) is no chain at all: this task
    /// outlived it.
    var binding: Binding {
        let frame = frame.flatMap { $0.hasEnded ? nil : $0 }
        return Binding(
            container, frame: frame.map { .on($0) }, transaction: transaction,
            startsResolution: frame.map { $0.ownerTask == nil || $0.ownerTask != currentTaskIdentity() } ?? false)
    }
}
