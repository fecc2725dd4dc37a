import Injection

// A second `private final class Cache`, in a file of its own, for `TypeNameTests`.

private final class Cache: Sendable {}

/// Registers this file's private `Cache` in `container`, as registered by `file` (by default, this file).
func registerOtherFilesCache(in container: InjectionContainer, file: StaticString? = nil) {
    if let file {
        container.register(Cache.self, file: file) { Cache() }
    } else {
        container.register(Cache.self) { Cache() }
    }
}
