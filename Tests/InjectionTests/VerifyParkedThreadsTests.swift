import CInjectionTestSupport
import Foundation
import Injection
import Testing

// A failing nested `Inject()` under `verify()` cannot throw: its worker records the problem and parks for good.
// A later verification of the same registrations reports it from memory instead of parking another thread, so
// repeated failing verifications leave no more parked threads than one does. And a graph whose session types
// are registered later verifies at launch with `verify(registeredLater:)`.

private final class ParkSession: Sendable {}
private final class ParkProfile: Sendable {
    let session: ParkSession
    init(session: ParkSession = Inject()) { self.session = session }   // ParkSession is missing: parks
}
private final class ParkFeed: Sendable {
    let profile: ParkProfile
    init(profile: ParkProfile = Inject()) { self.profile = profile }
}
private final class ParkClock: Sendable {}

@Suite("verify() and parked threads")
struct VerifyParkedThreadsTests {
    @Test("twenty failing verify() calls leave no more parked threads than one, and report the same problems each time")
    func repeatedFailingVerifyParksNoMoreThreads() async {
        // In a process of its own: the thread count is the process's, which parallel tests would disturb.
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let container = InjectionContainer()
            container.register(ParkProfile.self) { ParkProfile() }
            container.register(ParkFeed.self) { ParkFeed() }
            container.register(ParkClock.self) { ParkClock() }
            func verify() -> String {
                do throws(InjectionError) {
                    try container.verify()
                    return "passed"
                } catch { return error.problems.map { "\($0.kind) \($0.chain)" }.joined(separator: "; ") }
            }
            // A verification's last worker signals it is done just before its thread exits: a count taken at once may
            // still see it. Each count waits (up to 10 s) for such a thread to go; parked threads never do.
            func threads(atMost limit: Int = .max) -> Int {
                let deadline = Date(timeIntervalSinceNow: 10)
                var count = test_thread_count(), previous = -1
                while (count > limit || count != previous) && Date() < deadline {
                    Thread.sleep(forTimeInterval: 0.02)
                    (previous, count) = (count, test_thread_count())
                }
                return count
            }
            let first = verify()
            let afterOne = threads()
            var same = true
            for _ in 1...19 { same = same && verify() == first }
            let afterTwenty = threads(atMost: afterOne)
            FileHandle.standardError.write(Data("\(first) | \(afterOne) | \(afterTwenty) | \(same)\n".utf8))
            exit(afterOne > 0 && afterTwenty <= afterOne && same && first.contains("notRegistered") ? 0 : 1)
        }
        // first problems | threads after one call | after twenty | the same problems each time
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("| true"), "\(output)")
    }

    @Test("verify(registeredLater:) passes a graph whose session type is registered at login, and verify() does not")
    func registeredLater() throws {
        let container = InjectionContainer()
        container.register(ParkFeed.self) { ParkFeed() }
        container.register(ParkProfile.self) { ParkProfile() }
        container.register(ParkClock.self) { ParkClock() }
        let error = #expect(throws: InjectionError.self) { try container.verify() }
        #expect(error?.problems.allSatisfy { $0.kind == .notRegistered && $0.typeName == "ParkSession" } == true)
        try container.verify(registeredLater: [ParkSession.self])
        // Another missing type is still reported.
        let other = #expect(throws: InjectionError.self) { try container.verify(registeredLater: [ParkClock.self]) }
        #expect(other?.problems.isEmpty == false)
        // At login the session comes, and the whole graph verifies.
        container.register(ParkSession.self) { ParkSession() }
        try container.verify()
    }
}
