import Foundation
import Injection
import _InjectionPlatform
import InjectionTesting
import Testing

// A graph nested deeper than the thread's stack fits fails with `tooDeep`, naming the depth, the ends of
// the chain and the fix, instead of overflowing the stack: on an 8 MiB thread and on a 512 KiB one (the
// size of Apple platforms' secondary threads) alike. `verify()` resolves on worker threads of its own with a
// stack of known size, so a deep graph verifies whatever the caller's stack.

/// The stack sizes of the threads that built `ChainBase` (a factory records them).
private let chainBaseStacks = Collector<UInt>()

/// Resolves, on an 8 MiB thread of the process it runs in, the top of a 4,000-level chain whose factories
/// stop where the stack ends: each resolves the level below and, if that fails with `tooDeep` (and only
/// then), builds a leaf instead, so the deepest resolve that fits fails, its factory's caller absorbs the
/// failure, and the top-level resolve returns how many levels were built. With `postConstruction`, every
/// level has one; with `withContainerPerLevel`, each factory resolves the level below inside
/// `InjectionManager.withContainer(container) { }`. Records an issue for each way the outcome is wrong.
///
/// Run it in a child process (an exit test): where the library overflows the stack instead, the process
/// dies by SIGSEGV, which only the parent can observe.
private func resolveChainThatStopsWhereTheStackEnds(postConstruction: Bool, withContainerPerLevel: Bool) {
    let levels = 4_000
    let container = InjectionContainer()
    container.register(ChainBase.self) { 0 }
    let stops = Collector<InjectionError>(), postConstructions = Counter()
    var registrar = ChainRegistrar(container: container, levels: levels, lifetime: .scoped)
    registrar.link = { [unowned container] resolveBelow in
        // `try?` for the one failure a level expects where the stack ends; any other is the test's failure.
        func below() throws -> Int? {
            do {
                return try resolveBelow()
            } catch let error as InjectionError where error.kind == .tooDeep {
                stops.append(error)
                return nil
            }
        }
        let value = withContainerPerLevel ? try InjectionManager.withContainer(container) { try below() } : try below()
        return (value ?? 0) + 1  // The levels built from here down.
    }
    if postConstruction { registrar.postConstruction = { _ in postConstructions.increment() } }
    registrar.visitNumbers(digits: 12, NoDigits.self)
    #expect(registrar.levels == 0)
    let top = registrar.resolveTop
    let outcome = onSizedStack(8 << 20) { Result { try InjectionManager.withContainer(container) { try top() } } }
    guard case .success(let built) = outcome else {
        Issue.record("the top-level resolve threw, though every level absorbs tooDeep: \(outcome)")
        return
    }
    #expect(built > 10 && built < levels, "\(built) of \(levels) levels built: the stack ended before the chain did")
    #expect(stops.values.count == 1, "one resolve, the deepest, failed with tooDeep: \(stops.values.count)")
    if let stop = stops.values.first {
        #expect(stop.chain.count == built + 1, "the failure names the levels built above it, and its own")
        #expect(stop.chain.first == registrar.topName)
    }
    if postConstruction {
        #expect(postConstructions.value == built, "postConstruction ran once per level built")
    }
    // The levels built were cached: resolving the top again returns what the first resolve built.
    #expect((try? InjectionManager.withContainer(container) { try top() }) == built)
}

