protocol Cache {}

final class CacheImpl: Cache {
    init() {}
}

// injection-check: implements Cache
final class MemoryCache: Cache {
    init() {}
}
