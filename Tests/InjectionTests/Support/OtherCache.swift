import Injection

// A second `private final class Cache`, in a file of its own, for `TypeNameTests`.

private final class Cache: Sendable {}

/// Registers this file's private `Cache` in `container`.
func registerOtherFilesCache(in container: InjectionContainer) {
    container.register(Cache.self) { Cache() }
}
