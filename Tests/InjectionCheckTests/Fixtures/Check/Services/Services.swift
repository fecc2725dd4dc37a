import Injection

public protocol API: Sendable { func get(_ path: String) -> String }
public protocol Keychain: Sendable {}
public protocol DataStore: Sendable {}
public typealias Store = any DataStore
public final class Analytics: Sendable { public init() {} }
public final class Tracker: Sendable { public init() {} }

/// A view model that resolves at its defaults, on later lines too.
public final class ProfileModel {
    let api: any API
    let store: Store
    let keychain: any Services.Keychain = Inject()
    public init(
        api: any API = Inject(),
        store: Store =
            Inject()
    ) {
        (self.api, self.store) = (api, store)
    }
}

/// Generic code resolves its parameters: never reported.
public struct Cache<Value> {
    let value: Value = Inject()
    func load<Key: Hashable>(key: Key = Inject()) -> Value { value }
}

let text = """
    let forgotten: Forgotten = Inject()   // a string, not code
    """
// let analytics: Analytics = Inject()   (a comment, not code)
