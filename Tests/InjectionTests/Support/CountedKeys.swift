import Foundation
import Injection

// Thousands of distinct key types made at run time (`STKey(n)`: the `ST` prefix is the shared-table tests'
// that introduced them), whose instances and factories carry a token whose deinit is counted: a test checks
// that each object is released exactly once, and none is kept.

// MARK: - Counting tokens

/// Counts tokens made and freed.
final class LiveTokens: @unchecked Sendable {  // Under `lock`.
    private let lock = NSLock()
    private var made = 0
    private var freed = 0
    private var freedSerials: Set<Int> = []
    func didMake() { lock.withLock { made += 1 } }
    func didFree(_ serial: Int) { lock.withLock { freed += 1; freedSerials.insert(serial) } }
    var alive: Int { lock.withLock { made - freed } }
    var madeCount: Int { lock.withLock { made } }
    func wasFreed(_ serial: Int) -> Bool { lock.withLock { freedSerials.contains(serial) } }
}

/// What an instance (or a registration's factory, which captures one) carries: which key, which
/// registration serial.
final class CountedToken: @unchecked Sendable {
    let index: Int
    let serial: Int
    private let live: LiveTokens
    init(_ index: Int, serial: Int, live: LiveTokens) {
        self.index = index
        self.serial = serial
        self.live = live
        live.didMake()
    }
    deinit { live.didFree(serial) }
}

// MARK: - Keys made at runtime

protocol STKeyed: AnyObject, Sendable {
    init(token: CountedToken)
    var token: CountedToken { get }
}
class STBase: @unchecked Sendable {
    let token: CountedToken
    required init(token: CountedToken) { self.token = token }
}
final class ST0: STBase, STKeyed, @unchecked Sendable {}
final class STZ<T>: STBase, STKeyed, @unchecked Sendable {}
final class STO<T>: STBase, STKeyed, @unchecked Sendable {}

func stWrap<T: STKeyed>(_: T.Type, odd: Bool) -> any STKeyed.Type { odd ? STO<T>.self : STZ<T>.self }
/// A distinct class per `n` (its binary digits, as nested generics).
func STKey(_ n: Int) -> any STKeyed.Type { n == 0 ? ST0.self : stWrap(STKey(n / 2), odd: n % 2 == 1) }

/// The keys, made once (metadata for thousands of nested generic types takes a while).
let stKeys: [any STKeyed.Type] = (0..<3200).map(STKey)

func stRegister<T: STKeyed>(
    _: T.Type, index: Int, serial: Int, in container: InjectionContainer, lifetime: InjectionLifetime, live: LiveTokens,
    registrations: LiveTokens
) {
    let factoryToken = CountedToken(index, serial: serial, live: registrations)  // Freed with the registration's factory.
    container.register(T.self, lifetime: lifetime) {
        T(token: CountedToken(factoryToken.index, serial: factoryToken.serial, live: live))
    }
}
func stResolve<T: STKeyed>(_: T.Type, in container: InjectionContainer) throws -> STBase {
    try container.resolve(T.self) as! STBase
}
func stUnregister<T: STKeyed>(_: T.Type, in container: InjectionContainer) { container.unregister(T.self) }
func stIsRegistered<T: STKeyed>(_: T.Type, in container: InjectionContainer) -> Bool { container.isRegistered(T.self) }

/// A container a thread may take, or find gone.
final class ContainerSlot: @unchecked Sendable {
    private let lock = NSLock()
    private var container: InjectionContainer?
    init(_ container: InjectionContainer?) { self.container = container }
    var value: InjectionContainer? {
        get { lock.withLock { container } }
        set { lock.withLock { container = newValue } }
    }
    /// Takes the container out, so that the caller's reference may be the last.
    func take() -> InjectionContainer? { lock.withLock { defer { container = nil }; return container } }
}

final class WeakHolder: @unchecked Sendable {
    private let lock = NSLock()
    private weak var held: AnyObject?
    var object: AnyObject? {
        get { lock.withLock { held } }
        set { lock.withLock { held = newValue } }
    }
}
