import Dispatch

/// One `verify()` run: resolves every registration of a throwaway copy on worker threads and collects
/// every problem, including those of a nested `Inject()`, which cannot throw.
///
/// A failing nested `Inject()` on a worker records its error, marks the builds its thread had started
/// as failed (so later resolves of those types fail fast instead of waiting), starts a replacement
/// worker for the remaining registrations, and parks its own thread for good. The copy is never used
/// again. Cost: one parked thread (and what it holds) per registration whose factory fails that way;
/// none when the graph is sound. Each is remembered for the process, with the registrations it ran with: a
/// later verification of the same registrations reports it from memory instead of parking another thread.
final class Verification: Sendable {
    /// What the run has left and has found: the types not resolved yet, how many have not finished, the
    /// problems found, why the build of a key was abandoned (its thread parked, so later resolves fail
    /// fast), and how to resolve one type, returning its problem or `nil`, in a struct (a closure in a
    /// tuple the lock's generic code holds is re-wrapped by each access in an unspecialized build, a
    /// chain that grew one thunk deeper per access until releasing it overflowed a stack). (Not a typed-throws closure:
    /// storing one needs that function type's metadata, which only the Swift 6.0 runtime, iOS 18 /
    /// macOS 15, can make.)
    private let progress = LockedState((
        pending: [AnyType](), remaining: 0, problems: [InjectionError](), failures: [AnyType: InjectionError](),
        resolve: Unchecked<@Sendable (AnyType) -> InjectionError?>?.none, registrations: [Registration]()))
    /// Signalled when the last registration is done.
    private let finished = DispatchSemaphore(value: 0)
    /// The roots whose check parked a worker, by the identities of the registrations they ran with (see the
    /// type's comment), which are kept alive with them so that their identities stay theirs.
    private static let parked = LockedState([Set<ObjectIdentifier>: Memory]())
    private typealias Memory = (kept: [Registration], roots: [AnyType: InjectionError])

    /// Resolves each of `types` (of `registrations`, the copy's) with `resolve` on worker threads; returns every
    /// problem found, once each. A type whose check parked a worker in an earlier verification of the same
    /// registrations is reported from memory.
    func run(
        _ types: [AnyType], of registrations: [Registration], resolve: @escaping @Sendable (AnyType) -> InjectionError?
    ) -> [InjectionError] {
        let identity = Set(registrations.map(ObjectIdentifier.init))
        let remembered = Self.parked.withLock { $0[identity]?.roots } ?? [:]
        let types = types.filter { remembered[$0] == nil }
        progress.withLock {
            ($0.pending, $0.remaining, $0.resolve) = (types.reversed(), types.count, Unchecked(resolve))
            ($0.problems, $0.registrations) = (Array(remembered.values), registrations)
        }
        if !types.isEmpty {
            startWorker()
            finished.wait()
        }
        return progress.withLock { progress in
            progress.resolve = nil
            return Self.distinct(progress.problems)
        }
    }

    /// Why resolving `key` in the copy fails at once, if its build was abandoned.
    func failure(for key: AnyType) -> InjectionError? {
        progress.withLock { $0.failures.isEmpty ? nil : $0.failures[key] }
    }

    /// Records that `key`'s build was abandoned with `failure`.
    func fail(_ key: AnyType, with failure: InjectionError) { progress.withLock { $0.failures[key] = failure } }

    /// Records `error`, abandons the resolution running `frame` in `container`, and, on a worker, remembers the
    /// root it was checking and hands the remaining registrations to a new worker. Never returns.
    func park(_ error: InjectionError, container: InjectionContainer, frame: Frame?) -> Never {
        record(error)
        if let frame { container.abandon(frame, failure: error) }
        if let root = Self.workers.withLock({ $0[Self.threadIdentity] }) {
            // The root, and the keys whose builds it abandoned: checked again, each would park another thread.
            let (kept, failures) = progress.withLock { ($0.registrations, $0.failures) }
            Self.parked.withLock { parked in
                let identity = Set(kept.map(ObjectIdentifier.init))
                let roots = failures.merging([root: error]) { $1 }
                parked[identity, default: (kept, [:])].roots.merge(roots) { old, _ in old }
            }
            finishItem()
            startWorker()
        }
        OSThread.park()
    }

    private func startWorker() {
        OSThread.detach { [self] in
            while let type = progress.withLock({ $0.pending.popLast() }) {
                Self.workers.withLock { $0[Self.threadIdentity] = type }
                if let error = progress.withLock({ $0.resolve })?.value(type) { record(error) }
                finishItem()
            }
            Self.workers.withLock { $0[Self.threadIdentity] = nil }
        }
    }

    /// The threads running verifications, with the type each is checking (a worker that parks stays in it).
    private static let workers = LockedState([ObjectIdentifier: AnyType]())

    /// The calling thread's state, made if needed, stands for the thread.
    private static var threadIdentity: ObjectIdentifier { ObjectIdentifier(ThreadState.currentOrNew!) }

    private func record(_ error: InjectionError) { progress.withLock { $0.problems.append(error) } }

    private func finishItem() {
        let isLast = progress.withLock {
            $0.remaining -= 1
            return $0.remaining == 0
        }
        if isLast { finished.signal() }
    }

    /// One error per missing type, failing factory or cycle (whatever rotation it was found in),
    /// keeping the shortest chain, in a stable order.
    private static func distinct(_ problems: [InjectionError]) -> [InjectionError] {
        var kept: [String: InjectionError] = [:]
        for problem in problems {
            let identity = problem.kind == .cycle
                ? "cycle:" + Set(problem.chain).sorted().joined(separator: ",")
                : "\(problem.kind):\(problem.typeName)"
            if let existing = kept[identity], Self.order(existing, before: problem) { continue }
            kept[identity] = problem
        }
        return kept.values.sorted { ($0.kind.description, $0.typeName) < ($1.kind.description, $1.typeName) }
    }

    /// Shorter chains first, then by the chain's names.
    private static func order(_ lhs: InjectionError, before rhs: InjectionError) -> Bool {
        if lhs.chain.count != rhs.chain.count { return lhs.chain.count < rhs.chain.count }
        return lhs.chain.joined(separator: "\u{1}") <= rhs.chain.joined(separator: "\u{1}")
    }
}

/// What a verification asks of a container, and of its state.
extension InjectionContainer {
    /// In a `verify()` copy: fails the builds of the resolution `frame` belongs to, so nothing waits for
    /// the thread that is about to park.
    func abandon(_ frame: Frame, failure: InjectionError) {
        // What the parked chain's factories resolved, the failing one included, are edges of the graph.
        for link in frame.chain where link.container == ObjectIdentifier(self) { noteBuilt(link, stored: false) }
        apply { state in
            let (keys, evictions) = state.abandonBuilds(of: frame.resolution)
            for key in keys { verification?.fail(key, with: failure) }
            return evictions
        }
    }
}

extension ContainerState {
    /// Abandons the builds `owner` started: its thread will never finish them (`verify()` parks it).
    /// Returns their keys, and their waiters to wake as a reset's are (`abandoned`, `waiters`).
    mutating func abandonBuilds(of owner: Resolution) -> (keys: [AnyType], evictions: Evictions) {
        var evictions = Evictions()
        let keys = slots.keys.filter { slots[$0]!.isBuilt(by: owner) }
        for key in keys { evictions.empty(&slots[key]!) }
        return (keys, evictions)
    }
}
