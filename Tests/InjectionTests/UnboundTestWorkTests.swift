import Foundation
import Injection
import Testing

// Work a test sends outside structured concurrency (a queue, a thread) resolves from the process-wide container.
// While a test's container exists, a registration missing at any depth of such a resolve gets the hint to carry
// the test's container along with InjectionManager.bound, not the launch advice alone.

private final class UnboundSession: Sendable {}
private final class UnboundProfile: Sendable {
    let session: UnboundSession
    init(session: UnboundSession = Inject()) { self.session = session }
}

@Suite("Unbound test work")
struct UnboundTestWorkTests {
    @Test("a trap for a dependency missing below the top of an unbound resolve, while a test's container lives, names InjectionManager.bound")
    func nestedMissNamesBound() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let shared = InjectionManager.sharedContainer
            shared.register(UnboundProfile.self) { UnboundProfile() }
            let testContainer = InjectionContainer(copying: shared, testName: "\"a test\"")
            withExtendedLifetime(testContainer) {
                let done = DispatchSemaphore(value: 0)
                // Work a test sent to a thread: bound to no container.
                Thread { _ = Inject(UnboundProfile.self); done.signal() }.start()
                done.wait()
            }
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("no registration for UnboundSession (resolving UnboundProfile → UnboundSession)"), "\(output)")
        #expect(output.contains("wrap it in InjectionManager.bound { ... }"), "\(output)")
    }
}
