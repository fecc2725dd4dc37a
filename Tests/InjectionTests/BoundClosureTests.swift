import Dispatch
import Foundation
import Injection
import InjectionTesting
import Testing

// `InjectionManager.bound(_:)`: a closure that resolves from the container current where it was made, on
// whatever thread or queue it later runs, even after that scope has ended. Work sent outside structured
// concurrency (GCD, `Thread`) otherwise sees the process-wide container.

private protocol AvatarAPI: Sendable { func fetch(_ user: String) -> String }
private struct LiveAvatarAPI: AvatarAPI { func fetch(_ user: String) -> String { "200 https://api.example.com/avatar/\(user)" } }
private struct MockAvatarAPI: AvatarAPI { func fetch(_ user: String) -> String { "mock /avatar/\(user)" } }

/// The avatar for `user` from the current container's `AvatarAPI`, or `nil` if it has none. (Through the
/// throwing API: a wrong container then fails the test instead of trapping, which would end the whole run.)
@Sendable private func fetchAvatar(_ user: String) -> String? {
    (try? InjectionManager.resolve((any AvatarAPI).self))?.fetch(user)
}

/// Runs `body` on a new `Thread`; returns what it returned, or `nil` if it did not finish within the limit.
private func onPlainThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result? {
    let done = DispatchSemaphore(value: 0)
    let result = Collector<Result>()
    let thread = Thread {
        result.append(body())
        done.signal()
    }
    thread.start()
    guard done.wait(timeout: .now() + waitLimit) == .success else { return nil }
    return result.values.first
}

/// Runs `body` on a global dispatch queue; the same.
private func onGlobalQueue<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result? {
    let done = DispatchSemaphore(value: 0)
    let result = Collector<Result>()
    DispatchQueue.global().async {
        result.append(body())
        done.signal()
    }
    guard done.wait(timeout: .now() + waitLimit) == .success else { return nil }
    return result.values.first
}

@Suite("InjectionManager.bound")
struct BoundClosureTests {
    @Test("a closure bound inside withContainer resolves from that container on a plain Thread and on a queue, after the scope ended")
    func boundInWithContainer() {
        let container = InjectionContainer()
        container.register((any AvatarAPI).self) { MockAvatarAPI() }
        let fetch = InjectionManager.withContainer(container) {
            InjectionManager.bound { fetchAvatar("alice") }
        }
        let unbound: @Sendable () -> Bool = { InjectionManager.currentContainer === InjectionManager.sharedContainer }
        #expect(onPlainThread(unbound) == true, "a plain thread sees the process-wide container unless bound")
        #expect(onPlainThread(fetch) == "mock /avatar/alice")
        #expect(onGlobalQueue(fetch) == "mock /avatar/alice")
        #expect(fetch() == "mock /avatar/alice", "also where it was made, after the scope ended")
    }

    @Test("a bound closure keeps its container alive and binds it only while it runs")
    func boundKeepsContainer() {
        weak var released: InjectionContainer?
        let isCurrent: @Sendable () -> Bool
        do {
            let container = InjectionContainer()
            released = container
            let id = ObjectIdentifier(container)
            isCurrent = InjectionManager.withContainer(container) {
                InjectionManager.bound { ObjectIdentifier(InjectionManager.currentContainer) == id }
            }
        }
        #expect(released != nil, "the closure holds its container")
        #expect(onGlobalQueue(isCurrent) == true)
        #expect(InjectionManager.currentContainer === InjectionManager.sharedContainer, "nothing stays bound after it ran")
    }

    @Test("a closure bound at top level resolves from the process-wide container")
    func boundAtTopLevel() {
        let isShared = InjectionManager.bound { InjectionManager.currentContainer === InjectionManager.sharedContainer }
        #expect(onPlainThread(isShared) == true)
        #expect(InjectionManager.withContainer(InjectionContainer()) { isShared() }, "the binding where it runs does not matter")
    }
}

@Suite("InjectionManager.bound in an isolated test", .isolatedInjection)
struct BoundInIsolatedTestTests {
    @Test("GCD work bound in a test resolves the test's mock, not the live service")
    func boundInTest() {
        InjectionManager.register((any AvatarAPI).self) { MockAvatarAPI() }
        let fetch = InjectionManager.bound { fetchAvatar("alice") }
        #expect(onGlobalQueue(fetch) == "mock /avatar/alice")
        #expect(onPlainThread(fetch) == "mock /avatar/alice")
        #expect(!InjectionManager.sharedContainer.isRegistered((any AvatarAPI).self))
    }
}
