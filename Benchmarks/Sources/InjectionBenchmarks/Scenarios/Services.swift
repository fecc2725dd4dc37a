// The types every library resolves. Each library registers the same types with the same lifetimes,
// so the only difference between two rows of a scenario is the library.

import Injection

// MARK: - Scenarios 1, 3, 4: one cached, protocol-typed service

/// The protocol-typed service: a class behind a protocol, as in an app (`let api: API = Inject()`).
protocol Service: AnyObject, Sendable {
    var value: Int { get }
}

final class LiveService: Service {
    let value: Int
    init(value: Int) { self.value = value }
}

// MARK: - Scenario 2: a transient 3-level graph (A needs B and C; B needs C)

final class GraphC: Sendable {
    let value: Int
    init() { value = 1 }
}

final class GraphB: Sendable {
    let c: GraphC
    init(c: GraphC) { self.c = c }
}

final class GraphA: Sendable {
    let b: GraphB
    let c: GraphC
    init(b: GraphB, c: GraphC) {
        self.b = b
        self.c = c
    }

    /// Touches every object of the graph, so none of them can be skipped.
    var checksum: Int { b.c.value &+ c.value }
}

/// The floor of scenario 2: building the graph by hand.
@inline(never)
func makeGraphDirectly() -> GraphA {
    GraphA(b: GraphB(c: GraphC()), c: GraphC())
}

// MARK: - Scenarios 5, 7: five session-scoped services (login/logout)

protocol SessionService1: AnyObject, Sendable { var value: Int { get } }
protocol SessionService2: AnyObject, Sendable { var value: Int { get } }
protocol SessionService3: AnyObject, Sendable { var value: Int { get } }
protocol SessionService4: AnyObject, Sendable { var value: Int { get } }
protocol SessionService5: AnyObject, Sendable { var value: Int { get } }

final class LiveSession1: SessionService1 { let value = 1 }
final class LiveSession2: SessionService2 { let value = 2 }
final class LiveSession3: SessionService3 { let value = 3 }
final class LiveSession4: SessionService4 { let value = 4 }
final class LiveSession5: SessionService5 { let value = 5 }

// MARK: - Scenario 6: 10,000 distinct types

/// A registrable type. 10,000 distinct ones are built at run time by nesting two generic wrappers
/// (`Bit0<Bit1<Bit1<...<TagEnd>>>>`, 14 levels = one type per 14-bit number), so no 10,000-type
/// source file is needed. Each is a distinct type with its own metadata and its own `ObjectIdentifier`,
/// which is all either library keys its registry on.
protocol Tag: Sendable {
    init()
    /// The number this type spells in binary.
    static var number: Int { get }
}

struct TagEnd: Tag {
    static var number: Int { 0 }
}

struct Bit0<Rest: Tag>: Tag {
    static var number: Int { Rest.number &* 2 }
}

struct Bit1<Rest: Tag>: Tag {
    static var number: Int { Rest.number &* 2 &+ 1 }
}

/// Calls `body` with each of the first `count` tag types (at most 2^`depth`), each exactly once.
func forEachTagType(count: Int, depth: Int = 14, _ body: (any Tag.Type) -> Void) {
    var remaining = count
    func visit<T: Tag>(_: T.Type, depth: Int) {
        guard remaining > 0 else { return }
        if depth == 0 {
            remaining -= 1
            body(T.self)
            return
        }
        visit(Bit0<T>.self, depth: depth - 1)
        visit(Bit1<T>.self, depth: depth - 1)
    }
    precondition(count <= 1 << depth, "at most \(1 << depth) tag types at depth \(depth)")
    visit(TagEnd.self, depth: depth)
}

// MARK: - Scenario 11: a long `.transient` chain of distinct keys

/// A level of scenario 11's chain: a key whose value is an `Int`. Level k's factory resolves level k − 1
/// with `Inject()` and adds one; ``ChainFloor`` returns 0.
///
/// Each level needs a key of its own (a chain of one key would be a cycle). `ChainLevel<Number>`, where
/// `Number` spells the level in binary with ``Digit0`` and ``Digit1`` (as the library's tests do in
/// `Tests/InjectionTests/Support/Chains.swift`), gives thousands of distinct keys that nest generics only
/// 13 deep; `Link<Link<...>>` would make the runtime's type names recurse thousands deep.
protocol ChainStep: InjectionKey, SendableMetatype where Value == Int {}

enum ChainFloor: ChainStep { typealias Value = Int }
enum ChainLevel<Number>: ChainStep { typealias Value = Int }
enum NoDigits {}
enum Digit0<Higher> {}
enum Digit1<Higher> {}

/// Calls `body` with `count` distinct chain keys (at most 2^`digits`), each exactly once.
func forEachChainStep(count: Int, digits: Int = 13, _ body: (any ChainStep.Type) -> Void) {
    var remaining = count
    func visit<Higher>(_: Higher.Type, digits: Int) {
        guard remaining > 0 else { return }
        if digits == 0 {
            remaining -= 1
            body(ChainLevel<Higher>.self)
            return
        }
        visit(Digit0<Higher>.self, digits: digits - 1)
        visit(Digit1<Higher>.self, digits: digits - 1)
    }
    precondition(count <= 1 << digits, "at most \(1 << digits) chain keys with \(digits) digits")
    visit(NoDigits.self, digits: digits)
}
