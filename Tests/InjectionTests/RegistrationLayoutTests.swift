import Foundation
import Injection
import Testing

// The registration's compact layout (56 bytes): the registering file as an interned two-byte index, the
// lifetime in two bits of the traits byte, the stores counter and the resettable position sharing one
// word, and whether a class is disposable remembered process-wide. What each of them must still get right.

private struct Refused: Error {}

private final class StampLeaf: Sendable {
    let serial: Int
    init(serial: Int) { self.serial = serial }
}
private final class StampRoot: Sendable {
    let leaf: StampLeaf
    init(leaf: StampLeaf) { self.leaf = leaf }
}

@Suite("Registration layout")
struct RegistrationLayoutTests {
    // MARK: The stores counter

    /// A resolution whose nested `postConstruction` failed evicts that instance at once, and again when
    /// it undoes everything it cached, after the rest of its deferred `postConstruction` calls ran. In
    /// between, another thread may build and cache the next instance of the same registration, in the
    /// same scope: the second eviction must leave that one alone. Only the count of stores tells the two
    /// apart (same registration, same epoch).
    @Test(
        "A failed postConstruction's second eviction leaves the instance another thread cached since",
        arguments: [InjectionLifetime.scoped, .singleton])
    func secondEvictionSparesNewerInstance(lifetime: InjectionLifetime) async {
        let outcome = await onOwnThread { () -> [String] in
            var problems: [String] = []
            let container = InjectionContainer()
            let builds = Counter()
            container.register(StampLeaf.self, lifetime: lifetime) {
                StampLeaf(serial: builds.increment())
            } postConstruction: { leaf in
                if leaf.serial == 1 { throw Refused() }
            }
            let fromOtherThread = Collector<StampLeaf>()
            container.register(StampRoot.self) { [unowned container] in
                StampRoot(leaf: try container.resolve(StampLeaf.self))
            } postConstruction: { [unowned container] _ in
                // Runs after the leaf's postConstruction failed and evicted leaf #1. Another thread's resolve
                // builds leaf #2, whose postConstruction succeeds: it is the scope's leaf now.
                let done = Gate()
                onThread {
                    if let leaf = try? container.resolve(StampLeaf.self) { fromOtherThread.append(leaf) }
                    done.open()
                }
                done.wait()
            }
            do {
                _ = try container.resolve(StampRoot.self)
                problems.append("the root resolved, though its leaf's postConstruction threw")
            } catch {}
            guard let cached = fromOtherThread.values.first else { return problems + ["the other thread resolved no leaf"] }
            if cached.serial != 2 { problems.append("the other thread got leaf #\(cached.serial), not #2") }
            let again = try? container.resolve(StampLeaf.self)
            if again !== cached {
                problems.append("the leaf the other thread cached (#\(cached.serial)) was evicted: resolving again built #\(again?.serial ?? -1)")
            }
            if builds.value != 2 { problems.append("the leaf was built \(builds.value) times, not 2") }
            return problems
        }
        #expect(outcome == [])
    }

    /// The same, when other resolves stored (and, their own `postConstruction` failing, evicted) the leaf
    /// 255 times between the two evictions: store number 257 counts as 1 again in eight bits, as the
    /// failed leaf #1 did, in the same scope. The second eviction must still spare leaf #257, which the
    /// other thread was handed and which is the scope's leaf.
    @Test(
        "A failed postConstruction's second eviction spares the newer instance after 256 stores",
        arguments: [InjectionLifetime.scoped, .singleton])
    func secondEvictionSparesNewerInstanceAfterCountWraps(lifetime: InjectionLifetime) async {
        let outcome = await onOwnThread { () -> [String] in
            var problems: [String] = []
            let container = InjectionContainer()
            let builds = Counter()
            container.register(StampLeaf.self, lifetime: lifetime) {
                StampLeaf(serial: builds.increment())
            } postConstruction: { leaf in
                // #1 fails in the root's resolution; #2 to #256 in the other thread's; #257 succeeds.
                if leaf.serial <= 256 { throw Refused() }
            }
            let fromOtherThread = Collector<StampLeaf>()
            container.register(StampRoot.self) { [unowned container] in
                StampRoot(leaf: try container.resolve(StampLeaf.self))
            } postConstruction: { [unowned container] _ in
                let done = Gate()
                onThread {
                    for _ in 0..<300 {
                        if let leaf = try? container.resolve(StampLeaf.self) {
                            fromOtherThread.append(leaf)
                            break
                        }
                    }
                    done.open()
                }
                done.wait()
            }
            do {
                _ = try container.resolve(StampRoot.self)
                problems.append("the root resolved, though its leaf's postConstruction threw")
            } catch {}
            guard let cached = fromOtherThread.values.first else { return problems + ["the other thread resolved no leaf"] }
            if cached.serial != 257 { problems.append("the other thread got leaf #\(cached.serial), not #257") }
            let again = try? container.resolve(StampLeaf.self)
            if again !== cached {
                problems.append("the leaf the other thread cached (#\(cached.serial)) was evicted: resolving again built #\(again?.serial ?? -1)")
            }
            if builds.value != 257 { problems.append("the leaf was built \(builds.value) times, not 257") }
            return problems
        }
        #expect(outcome == [])
    }
}
