/// The registrations collected inside `resetCurrentContainer { }`, applied with the reset in one step.
final class Transaction: Sendable {
    enum Operation {
        case reset
        case register(AnyType, Registration)
        /// Registers only if `current` is then the registration of its key: a handle's change that the
        /// state, not the block, found current when it was recorded.
        case registerWhileCurrent(AnyType, Registration, current: Registration)
        case unregister(AnyType)
        case removeAll
    }

    let container: InjectionContainer
    /// The transaction that was open where this one's block began (of another container, or none): a
    /// block stays inside every block around it, whatever factories run in between.
    let outer: Transaction?
    /// Where the block runs: its task and thread (see ``isRunningHere``).
    private let opener: (task: Int, thread: ObjectIdentifier?)
    /// The operations recorded so far, in order, and whether the block has committed.
    private let log = LockedState((operations: [Operation.reset], isCommitted: false))

    init(container: InjectionContainer, outer: Transaction?) {
        (self.container, self.outer, opener) = (container, outer, Self.here)
    }

    /// The running task and thread (the thread's state, made here if need be: the block's is made later).
    private static var here: (task: Int, thread: ObjectIdentifier?) {
        (currentTaskIdentity(), ThreadState.currentOrNew.map(ObjectIdentifier.init))
    }

    /// Whether the running code runs inside this transaction's block itself (synchronously, so the block
    /// cannot return before it does), rather than in a task started inside the block, which may outlive it:
    /// a block nested there joins this one, and one in such a task is a transaction of its own.
    var isRunningHere: Bool { Self.here == opener }

    /// The open transaction of `container` among this one and those around it, if any.
    func open(for container: InjectionContainer) -> Transaction? {
        var transaction: Transaction? = self
        while let current = transaction {
            if current.container === container { return current.log.withLock { $0.isCommitted } ? nil : current }
            transaction = current.outer
        }
        return nil
    }

    /// Where a nested block's operations begin, or `nil` once the transaction is committed.
    func mark() -> Int? { log.withLock { $0.isCommitted ? nil : $0.operations.count } }

    /// Drops every operation recorded since `mark`: a nested block threw, so none of it may land. The
    /// registrations they hold are released after unlocking: a deinit of what a factory captures, or of a
    /// supplied instance, may use the container or the block.
    func discard(since mark: Int) {
        _ = log.withLock { log -> ArraySlice<Operation> in
            guard !log.isCommitted else { return [] }
            defer { log.operations.removeSubrange(mark...) }
            return log.operations[mark...]
        }
    }

    /// Appends `operation`, or returns `false` once the transaction is committed (a task that outlived
    /// the block then acts on the container directly).
    func record(_ operation: Operation) -> Bool {
        log.withLock { log in
            guard !log.isCommitted else { return false }
            log.operations.append(operation)
            return true
        }
    }

    /// Appends `operation`, a change through a handle of `current`, if `current` is the registration of its
    /// key as the operations recorded so far leave it (or, where none decides, as `isCurrentInState` says);
    /// returns `false` for a stale handle, having recorded nothing, and `nil` once the transaction is
    /// committed. The caller holds the container's lock, so the state cannot change meanwhile.
    func record(_ operation: Operation, whileCurrent current: Registration, isCurrentInState: Bool) -> Bool? {
        log.withLock { log in
            guard !log.isCommitted else { return nil }
            let decided = Self.decision(for: current.type, in: log.operations, countingConditional: true)
            let isCurrent = decided.map { $0 === current } ?? isCurrentInState
            if isCurrent { log.operations.append(operation) }
            return isCurrent
        }
    }

    /// Whether `key` is registered once the transaction commits, or `nil` if no operation decides it (a
    /// change through a handle does not: the commit makes it only if the handle is current then).
    func registration(for key: AnyType) -> Bool? {
        log.withLock { Self.decision(for: key, in: $0.operations, countingConditional: false).map { $0 != nil } }
    }

    /// What the operations recorded so far leave registered for `key`, from the last one that decides it
    /// (`nil` inside: one that removes it), or `nil` if none does; `countingConditional`: a
    /// `registerWhileCurrent` decides too.
    private static func decision(for key: AnyType, in log: [Operation], countingConditional: Bool) -> Registration?? {
        for operation in log.reversed() {
            switch operation {
            case .register(key, let registration): return .some(registration)
            case .registerWhileCurrent(key, let registration, _) where countingConditional: return .some(registration)
            case .unregister(key), .removeAll: return .some(nil)
            default: continue
            }
        }
        return nil
    }

    /// Closes the transaction and hands back its operations, in order.
    func commit() -> [Operation] {
        log.withLock { log in
            log.isCommitted = true
            return log.operations
        }
    }
}

