// How a container changes: `register`, `unregister`, `removeAll` and resets, whether applied at once or
// collected by an open `resetCurrentContainer { }` block (a ``Transaction``) and applied with it.

extension InjectionContainer {
    /// Registers `registration`, in the open reset block if there is one. With `current`, a change through
    /// a handle of that registration (`InjectionRegistration`): made only while `current` is the registration
    /// of its key, checked and made in one lock hold; returns `false`, having changed nothing, if it is not.
    @discardableResult func register(_ registration: Registration, whileCurrent current: Registration? = nil) -> Bool {
        let key = registration.type
        if let transaction = openTransaction() {
            if let current {
                // Current is what the block recorded, else what the state holds: read under the container's
                // lock, then the transaction's (their order). Another key (an alias) registers unconditionally.
                let operation: Transaction.Operation = key == current.type
                    ? .registerWhileCurrent(key, registration, current: current) : .register(key, registration)
                let recorded = state.withLock { state in
                    transaction.record(operation, whileCurrent: current, isCurrentInState: state[current.type] === current)
                }
                if let recorded { return recorded }
            } else if transaction.record(contentsOf: [.register(key, registration)]) { return true }
        }
        var isCurrent = true, replacedHeldInstances = false
        apply { state in
            isCurrent = current.map { state[$0.type] === $0 } ?? true
            let evictions = isCurrent ? state.replace(key, with: registration) : nil
            replacedHeldInstances = evictions?.replacedHeldInstances ?? false
            return forgettingEdges(of: key, evictions)
        }
        if replacedHeldInstances { reportStaleDependents(of: key) }
        return isCurrent
    }

    /// Removes the registration of `key`.
    func unregister(_ key: AnyType) { perform(.unregister(key)) }

    /// Whether `key` is registered, as the open reset block will leave it if it decides.
    func isRegistered(_ key: AnyType) -> Bool {
        if let transaction = openTransaction(), let decided = transaction.registration(for: key) { return decided }
        return state.withLock { $0[key] != nil }
    }

    /// Resets the scope and applies what `body` registers, as one atomic step (see the public method).
    func reset<Failure: Error>(applying body: () throws(Failure) -> Void) throws(Failure) {
        // A block nested in an open block of this container, synchronously: it joins that block when it returns.
        let parent = openTransaction().flatMap { $0.isRunningHere ? $0 : nil }
        let transaction = Transaction(container: self, outer: Binding.current?.transaction, parent: parent)
        do { try Binding.withContainer(self, transaction: transaction, body) } catch {
            _ = transaction.commit()  // Dropped: the registrations go after unlocking.
            throw error
        }
        if let parent, parent.record(contentsOf: transaction.commit()) { return }
        apply { state in
            // Committed under the container's lock: a task that outlived the block and registers now
            // waits for the lock and lands after the block's operations, not between them.
            var evictions = ContainerState.Evictions()
            for operation in transaction.commit() { carryOut(operation, on: &state).map { evictions.merge($0) } }
            return evictions
        }
    }

    /// Records `operation` in the open reset block, if there is one, to apply with it; else applies it now.
    func perform(_ operation: Transaction.Operation) {
        if let transaction = openTransaction(), transaction.record(contentsOf: [operation]) { return }
        apply { carryOut(operation, on: &$0) }
    }

    /// Applies `operation` to `state`: what each operation does, whether it is applied at once or by the
    /// reset block that recorded it.
    private func carryOut(_ operation: Transaction.Operation, on state: inout ContainerState) -> ContainerState.Evictions? {
        switch operation {
        case .reset: return state.reset()
        case .register(let key, let new): return forgettingEdges(of: key, state.replace(key, with: new))
        case .registerWhileCurrent(let key, let registration, let current):
            guard state[current.type] === current else { return nil }  // The handle is stale.
            return forgettingEdges(of: key, state.replace(key, with: registration))
        case .unregister(let key): return forgettingEdges(of: key, state.replace(key, with: nil))
        case .removeAll:
            forgetObservations()
            return state.removeAll()
        }
    }

    /// `evictions`, having forgotten the graph's edges from `key` if they say a registration of it was
    /// replaced: what the old factory resolved says nothing of the new one, whose first run records its
    /// own. Under the container's lock, which comes before the observations lock.
    private func forgettingEdges(of key: AnyType, _ evictions: ContainerState.Evictions?) -> ContainerState.Evictions? {
        if evictions != nil { forgetEdges(from: key) }
        return evictions
    }

    /// The open `resetCurrentContainer { }` of this container that the current code runs inside, if any:
    /// in this task, or in the block of another container's that factories in between run in.
    func openTransaction() -> Transaction? { Binding.current?.transaction?.open(for: self) }

    /// The epoch of the current scope.
    var epoch: UInt64 { state.withLock { $0.epoch } }

    /// Applies a change to the state and carries out what it returns: under the lock, finishes abandoned
    /// builds in the wait-for graph (which wakes the threads blocked on them), so no thread sees the change
    /// half-done; after unlocking, wakes the tasks that waited for them, tells evicted
    /// ``InjectionDisposable`` instances, remembers them for `liveInstancesFromPreviousScopes()`, and releases
    /// them. A change that returns `nil` took nothing out (and left the epoch alone).
    func apply(_ change: (inout ContainerState) -> ContainerState.Evictions?) {
        let taken = state.withLock { state -> ContainerState.Evictions? in
            guard let evictions = change(&state) else { return nil }
            for build in evictions.abandoned { Build.finished(build) }  // No wait may go through them.
            return evictions
        }
        guard let taken else { return }
        for waiter in taken.waiters { waiter.resume() }
        for evicted in taken.instances where evicted.isTold { evicted.box.dispose() }
        remember(taken.instances)
        // `taken` is released here, outside every lock: a deinit may use the container.
    }
}
