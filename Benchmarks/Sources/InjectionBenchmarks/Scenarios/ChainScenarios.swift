import Injection

/// Scenario 11 (issue 39): a `.transient` chain of distinct keys, each level's factory resolving the next
/// with `Inject()`. Time per level with the top at 5,000 levels, against with the top at 100: if a level
/// costs the same however deep it sits, the ratio is 1; if each level walks the chain above it (as the
/// cycle check did before issue 39), it grows with the depth.
enum ChainScenarios {
    /// The deep and the shallow top of the chain.
    static let deepLevels = 5_000
    static let shallowLevels = 100
    /// Each timed run resolves on a thread of its own with this much stack (the 64 MiB).
    static let stackSize = 64 << 20

    /// One container with every level: ``ChainFloor`` returns 0, and level k (k = 1...5,000) resolves
    /// level k − 1 with `Inject()` and adds one. Both rows resolve from it, one from level 5,000 and one
    /// from level 100, so they run the same factories of the same registrations.
    static let container: InjectionContainer = {
        let container = InjectionContainer()
        container.register(ChainFloor.self, lifetime: .transient) { 0 }
        var below: any ChainStep.Type = ChainFloor.self
        forEachChainStep(count: deepLevels) { key in
            func link<Key: ChainStep>(_: Key.Type, below: any ChainStep.Type) {
                func link<Below: ChainStep>(_: Below.Type) {
                    container.register(Key.self, lifetime: .transient) { Inject(Below.self) &+ 1 }
                }
                link(below)
            }
            link(key, below: below)
            below = key
        }
        return container
    }()

    /// The keys of levels 1...5,000, bottom first (`levels[k - 1]` is level k).
    static let levels: [any ChainStep.Type] = {
        var keys: [any ChainStep.Type] = []
        forEachChainStep(count: deepLevels) { keys.append($0) }
        return keys
    }()

    /// Resolves level `level` from ``container``: `level` + 1 factory runs, the floor's included.
    @inline(never)
    static func resolve(level: Int) -> Int {
        func resolveKey<Key: ChainStep>(_: Key.Type) -> Int { try! container.resolve(Key.self) }
        let key = levels[level - 1]
        return resolveKey(key)
    }

    /// Checks that the top of each row resolves through every level below it, on a 64 MiB thread.
    static func check() {
        let timing = onNewThread(stackSize: stackSize) {
            let deep = resolve(level: deepLevels), shallow = resolve(level: shallowLevels)
            precondition(deep == deepLevels && shallow == shallowLevels,
                         "chain: level \(deepLevels) gave \(deep), level \(shallowLevels) gave \(shallow)")
            return Timing(nanoseconds: 0, checksum: deep &+ shallow)
        }
        blackHole(timing.checksum)
    }

    /// `iterations` resolves of level `level`, timed on a new thread with a 64 MiB stack (after one
    /// untimed resolve on it, so the thread's first-use costs stay out).
    static func chainRun(level: Int, _ iterations: Int) -> Timing {
        onNewThread(stackSize: stackSize) {
            blackHole(resolve(level: level))
            return timed(iterations) { iterations in
                var checksum = 0
                for _ in 0..<iterations { checksum &+= resolve(level: level) }
                return checksum
            }
        }
    }
}
