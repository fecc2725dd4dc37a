import Foundation
import Injection
import InjectionTesting
import Testing

// `.isolatedInjection(strict: true)`: a test that resolves a service whose registration came only from the
// copied launch registrations fails with one recorded issue per type, naming the type and the test, and the
// run goes on; the instance is built in the test's own container. What the test or its `startingWith:`
// registered is its own. These tests register "launch" services in the process-wide container, so they take
// turns with each other (one serialized suite) and use types no other test registers.

private final class StrictLaunchService: Sendable {
    let serial: Int
    init(serial: Int) { self.serial = serial }
}
private final class StrictDependent: Sendable {
    let service: StrictLaunchService
    init() { service = Inject() }
}
private final class StrictOwnService: Sendable {}
private final class StrictStarted: Sendable {}
private final class StrictEscaped: Sendable {}
private final class StrictCachedEscape: Sendable {}
private final class StrictAsyncEscape: Sendable {}
/// Supplied at launch with `register(_:instance:)`: the app's one object.
private final class StrictSuppliedConfig: Sendable {}
private let suppliedConfig = StrictSuppliedConfig()

private let launchBuilds = Counter()

/// The app's launch registrations, as these tests see them: a container that stands in for the process-wide one
/// (which other tests copy meanwhile), bound around each test's scope as the trait's copy source.
private let launchContainer: InjectionContainer = {
    let container = InjectionContainer()
    container.register(StrictLaunchService.self) { StrictLaunchService(serial: launchBuilds.increment()) }
    container.register(StrictDependent.self) { StrictDependent() }
    container.register(StrictSuppliedConfig.self, instance: suppliedConfig)
    return container
}()

/// Runs `body` in a strict test's scope, as `.isolatedInjection(strict: true)` gives it to a test, copied from
/// ``launchContainer``; returns the issues it recorded (which are expected, so they do not fail this test).
private func recordedIssues(startingWith: (@Sendable () -> Void)? = nil, _ body: @escaping @Sendable () async throws -> Void) async throws -> [String] {
    let trait: IsolatedInjectionTrait = startingWith.map { .isolatedInjection(startingWith: $0, strict: true) }
        ?? .isolatedInjection(strict: true)
    let recorded = Collector<String>()
    try await withKnownIssue(isIntermittent: true) {
        try await InjectionManager.withContainer(launchContainer) {
            try await trait.provideScope(for: Test.current!, testCase: Test.Case.current, performing: body)
        }
    } matching: { issue in
        recorded.append(issue.comments.map(\.rawValue).joined(separator: " "))
        return true
    }
    return recorded.values
}

@Suite("Strict isolation", .serialized)
struct StrictIsolationTests {
    @Test("resolving a launch service records one issue per type, naming the type, the test and the fix; the run goes on")
    func launchServiceIsReported() async throws {
        let issues = try await recordedIssues {
            let first = try InjectionManager.resolve(StrictLaunchService.self)   // the throwing API returns it
            let again: StrictLaunchService = Inject()
            #expect(first === again)
            _ = Inject(StrictDependent.self)   // its own issue; its dependency is already reported
        }
        #expect(issues.count == 2, "\(issues)")
        let service = try #require(issues.first { $0.contains("StrictLaunchService") })
        #expect(service.hasPrefix("Injection: StrictLaunchService"))
        #expect(service.contains("resolving a launch service records one issue per type"))
        #expect(service.contains("InjectionManager.register(StrictLaunchService.self)"))
        #expect(issues.contains { $0.contains("StrictDependent") })
    }

    @Test("an instance supplied at launch is the caller's one object: a strict test gets that object, and it is reported")
    func suppliedInstanceIsSharedAndReported() async throws {
        let issues = try await recordedIssues {
            #expect(Inject(StrictSuppliedConfig.self) === suppliedConfig)
            #expect(Inject(StrictSuppliedConfig.self) === suppliedConfig)
        }
        #expect(issues.count == 1, "\(issues)")
        #expect(issues.first?.hasPrefix("Injection: StrictSuppliedConfig") == true, "\(issues)")
    }

    @Test("a dependency that something the test builds resolves is reported too")
    func dependencyIsReported() async throws {
        let issues = try await recordedIssues {
            InjectionManager.register(StrictDependent.self) { StrictDependent() }   // the test's own
            _ = Inject(StrictDependent.self)
        }
        #expect(issues.count == 1, "\(issues)")
        #expect(issues.first?.contains("StrictLaunchService") == true)
    }

    @Test("what the test or its startingWith: registered is its own: nothing is recorded")
    func ownRegistrationsAreQuiet() async throws {
        let issues = try await recordedIssues(startingWith: {
            InjectionManager.register(StrictLaunchService.self) { StrictLaunchService(serial: -1) }
        }) {
            InjectionManager.register(StrictOwnService.self) { StrictOwnService() }
            _ = Inject(StrictOwnService.self)
            #expect(Inject(StrictLaunchService.self).serial == -1)
        }
        #expect(issues == [])
    }

    @Test("without strict, the copied launch registrations are used quietly")
    func notStrictIsQuiet() async throws {
        let recorded = Collector<String>()
        try await InjectionManager.withContainer(launchContainer) {
            try await IsolatedInjectionTrait.isolatedInjection.provideScope(for: Test.current!, testCase: Test.Case.current) {
                recorded.append("\(Inject(StrictLaunchService.self).serial)")
            }
        }
        #expect(recorded.values.count == 1)
    }

