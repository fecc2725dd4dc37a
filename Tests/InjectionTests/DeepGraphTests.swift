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
}
