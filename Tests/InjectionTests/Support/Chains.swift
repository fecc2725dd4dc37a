import Injection

// Long chains of distinct keys, each resolving the one below: `ChainLink<Number>` where `Number` spells a
// number in binary with `Digit0`/`Digit1`, so thousands of distinct keys nest generics only a few levels
// deep (a chain of `Link<Link<...>>` would make the runtime's type names recurse thousands deep).

enum ChainBase: InjectionKey { typealias Value = Int }
enum ChainLink<Number>: InjectionKey { typealias Value = Int }
enum NoDigits {}
enum Digit0<Higher> {}
enum Digit1<Higher> {}

/// Registers `levels` (at most 2^digits) keys above `ChainBase`, each resolving the one below plus one.
struct ChainRegistrar {
    let container: InjectionContainer
    var levels: Int
    let lifetime: InjectionLifetime
    /// Resolves the topmost key registered so far (from the bound or current container).
    var resolveTop: @Sendable () throws -> Int = { try InjectionManager.resolve(ChainBase.self) }
    /// The readable name of the topmost key registered so far.
    var topName = "ChainBase"
    /// What each level's factory makes of resolving the level below (given as a closure), for keys
    /// registered after it is set; `nil`: the level below's value plus one, throwing what that resolve throws.
    var link: (@Sendable (_ resolveBelow: @Sendable () throws -> Int) throws -> Int)?
    /// Each level's `postConstruction`, for keys registered after it is set.
    var postConstruction: (@Sendable (Int) throws -> Void)?

    init(container: InjectionContainer, levels: Int, lifetime: InjectionLifetime) {
        self.container = container
        self.levels = levels
        self.lifetime = lifetime
    }

    mutating func visitNumbers<Higher: SendableMetatype>(digits: Int, _: Higher.Type) {
        guard digits > 0 else { return register(ChainLink<Higher>.self) }
        visitNumbers(digits: digits - 1, Digit0<Higher>.self)
        visitNumbers(digits: digits - 1, Digit1<Higher>.self)
    }

    private mutating func register<Key: InjectionKey>(_: Key.Type) where Key.Value == Int, Key: SendableMetatype {
        guard levels > 0 else { return }
        levels -= 1
        let below = resolveTop
        if let link {
            container.register(Key.self, lifetime: lifetime, factory: { try link(below) }, postConstruction: postConstruction)
        } else {
            container.register(Key.self, lifetime: lifetime, factory: { try below() + 1 }, postConstruction: postConstruction)
        }
        resolveTop = { try InjectionManager.resolve(Key.self) }
        topName = String(describing: Key.self)
    }
}
