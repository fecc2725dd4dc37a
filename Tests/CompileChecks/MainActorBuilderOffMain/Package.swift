// swift-tools-version:6.1
import PackageDescription

// A compile check, run by .ci/check-compile-failures: `Compiles` must build, and `DoesNotCompile` must fail
// with the errors its `// expected-error:` comments name, and no others. `Compiles` makes the same calls from
// the main actor, so the check cannot pass because of an unrelated error (a broken model, a renamed API).
let package = Package(
    name: "MainActorBuilderOffMain",
    platforms: [.macOS(.v10_15), .iOS(.v13)],
    dependencies: [.package(name: "Injection", path: "../../..")],
    targets: [
        .target(name: "Models", dependencies: [.product(name: "Injection", package: "Injection")]),
        .target(name: "Compiles", dependencies: ["Models", .product(name: "Injection", package: "Injection")]),
        .target(name: "DoesNotCompile", dependencies: ["Models", .product(name: "Injection", package: "Injection")]),
    ]
)
