import Foundation

/// Lets `count` threads meet: each `arrive()` blocks until all have arrived, then all go on together.
/// Reusable, round after round. A timeout turns a thread that never arrives (a deadlock) into a
/// failed test instead of a hung one.
final class Barrier: @unchecked Sendable {
    private let condition = NSCondition()
    private let count: Int
    private var arrived = 0
    private var round = 0
    private var isBroken = false

    init(count: Int) {
        self.count = count
    }

    /// Returns `false` if the others did not all arrive within `seconds`; the barrier is then broken
    /// and every later `arrive()` returns `false` at once.
    @discardableResult func arrive(seconds: Double = waitLimit) -> Bool {
        condition.lock(); defer { condition.unlock() }
        guard !isBroken else { return false }
        let myRound = round
        arrived += 1
        if arrived == count {
            arrived = 0
            round += 1
            condition.broadcast()
            return true
        }
        let deadline = Date(timeIntervalSinceNow: seconds)
        while round == myRound && !isBroken {
            if !condition.wait(until: deadline) && round == myRound {
                isBroken = true
                condition.broadcast()
                return false
            }
        }
        return !isBroken || round != myRound
    }

    /// Breaks the barrier so nobody waits for a thread that gave up.
    func breakBarrier() {
        condition.lock(); isBroken = true; condition.broadcast(); condition.unlock()
    }
}
