// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Injection",
    platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6), .visionOS(.v1)],
    products: [
        .library(name: "Injection", targets: ["Injection"]),
        // The same library linked dynamically: for an app made of several dynamic frameworks, so that all of
        // them share one process-wide container instead of one copy each (see the README).
        .library(name: "InjectionDynamic", type: .dynamic, targets: ["Injection"]),
        .library(name: "InjectionTesting", targets: ["InjectionTesting"]),
        // The build-time check (Docs/BuildTimeCheck.md): a tool, the plugin that runs it on every build of the
        // composition root, and the command plugin that writes generated registrations. Foundation only.
        .executable(name: "injection-check", targets: ["injection-check"]),
        .plugin(name: "InjectionCheck", targets: ["InjectionCheck"]),
        .plugin(name: "GenerateRegistrations", targets: ["GenerateRegistrations"]),
    ],
    // No `dependencies:` on purpose: the library depends on the toolchain only.
    targets: [
        .target(name: "_InjectionPlatform"),
        .target(name: "Injection", dependencies: ["_InjectionPlatform"]),
        .target(name: "InjectionTesting", dependencies: ["Injection", "_InjectionPlatform"]),
        // OS calls the tests make (pthread keys, joinable threads with a sized stack, fork), in C so that
        // the tests name no platform either. Not part of any product.
        .target(name: "CInjectionTestSupport", path: "Tests/CInjectionTestSupport"),
        .testTarget(
            name: "InjectionTests",
            dependencies: ["Injection", "InjectionTesting", "_InjectionPlatform", "CInjectionTestSupport"]),
        .testTarget(name: "MigrationRecipesTests", dependencies: ["Injection", "InjectionTesting"]),
        .target(name: "InjectionCheckCore"),
        .executableTarget(name: "injection-check", dependencies: ["InjectionCheckCore"]),
        .plugin(name: "InjectionCheck", capability: .buildTool(), dependencies: ["injection-check"]),
        .plugin(
            name: "GenerateRegistrations",
            capability: .command(
                intent: .custom(
                    verb: "generate-registrations",
                    description: "Writes the registrations of each protocol and its Impl into a target"),
                permissions: [.writeToPackageDirectory(reason: "It writes InjectionRegistrations.generated.swift.")]),
            dependencies: ["injection-check"]),
        // Fixtures/ holds sources the tests read, and never compile.
        .testTarget(
            name: "InjectionCheckTests", dependencies: ["InjectionCheckCore", "Injection"], exclude: ["Fixtures"]),
    ]
)

// Settings for every Swift target, in one place. Plugins take none: SwiftPM rejects settings on a plugin target.
let cTargets: Set = ["_InjectionPlatform", "CInjectionTestSupport"]
for target in package.targets where !cTargets.contains(target.name) && target.type != .plugin {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        // SE-0335: spell existential types `any P`.
        .enableUpcomingFeature("ExistentialAny"),
        // SE-0444: an import is visible only in the file that writes it.
        .enableUpcomingFeature("MemberImportVisibility"),
    ]
}
