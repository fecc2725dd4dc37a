import Dependencies

/// swift-dependencies 1.17.1: a `DependencyKey` with a `liveValue`, read through `@Dependency`.
///
/// Each read of the property wrapper's `wrappedValue` is what a feature pays per use; the wrapper
/// itself is created once, as a model's stored property would be.
enum DependenciesScenarios {
    static let model = Model()

    struct Model: Sendable {
        @Dependency(\.benchmarkService) var service
    }

    static func setUp() {
        // Read once so the live value is created (and cached by the library) before timing.
        _ = model.service
    }

    @inline(never)
    static func resolveService() -> any Service {
        model.service
    }

    @inline(never)
    static func cachedLoop(_ iterations: Int) -> Int {
        var checksum = 0
        for _ in 0..<iterations {
            checksum &+= resolveService().value
        }
        return checksum
    }
}

private enum BenchmarkServiceKey: DependencyKey {
    static let liveValue: any Service = LiveService(value: 1)
}

extension DependencyValues {
    var benchmarkService: any Service {
        get { self[BenchmarkServiceKey.self] }
        set { self[BenchmarkServiceKey.self] = newValue }
    }
}
