// swift-tools-version:6.1
import PackageDescription

// A separate package so the library itself keeps zero dependencies. Run it with
//   swift run -c release --package-path Benchmarks InjectionBenchmarks
let package = Package(
    name: "InjectionBenchmarks",
    // macOS 15: `Synchronization.Mutex`, used by baseline (b).
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Injection", path: ".."),
        .package(url: "https://github.com/Swinject/Swinject", exact: "2.10.0"),
        .package(url: "https://github.com/pointfreeco/swift-dependencies", exact: "1.17.1"),
    ],
    targets: [
        // Heap statistics (glibc mallinfo2) for the memory scenario.
        .target(name: "CMallocStats"),
        // 2,000 protocol types for the launch scenario (Scripts/generate-launch-types.py), and the seed
        // design (c2) they are compared with.
        .target(
            name: "LaunchTypes",
            dependencies: [.product(name: "Injection", package: "Injection")],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .executableTarget(
            name: "InjectionBenchmarks",
            dependencies: [
                "CMallocStats",
                "LaunchTypes",
                .product(name: "Injection", package: "Injection"),
                .product(name: "Swinject", package: "Swinject"),
                .product(name: "Dependencies", package: "swift-dependencies"),
            ],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
