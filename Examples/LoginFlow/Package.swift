// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "LoginFlow",
    platforms: [.macOS(.v10_15), .iOS(.v13)],
    dependencies: [.package(name: "Injection", path: "../..")],
    targets: [
        .executableTarget(name: "LoginFlow", dependencies: [.product(name: "Injection", package: "Injection")]),
    ]
)
