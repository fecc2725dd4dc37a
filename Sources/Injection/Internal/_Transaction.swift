/// The registrations collected inside `resetCurrentContainer { }`, applied with the reset in one step.
final class _Transaction: @unchecked Sendable {
    enum Operation {
        case reset
        case register(_TypeID, _AnyRegistration)
        case unregister(_TypeID)
    }

    let container: InjectionContainer
    fileprivate let lock = _Lock()
    private var operations: [Operation] = [.reset]
    fileprivate var isCommitted = false

    init(container: InjectionContainer) {
        self.container = container
    }

    /// Appends `operation`, or returns `false` once the transaction is committed (a task that outlived
    /// the block then acts on the container directly).
    func record(_ operation: Operation) -> Bool {
        lock.withLock {
            guard !isCommitted else { return false }
            operations.append(operation)
            return true
        }
    }

    /// Whether `key` is registered once the transaction commits, or `nil` if no operation decides it.
    func registration(for key: _TypeID) -> Bool? {
        lock.withLock {
            for operation in operations.reversed() {
                switch operation {
                case .register(key, _): return true
                case .unregister(key): return false
                default: continue
                }
            }
            return nil
        }
    }

    /// Closes the transaction and hands back its operations, in order.
    func commit() -> [Operation] {
        lock.withLock {
            isCommitted = true
            return operations
        }
    }
}

extension _Transaction {
    /// Whether the block is still running, so operations are still being collected.
    var isOpen: Bool { lock.withLock { !isCommitted } }
}
