// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Injection",
    platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6), .visionOS(.v1)],
    products: [
        .library(name: "Injection", targets: ["Injection"]),
        .library(name: "InjectionTesting", targets: ["InjectionTesting"]),
    ],
    // No `dependencies:` on purpose: the library depends on the toolchain only.
    targets: [
        .target(name: "_InjectionAtomics"),
        .target(name: "Injection", dependencies: ["_InjectionAtomics"]),
        .target(name: "InjectionTesting", dependencies: ["Injection"]),
        .testTarget(name: "InjectionTests", dependencies: ["Injection", "InjectionTesting"]),
        .testTarget(name: "MigrationRecipesTests", dependencies: ["Injection", "InjectionTesting"]),
    ]
)

// Settings for every Swift target, in one place.
for target in package.targets where target.name != "_InjectionAtomics" {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        // SE-0335: spell existential types `any P`.
        .enableUpcomingFeature("ExistentialAny"),
        // SE-0444: an import is visible only in the file that writes it.
        .enableUpcomingFeature("MemberImportVisibility"),
    ]
}
