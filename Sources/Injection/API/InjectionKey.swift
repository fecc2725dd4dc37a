/// A typed key for one of several instances of the same type: no strings, checked by the compiler.
///
/// A type maps to one implementation. When an app needs two `Database`s, declare a key for each:
///
/// ```swift
/// enum PrimaryDatabase: InjectionKey { typealias Value = any Database }
/// enum CacheDatabase: InjectionKey { typealias Value = any Database }
///
/// InjectionManager.register(PrimaryDatabase.self) { SQLiteDatabase(path: "main.db") }
/// InjectionManager.register(CacheDatabase.self, lifetime: .singleton) { SQLiteDatabase(path: "cache.db") }
///
/// let db = Inject(PrimaryDatabase.self)             // a Database
/// let cache: any Database = Inject(CacheDatabase.self)
/// ```
/// Keys work with every lifetime and with `resolve`, `isRegistered`, `unregister`, `verify()` and
/// the dependency graph, where the key's name stands for the instance. A key is a type, never
/// instantiated: an `enum` without cases is the usual spelling.
public protocol InjectionKey {
    /// The type of the instance the key stands for.
    associatedtype Value
}
