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
    /// The transaction that was open where this one's block began (of any container, or none): a block
    /// stays inside every block around it, whatever factories run in between.
    let outer: Transaction?
    /// The block of the same container that this one is nested in, synchronously: this block's operations
    /// join it when this block returns, and none of them if it throws. Others' operations are not this
    /// block's to drop: a task started in the outer block records into the outer block.
    let parent: Transaction?
    /// Where the block runs: its task and thread (see ``isRunningHere``).
    private let opener: (task: Int, thread: ObjectIdentifier?)
    /// The operations recorded so far, in order, and whether the block has committed.
    private let log = LockedState((operations: [Operation.reset], isCommitted: false))

    init(container: InjectionContainer, outer: Transaction?, parent: Transaction?) {
        (self.container, self.outer, self.parent, opener) = (container, outer, parent, Self.here)
    }

    /// The running task and thread (the thread's state, made here if need be: the block's is made later).
    private static var here: (task: Int, thread: ObjectIdentifier?) {
        (currentTaskIdentity(), ThreadState.currentOrNew.map(ObjectIdentifier.init))
    }

    /// Whether the running code runs inside this transaction's block itself (synchronously, so the block
    /// cannot return before it does), rather than in a task started inside the block, which may outlive it:
    /// a block nested there joins this one, and one in such a task is a transaction of its own.
    var isRunningHere: Bool { Self.here == opener }

    /// The innermost open transaction of `container` among this one and those around it, if any.
    func open(for container: InjectionContainer) -> Transaction? {
        var transaction: Transaction? = self
        while let current = transaction {
            if current.container === container, !current.log.withLock({ $0.isCommitted }) { return current }
            transaction = current.outer
        }
        return nil
    }

    /// Appends `operations`, or, once the transaction is committed, hands them to the block it is nested in;
    /// returns `false` if none is open (a task that outlived the blocks then acts on the container directly).
    func record(contentsOf operations: [Operation]) -> Bool {
        let isRecorded = log.withLock { log in
            guard !log.isCommitted else { return false }
            log.operations += operations
            return true
        }
        return isRecorded || parent?.record(contentsOf: operations) == true
    }

    /// Appends `operation`, a change through a handle of `current`, if `current` is the registration of its
    /// key as the operations recorded so far leave it (or, where none decides, as `isCurrentInState` says);
    /// returns `false` for a stale handle, having recorded nothing, and `nil` once the transaction is
    /// committed. The caller holds the container's lock, so the state cannot change meanwhile.
    func record(_ operation: Operation, whileCurrent current: Registration, isCurrentInState: Bool) -> Bool? {
        log.withLock { log in
            guard !log.isCommitted else { return nil }
            // Lock order: a nested block's log, then its parent's.
            var decided = Self.decision(for: current.type, in: log.operations, countingConditional: true)
            if decided == nil, let parent { decided = parent.decision(for: current.type, countingConditional: true) }
            let isCurrent = decided.map { $0 === current } ?? isCurrentInState
            if isCurrent { log.operations.append(operation) }
            return isCurrent
        }
    }

    /// Whether `key` is registered once the transaction commits, or `nil` if no operation decides it (a
    /// change through a handle does not: the commit makes it only if the handle is current then).
    func registration(for key: AnyType) -> Bool? {
        decision(for: key, countingConditional: false).map { $0 != nil }
    }

    /// What the operations recorded so far here, then in the blocks this one is nested in, leave registered for
    /// `key` (see ``decision(for:in:countingConditional:)``).
    private func decision(for key: AnyType, countingConditional: Bool) -> Registration?? {
        let own = log.withLock { Self.decision(for: key, in: $0.operations, countingConditional: countingConditional) }
        guard own == nil, let parent else { return own }
        return parent.decision(for: key, countingConditional: countingConditional)
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

