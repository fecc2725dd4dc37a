import Foundation
@_spi(Testing) import InjectionTesting
import InjectionTesting
import Testing

// What the library lets go of, it lets go of outside its locks: an object's deinit is user code, which
// may use the container, the reset block or the diagnostics handler, and would deadlock (or abort, with
// debug builds' error-checking mutexes) under their locks. A deinit checks it through another thread, which
// must be able to take the lock in question, or by the count of the library's locks its thread holds. A `.weak` instance read under the container's
// lock, the registrations a throwing nested reset block discards, a replaced diagnostics handler, and a
// transient's registration evicted by an unregister or a re-registration (whose release may deinit another container) are
// each released after the lock is dropped.

/// Knows whether the thread that drops it is inside the container's `register` call, and if so asks another
/// thread to take the container's lock, which it can only do if this thread does not hold it.
private final class LockSensingWeak: Sendable {
    let container: WeakContainerRef
    let findings: Collector<String>
    init(container: WeakContainerRef, findings: Collector<String>) {
        self.container = container
        self.findings = findings
    }
    deinit {
        guard Thread.current.threadDictionary["injection.insideRegister"] != nil, let container = container.value else { return }
        // Released inside register(): whoever released it must not hold the container's lock.
        let probe = DispatchSemaphore(value: 0)
        Thread {
            _ = container.isRegistered(LockSensingWeak.self)
            probe.signal()
        }.start()
        if probe.wait(timeout: .now() + waitLimit) == .timedOut {  // Generous: in a loaded parallel run a thread may start late.
            // The probe gets the lock once register returns; waiting for it here would deadlock.
            findings.append("LockSensingWeak's deinit ran under the container's lock (inside register)")
        } else {
            findings.append("LockSensingWeak's deinit ran inside register, not under the lock")
        }
    }
}

private final class WeakContainerRef: @unchecked Sendable {
    weak var value: InjectionContainer?
    init(_ value: InjectionContainer) { self.value = value }
}

private final class DiscardMarker: Sendable {}

/// Records how many of the library's locks the thread that lets it go holds (counted in debug builds, where
/// the tests run). Not a probe through another thread or a task: the tasks' pool may be busy with other
/// tests for longer than any timeout.
private final class LockSensingCapture: @unchecked Sendable {
    let findings: Collector<String>
    init(findings: Collector<String>) { self.findings = findings }
    deinit {
        switch InjectionProbe.locksHeldByCurrentThread {
        case 0?: findings.append("released outside every lock")
        case let held?: findings.append("released under \(held) of the library's locks")
        case nil: findings.append("not counted: a release build")
        }
    }
}

/// What a handler closure captures, such as a logger: when it goes, it asks (from another thread) for the
/// process-wide handler, which that thread only gets if the thread releasing it does not hold its lock.
private final class HandlerCapture: @unchecked Sendable {
    let findings: Collector<String>
    init(findings: Collector<String>) { self.findings = findings }
    func log(_ line: String) {}
    deinit {
        let probe = DispatchSemaphore(value: 0)
        Thread {
            _ = InjectionManager.diagnosticsHandler
            probe.signal()
        }.start()
        if probe.wait(timeout: .now() + waitLimit) == .timedOut {  // Generous: in a loaded parallel run a thread may start late.
            findings.append("released under the diagnostics handler's lock")  // The thread gets it once it is dropped.
        } else {
            findings.append("released outside the lock")
        }
    }
}

private final class OwnedInstance: Sendable {}
private final class OwningTransient: Sendable {}
private final class ContainerOwner: Sendable {
    let container: InjectionContainer
    init(_ container: InjectionContainer) { self.container = container }
}

