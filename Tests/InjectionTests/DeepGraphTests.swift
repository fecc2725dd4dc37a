import Foundation
import Injection
import Testing

// A graph nested deeper than the thread's stack fits fails with `tooDeep`, naming the depth, the ends of
// the chain and the fix, instead of overflowing the stack: on an 8 MiB thread and on a 512 KiB one (the
// size of Apple platforms' secondary threads) alike.

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
        let outcomes = onSizedStack(stackSize) { () -> [Result<Int, InjectionError>] in
            (0..<2).map { _ in
                Result { () throws(InjectionError) -> Int in
                    do {
                        return try InjectionManager.withContainer(container) { try top() }
                    } catch let error as InjectionError {
                        throw error
                    } catch {
                        preconditionFailure("only InjectionError is thrown: \(error)")
                    }
                }
            }
        }
        for outcome in outcomes {  // The second attempt fails the same way: nothing was left half-built.
            guard case .failure(let error) = outcome else {
                Issue.record("a 5,000-level chain resolved on a \(stackSize >> 10) KiB stack")
                continue
            }
            #expect(error.kind == .tooDeep)
            #expect(error.chain.count > 10 && error.chain.count < 5_000, "\(error.chain.count) levels")
            #expect(error.chain.first == registrar.topName)
            #expect(error.description.hasPrefix("Injection: resolving \(error.typeName) nests \(error.chain.count) factories deep (\(registrar.topName) → … → \(error.typeName))"))
            #expect(error.description.contains("\(stackSize >> 10) KiB stack"))
        }
        // The levels that fit were built and cached; the container still resolves a shallow level.
        #expect(try InjectionManager.withContainer(container) { try InjectionManager.resolve(ChainBase.self) } == 0)
    }
}
