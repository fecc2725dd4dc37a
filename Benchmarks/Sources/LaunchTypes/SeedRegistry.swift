import Foundation

/// Baseline (c2), the seed design Injection replaced: one `NSRecursiveLock` around a map of factories and
/// a map of instances, keyed by `ObjectIdentifier`. A resolve builds under the lock (the seed design did);
/// a reset empties the instance map. Written by us, for the launch and memory scenarios.
public final class SeedRegistry: @unchecked Sendable {  // Both maps: under `lock`.
    private let lock = NSRecursiveLock()
    private var factories: [ObjectIdentifier: () -> Any] = [:]
    private var instances: [ObjectIdentifier: Any] = [:]

    public init() {}

    public func register<Service>(_ type: Service.Type, factory: @escaping () -> Service) {
        lock.lock()
        defer { lock.unlock() }
        factories[ObjectIdentifier(type)] = factory
    }

    public func resolve<Service>(_ type: Service.Type) -> Service {
        lock.lock()
        defer { lock.unlock() }
        let key = ObjectIdentifier(type)
        if let instance = instances[key] { return instance as! Service }
        guard let factory = factories[key] else { fatalError("SeedRegistry: \(type) is not registered") }
        let instance = factory()
        instances[key] = instance
        return instance as! Service
    }

    public func reset() {
        lock.lock()
        defer { lock.unlock() }
        instances.removeAll()
    }
}