@Suite("Releases outside locks")
struct ReleasesOutsideLocksTests {
    @Test("a .weak instance whose last holder lets go while its type is registered again is never released under the container's lock")
    func weakInstanceIsNeverReleasedUnderTheLock() async {
        let findings = Collector<String>()
        await onOwnThread {
            let container = InjectionContainer()
            let ref = WeakContainerRef(container)
            let factory: @Sendable () -> LockSensingWeak = { LockSensingWeak(container: ref, findings: findings) }
            container.register(LockSensingWeak.self, lifetime: .weak, factory: factory)
            // Round by round: the holder resolves (and so holds) the current registration's instance, says so,
            // and lets it go a varying moment later, while this thread registers the type again.
            let ready = AtomicWord(-1), done = AtomicWord(-1), stop = AtomicWord(0)
            let holderDone = DispatchSemaphore(value: 0)
            Thread {
                var round = 0
                while !(stop.value != 0) {
                    var held: LockSensingWeak? = try? container.resolve(LockSensingWeak.self)
                    ready.value = round
                    var spin = 0
                    for _ in 0..<((round &* 37) % 3000) { spin &+= 1 }
                    withExtendedLifetime(spin) {}
                    withExtendedLifetime(held) {}
                    held = nil
                    while done.value < round && !(stop.value != 0) { sched_yield() }
                    round += 1
                }
                holderDone.signal()
            }.start()
            // This thread only registers: a deinit that runs here runs inside register().
            Thread.current.threadDictionary["injection.insideRegister"] = true
            let deadline = Date(timeIntervalSinceNow: 1.5)
            var round = 0
            while findings.values.isEmpty && Date() < deadline {
                while ready.value < round { sched_yield() }
                container.register(LockSensingWeak.self, lifetime: .weak, factory: factory)
                done.value = round
                round += 1
            }
            Thread.current.threadDictionary["injection.insideRegister"] = nil
            stop.value = 1
            holderDone.wait()
        }
        let underLock = findings.values.filter { $0.contains("under the container's lock") }
        #expect(underLock.isEmpty, "\(underLock.first ?? "")")
    }

    @Test("a factory's captures that a throwing nested reset block drops are released outside every lock", arguments: [false, true])
    func nestedBlockThatThrowsReleasesOutsideTheLock(suppliedInstance: Bool) async {
        struct NestedFailure: Error {}
        let findings = Collector<String>()
        await onOwnThread {
            let container = InjectionContainer()
            InjectionManager.withContainer(container) {
                InjectionManager.resetCurrentContainer {
                    InjectionManager.register(DiscardMarker.self) { DiscardMarker() }
                    do {
                        try InjectionManager.resetCurrentContainer { () throws(NestedFailure) in
                            // The registration, and the object it captures, live only in the block's records.
                            if suppliedInstance {
                                InjectionManager.register(LockSensingCapture.self, instance: LockSensingCapture(findings: findings))
                            } else {
                                let captured = LockSensingCapture(findings: findings)
                                InjectionManager.register(LockSensingCapture.self) { captured }
                            }
                            throw NestedFailure()
                        }
                    } catch {}
                }
            }
        }
        #expect(findings.values.count == 1)
        #expect(!findings.values.contains { $0.hasPrefix("released under") }, "\(findings.values)")
    }

    @Test("replacing the diagnostics handler releases the old one, and what it captures, outside the handler's lock")
    func replacedHandlerIsReleasedOutsideTheLock() async {
        let findings = Collector<String>()
        await onOwnThread {
            withRecordedDiagnostics { _ in
                let previous = InjectionManager.diagnosticsHandler
                do {
                    let logger = HandlerCapture(findings: findings)
                    InjectionManager.diagnosticsHandler = { line in logger.log(line) }
                }
                // The handler held the last reference to the logger.
                InjectionManager.diagnosticsHandler = previous
            }
        }
        #expect(findings.values == ["released outside the lock"])
    }

    /// Releasing a transient's registration drops the last reference to an object that owns another container
    /// this thread resolved from: that container's deinit takes the locks again.
    @Test("an evicted transient's registration that owns another container releases it without deadlock")
    func evictionReleasesContainerOwner() throws {
        for path in 0..<3 {
            let outer = InjectionContainer()
            weak var weakInner: InjectionContainer?
            do {
                let inner = InjectionContainer()
                inner.register(OwnedInstance.self, lifetime: .scoped) { OwnedInstance() }
                _ = try inner.resolve(OwnedInstance.self)
                weakInner = inner
                let owner = ContainerOwner(inner)
                outer.register(OwningTransient.self, lifetime: .transient) { _ = owner; return OwningTransient() }
            }
            for _ in 0..<3 { _ = try outer.resolve(OwningTransient.self) }
            #expect(weakInner != nil, "path \(path): the registration's capture is alive while it is registered")
            switch path {
            case 0: outer.unregister(OwningTransient.self)
            case 1: outer.register(OwningTransient.self, lifetime: .transient) { OwningTransient() }
            default:
                // Unregistered while this thread runs a transient: released by the time it returns.
                outer.register(OwnedInstance.self, lifetime: .transient) { [unowned outer] in  // Not a cycle through its own container.
                    outer.unregister(OwningTransient.self)
                    return OwnedInstance()
                }
                for _ in 0..<3 { _ = try outer.resolve(OwnedInstance.self) }
            }
            #expect(weakInner == nil, "path \(path)")
        }
    }
}
