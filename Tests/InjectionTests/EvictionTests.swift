import Foundation
import Injection
import InjectionTesting
import Testing

// What a reset, an unregister or a re-registration evicts, and who is told: every evicted instance is
// told once (`dispose()`), outside the lock, so it may use the container; singletons are kept, and a
// supplied instance stays its owner's.

private final class Socket: InjectionDisposable, @unchecked Sendable {
    let disposals: Counter
    init(disposals: Counter) { self.disposals = disposals }
    func dispose() {
        disposals.increment()
        // dispose() runs outside the lock, so it may use the container.
        _ = InjectionManager.isRegistered(Socket.self)
    }
}

private final class AdvDisposableDB: InjectionDisposable, @unchecked Sendable {
    private let lock = NSLock()
    private var disposals = 0
    var disposeCount: Int { lock.withLock { disposals } }
    func dispose() { lock.withLock { disposals += 1 } }
}

@Suite("Eviction and disposal")
struct EvictionTests {
    @Test("evicted instances are told once, outside the lock, by reset, unregister and re-registration", .isolatedInjection)
    func disposal() {
        let disposals = Counter()
        InjectionManager.register(Socket.self) { Socket(disposals: disposals) }
        _ = Inject(Socket.self)
        InjectionManager.resetCurrentContainer()
        #expect(disposals.value == 1)
        InjectionManager.resetCurrentContainer()       // Nothing cached: nothing to tell.
        #expect(disposals.value == 1)
        _ = Inject(Socket.self)
        InjectionManager.register(Socket.self) { Socket(disposals: disposals) }
        #expect(disposals.value == 2)
        _ = Inject(Socket.self)
        InjectionManager.unregister(Socket.self)
        #expect(disposals.value == 3)
        InjectionManager.resetCurrentContainer()       // Both replaced instances were told already.
        #expect(disposals.value == 3)
    }

    @Test("singletons are not disposed by a reset", .isolatedInjection)
    func singletonsSurviveWithoutDisposal() {
        let disposals = Counter()
        InjectionManager.register(Socket.self, lifetime: .singleton) { Socket(disposals: disposals) }
        _ = Inject(Socket.self)
        InjectionManager.resetCurrentContainer()
        #expect(disposals.value == 0)
    }

    @Test("a copy (a test's container) that replaces an instance registration does not dispose the original's instance")
    func copyDoesNotDisposeTheOriginalsInstance() throws {
        let original = InjectionContainer()
        let db = AdvDisposableDB()
        original.register(AdvDisposableDB.self, instance: db)
        #expect(try original.resolve(AdvDisposableDB.self) === db)

        let testContainer = InjectionContainer(copying: original)   // what .isolatedInjection makes
        _ = try testContainer.resolve(AdvDisposableDB.self)
        testContainer.register(AdvDisposableDB.self) { AdvDisposableDB() }   // the test mocks it
        testContainer.removeAll()
        #expect(try original.resolve(AdvDisposableDB.self) === db, "the original still serves it")
        #expect(db.disposeCount == 0, "the original container's live instance was disposed by a copy")
    }
}