@Suite("Deep graphs")
struct DeepGraphTests {
    @Test("a 5,000-level chain of first resolves fails with tooDeep instead of overflowing the stack", arguments: [8 << 20, 512 << 10])
    func deepChainFailsClearly(stackSize: Int) throws {
        let container = InjectionContainer()
        container.register(ChainBase.self) { 0 }
        var registrar = ChainRegistrar(container: container, levels: 5_000, lifetime: .scoped)
        registrar.visitNumbers(digits: 13, NoDigits.self)
        #expect(registrar.levels == 0)
        let top = registrar.resolveTop
        // glibc may hand a new thread a cached stack up to 4x larger than asked for: the message names the real one.
        let (actualStack, outcomes) = onSizedStack(stackSize) { () -> (UInt, [Result<Int, InjectionError>]) in
            var low: UInt = 0, size: UInt = 0
            _injection_thread_stack(&low, &size)
            return (size, (0..<2).map { _ in
                Result { () throws(InjectionError) -> Int in
                    do {
                        return try InjectionManager.withContainer(container) { try top() }
                    } catch let error as InjectionError {
                        throw error
                    } catch {
                        preconditionFailure("only InjectionError is thrown: \(error)")
                    }
                }
            })
        }
        #expect(actualStack >= UInt(stackSize) && actualStack <= UInt(stackSize) * 4, "a \(actualStack >> 10) KiB stack")
        for outcome in outcomes {  // The second attempt fails the same way: nothing was left half-built.
            guard case .failure(let error) = outcome else {
                Issue.record("a 5,000-level chain resolved on a \(stackSize >> 10) KiB stack")
                continue
            }
            #expect(error.kind == .tooDeep)
            #expect(error.chain.count > 10 && error.chain.count < 5_000, "\(error.chain.count) levels")
            #expect(error.chain.first == registrar.topName)
            #expect(error.description.hasPrefix("Injection: resolving \(error.typeName) nests \(error.chain.count) factories deep (\(registrar.topName) → … → \(error.typeName))"))
            #expect(error.description.contains("\(actualStack >> 10) KiB stack"))
        }
        // The levels that fit were built and cached; the container still resolves a shallow level.
        #expect(try InjectionManager.withContainer(container) { try InjectionManager.resolve(ChainBase.self) } == 0)
    }

    @Test("verify() checks a 500-deep chain on worker threads with an 8 MiB stack, whatever the caller's stack", .isolatedInjection)
    func verifyDeepChain() throws {
        let container = InjectionContainer()
        container.register(ChainBase.self, lifetime: .transient) {
            var low: UInt = 0, size: UInt = 0
            _injection_thread_stack(&low, &size)
            chainBaseStacks.append(size)
            return 0
        }
        var registrar = ChainRegistrar(container: container, levels: 500, lifetime: .transient)
        registrar.visitNumbers(digits: 9, NoDigits.self)
        #expect(registrar.levels == 0)
        // Each transient level's resolve builds every level below it: the deepest one nests 500 factories.
        try container.verify()
        #expect(chainBaseStacks.values.count == 501)
        #expect(chainBaseStacks.values.allSatisfy { $0 >= 8 << 20 }, "verify()'s workers have at least 8 MiB of stack")
    }

    // Nothing may recurse once per level of the graph: near the stack's end, what the library does for a
    // level must fit in the stack it keeps in reserve, however many levels are above it. A level whose
    // type has a postConstruction copies its frame, with every frame above it, to the heap; a factory that
    // resolves inside withContainer publishes the chain to tasks (a heap copy too); releasing such a copy
    // releases its frames. Done with one nested call per level, any of these overflows an 8 MiB stack
    // (SIGSEGV) where the chain ends, so each test resolves in a child process, which the crash ends.

    @Test("a 4,000-level chain with a postConstruction on every level, whose factories stop with try? where the stack ends, returns instead of crashing on an 8 MiB thread")
    func deepChainWithPostConstructionStopsWhereTheStackEnds() async {
        await #expect(processExitsWith: .success, "the child process resolving the chain did not exit normally (SIGSEGV: the stack overflowed)") {
            resolveChainThatStopsWhereTheStackEnds(postConstruction: true, withContainerPerLevel: false)
        }
    }

    @Test("a 4,000-level chain whose factories resolve the next level inside withContainer and stop with try? where the stack ends returns instead of crashing on an 8 MiB thread")
    func deepChainWithContainerPerLevelStopsWhereTheStackEnds() async {
        await #expect(processExitsWith: .success, "the child process resolving the chain did not exit normally (SIGSEGV: the stack overflowed)") {
            resolveChainThatStopsWhereTheStackEnds(postConstruction: false, withContainerPerLevel: true)
        }
    }
}