    @Test("while a strict test runs, a resolve bound to no container is reported to the process-wide handler once per type, naming InjectionManager.bound")
    func escapeIsReported() throws {
        // StrictEscaped is registered nowhere (registering it in the process-wide container would show in the
        // copies other tests make meanwhile); the report comes before the lookup, so it is made all the same.
        let resolved = Collector<Bool>()
        let lines = withRecordedDiagnostics { lines in
            // Work a test sends to threads without binding it: it falls through to the process-wide container.
            let escape: @Sendable (Int) -> Void = { _ in resolved.append((try? InjectionManager.resolve(StrictEscaped.self)) != nil) }
            #expect(runOnThreads(2, escape))
            #expect(lines.about("StrictEscaped").isEmpty, "no strict test container: nothing to report")
            let strictTest = InjectionContainer(copying: InjectionManager.sharedContainer, testName: "\"escape\"", strict: { _ in })
            withExtendedLifetime(strictTest) {
                #expect(runOnThreads(2, escape))
                #expect(runOnThreads(1, escape))
            }
            return lines.about("StrictEscaped")
        }
        #expect(resolved.values == [false, false, false, false, false], "the resolves ran, and found nothing")
        #expect(lines.count == 1, "\(lines)")
        let line = try #require(lines.first)
        #expect(line.hasPrefix("Injection: StrictEscaped"))
        #expect(line.contains("InjectionManager.bound"))
    }

    @Test("while a strict test runs, an unbound resolve is reported also where the thread had cached the instance, and from resolveAsync")
    func cachedAndAsyncEscapesAreReported() async throws {
        let shared = InjectionManager.sharedContainer
        shared.register(StrictCachedEscape.self) { StrictCachedEscape() }
        defer { shared.unregister(StrictCachedEscape.self) }
        let (before, after) = await onOwnThread { () -> ([String], [String]) in
            withRecordedDiagnostics { lines in
                let cached = DispatchSemaphore(value: 0), strictStarted = DispatchSemaphore(value: 0)
                let done = DispatchSemaphore(value: 0), resolved = Collector<StrictCachedEscape>()
                onThread {
                    // Twice before any strict test: built, then cached (the second resolve is a cached one).
                    for _ in 0..<2 { resolved.append(Inject(StrictCachedEscape.self)) }
                    cached.signal()
                    _ = strictStarted.wait(timeout: .now() + waitLimit)
                    resolved.append(Inject(StrictCachedEscape.self))  // A cached resolve.
                    done.signal()
                }
                _ = cached.wait(timeout: .now() + waitLimit)
                let before = lines.about("StrictCachedEscape") + lines.about("StrictAsyncEscape")
                let strictTest = InjectionContainer(copying: shared, testName: "\"escape\"", strict: { _ in })
                withExtendedLifetime(strictTest) {
                    strictStarted.signal()
                    _ = done.wait(timeout: .now() + waitLimit)
                    Task.detached { _ = try? await InjectionManager.resolveAsync(StrictAsyncEscape.self); done.signal() }
                    _ = done.wait(timeout: .now() + waitLimit)
                }
                #expect(resolved.values.count == 3 && resolved.values.allSatisfy { $0 === resolved.values[0] })
                return (before, lines.about("StrictCachedEscape") + lines.about("StrictAsyncEscape"))
            }
        }
        #expect(before.isEmpty, "no strict test container: nothing to report")
        #expect(after.count == 2, "\(after)")
        #expect(after.first?.hasPrefix("Injection: StrictCachedEscape") == true)
        #expect(after.last?.hasPrefix("Injection: StrictAsyncEscape") == true)
    }

    @Test("while a test's container lives, a missing registration met by code bound to no container names InjectionManager.bound")
    func missingEscapeNamesBound() throws {
        let testContainer = InjectionContainer(copying: InjectionManager.sharedContainer, testName: "\"escape\"")
        let messages = Collector<String>()
        withExtendedLifetime(testContainer) {
            #expect(runOnThreads(1) { _ in
                do {
                    _ = try InjectionManager.resolve(StrictEscaped.self)
                } catch {
                    messages.append("\(error)")
                }
            })
        }
        let message = try #require(messages.values.first)
        #expect(message.hasPrefix("Injection: no registration for StrictEscaped."))
        #expect(message.contains("InjectionManager.bound { ... }"))
        // Inside the test's own container, the usual advice only.
        let bound = InjectionManager.withContainer(testContainer) { (try? InjectionManager.resolve(StrictEscaped.self)) == nil }
        #expect(bound)
        do {
            _ = try testContainer.resolve(StrictEscaped.self)
        } catch {
            #expect(!"\(error)".contains("InjectionManager.bound"))
        }
    }

    @Test("parallel strict tests each build their own instance, never the process-wide one")
    func parallelStrictTestsBuildTheirOwn() async throws {
        let serials = Collector<Int>()
        try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<4 {
                group.addTask { try await recordedIssues { serials.append(Inject(StrictLaunchService.self).serial) } }
            }
            for try await issues in group { #expect(issues.count == 1) }
        }
        #expect(Set(serials.values).count == 4, "one instance per test: \(serials.values)")
    }
}
