import Injection
import InjectionTesting
import Testing

private struct Abort: Error {}

@Suite("resetCurrentContainer { }", .isolatedInjection)
struct TransactionTests {
    @Test("registrations inside the block apply together with the reset")
    func registrationsApplyOnReturn() {
        InjectionManager.register(Session.self) { Session(user: "a") }
        let before: Session = Inject()
        InjectionManager.resetCurrentContainer {
            InjectionManager.register(Session.self) { Session(user: "b") }
            #expect(InjectionManager.isRegistered(Session.self))
        }
        let after: Session = Inject()
        #expect(before.user == "a")
        #expect(after.user == "b")
    }

    @Test("resolving inside the block throws resolvedDuringReset")
    func resolveInsideBlockThrows() {
        InjectionManager.register(Session.self) { Session(user: "a") }
        InjectionManager.resetCurrentContainer {
            let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve(Session.self) }
            #expect(error?.kind == .resolvedDuringReset)
            #expect(error?.description.hasPrefix("Injection: Session was resolved inside resetCurrentContainer { }") == true)
        }
    }

    @Test("a task started inside the block that resolves asynchronously while it is open gets resolvedDuringReset")
    func asyncResolveInsideBlockThrows() {
        let container = InjectionManager.currentContainer
        container.register(Session.self) { Session(user: "a") }
        let outcome = Collector<InjectionError.Kind?>()
        container.resetCurrentContainer {
            // `Task.immediate` runs on this thread until it first suspends; the resolve decides before
            // any suspension, so the block is still open and no thread waits for the task pool.
            Task.immediate {
                do throws(InjectionError) {
                    _ = try await container.resolveAsync(Session.self)
                    outcome.append(nil)
                } catch {
                    outcome.append(error.kind)
                }
            }
        }
        #expect(outcome.values == [.resolvedDuringReset])
    }

    @Test("unregister inside the block is applied too, and isRegistered sees it")
    func unregisterInsideBlock() {
        InjectionManager.register(Session.self) { Session(user: "a") }
        InjectionManager.resetCurrentContainer {
            InjectionManager.unregister(Session.self)
            #expect(!InjectionManager.isRegistered(Session.self))
        }
        #expect(!InjectionManager.isRegistered(Session.self))
    }

    @Test("a block that throws applies nothing, not even the reset")
    func throwingBlockAppliesNothing() {
        InjectionManager.register(Session.self) { Session(user: "a") }
        let before: Session = Inject()
        #expect(throws: Abort.self) {
            try InjectionManager.resetCurrentContainer {
                InjectionManager.register(Session.self) { Session(user: "b") }
                throw Abort()
            }
        }
        #expect(Inject(Session.self) === before)
    }

    @Test("nested blocks commit once, with the outer one")
    func nestedBlocks() {
        InjectionManager.register(Session.self) { Session(user: "a") }
        InjectionManager.resetCurrentContainer {
            InjectionManager.resetCurrentContainer {
                InjectionManager.register(Session.self) { Session(user: "inner") }
            }
            #expect(InjectionManager.isRegistered(Session.self))
            InjectionManager.register((any API).self) { LiveAPI() }
        }
        #expect(Inject(Session.self).user == "inner")
        #expect(InjectionManager.isRegistered((any API).self))
    }
}
