// swift-tools-version:6.1
import PackageDescription

// A small app that applies the InjectionCheck plugin to its composition root, App. `.ci/check-injection-check`
// builds a copy of it with a registration removed (the build must fail, naming the file and line), then as it is
// (the build passes, and a second build runs no check), and runs `generate-registrations --check` on it.
let package = Package(
    name: "PluginFixture",
    platforms: [.macOS(.v10_15)],
    dependencies: [.package(name: "Injection", path: "../..")],
    targets: [
        .target(name: "Services", dependencies: [.product(name: "Injection", package: "Injection")]),
        .executableTarget(
            name: "App",
            dependencies: ["Services", .product(name: "Injection", package: "Injection")],
            plugins: [.plugin(name: "InjectionCheck", package: "Injection")]),
    ]
)
