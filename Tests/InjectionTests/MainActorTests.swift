import CInjectionTestSupport
import Foundation
import Injection
import _InjectionPlatform
import InjectionTesting
import Testing

// Main-actor types are built on the main actor: a synchronous resolve off it is refused with a message,
// never a crash inside the factory, and `resolveAsync` hops there from anywhere.

@MainActor
private final class ProfileViewModel {
    var title = "profile"
    init() {}
}

@MainActor
private final class ProfileScreen {
    let viewModel: ProfileViewModel = Inject()
}

@MainActor
private final class MainModel {
    init() {}
}

@Suite("Main actor", .isolatedInjection)
struct MainActorTests {
    @MainActor
    @Test("a main-actor type registers in one line and injects into main-actor code")
    func mainActorType() {
        InjectionManager.register(ProfileViewModel.self, isolation: MainActor.shared) { ProfileViewModel() }
        let screen = ProfileScreen()
        #expect(screen.viewModel.title == "profile")
        #expect(Inject(ProfileViewModel.self) === screen.viewModel)
    }

    @Test("resolving a main-actor type off the main actor fails with a clear error, not a crash")
    func mainActorTypeOffMainThread() {
        let container = InjectionContainer()
        container.register(ProfileViewModel.self, isolation: MainActor.shared) { ProfileViewModel() }
        let errors = Collector<InjectionError>()
        let done = Gate()
        onThread {
            do throws(InjectionError) { _ = try container.resolve(ProfileViewModel.self) } catch { errors.append(error) }
            done.open()
        }
        #expect(done.wait())
        let error = errors.values.first
        #expect(error?.kind == .wrongIsolation)
        #expect(error?.description.hasPrefix("Injection: ProfileViewModel is registered with isolation: MainActor, but it was resolved synchronously off the main actor") == true)
        #expect(error?.description.contains("resolveAsync(ProfileViewModel.self)") == true)
    }

    @Test("Inject() of a main-actor type off the main actor traps with that message")
    func mainActorTrap() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            InjectionManager.register(ProfileViewModel.self, isolation: MainActor.shared) { ProfileViewModel() }
            await Task.detached { _ = Inject(ProfileViewModel.self) }.value
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Injection: ProfileViewModel is registered with isolation: MainActor"))
    }

    @Test("resolveAsync hops to the main actor for a main-actor type, and the instance is shared")
    func mainActorTypeAsync() async throws {
        InjectionManager.register(ProfileViewModel.self, isolation: MainActor.shared) { ProfileViewModel() }
        let fromBackground = try await Task.detached { [container = InjectionManager.currentContainer] in
            try await container.resolveAsync(ProfileViewModel.self)
        }.value
        let fromMain = await MainActor.run { Inject(ProfileViewModel.self) }
        #expect(fromBackground === fromMain)
    }

    @Test("resolveAsync of a main-actor type racing resets never fails")
    func mainActorAsyncRacingResets() async throws {
        let container = InjectionManager.currentContainer
        container.register(MainModel.self, isolation: MainActor.shared) { MainModel() }
        let stop = Counter()
        let resetter = Task {  // On a thread of its own: a loop that never suspends would hold one of the pool's.
            await onOwnThread { while stop.value == 0 { container.reset() } }
        }
        let failures = Counter()
        for _ in 0..<5_000 {
            do throws(InjectionError) { _ = try await container.resolveAsync(MainModel.self) } catch { failures.increment() }
        }
        stop.increment()
        await resetter.value
        #expect(failures.value == 0)
    }
}

/// The check a synchronous resolve falls back to, where the compiler gives no `#isolation`.
@Suite("Main-thread check")
struct MainThreadCheckTests {
    @Test("the main-thread check answers for the process it runs in, in a child made by fork() too")
    func mainThreadAfterFork() {
        let answers = onSizedStack { () -> [Int32] in
            let before: Int32 = _injection_is_main_thread() ? 1 : 0  // A secondary thread; now cached.
            let child = test_fork_and_check { _injection_is_main_thread() }  // The child's only thread is its main one.
            let after: Int32 = _injection_is_main_thread() ? 1 : 0
            return [before, child, after]
        }
        #expect(answers == [0, 0, 0], "secondary thread: 0 (not main); child's exit status: 0 (main); the parent's thread again: 0")
    }
}
