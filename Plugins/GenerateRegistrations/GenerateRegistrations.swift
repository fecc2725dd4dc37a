import Foundation
import PackagePlugin

/// `swift package --allow-writing-to-package-directory generate-registrations --target App [--check]`: writes
/// `InjectionRegistrations.generated.swift` into the target, with a registration for each protocol of the target and
/// of the source modules it depends on that has an `Impl`; `--check` fails instead when the file is stale.
@main
struct GenerateRegistrations: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        var extractor = ArgumentExtractor(arguments)
        let names = extractor.extractOption(named: "target"), check = extractor.extractFlag(named: "check") > 0
        guard names.count == 1, let target = try context.package.targets(named: names).first as? SourceModuleTarget
        else { throw PluginFailure(description: "name one source target: --target App") }
        let ours = injectionTargets(context.package)
        let modules = [target] + target.recursiveTargetDependencies.compactMap { $0 as? SourceModuleTarget }
            .filter { !ours.contains($0.id) }
        let output = target.directoryURL.appendingPathComponent("InjectionRegistrations.generated.swift")
        let process = Process()
        process.executableURL = try context.tool(named: "injection-check").url
        process.arguments = ["generate"] + (check ? ["--check"] : []) + ["--output", output.path]
            + modules.map(\.directoryURL.path)
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw PluginFailure(description: "injection-check generate failed (status \(process.terminationStatus))")
        }
    }
}

/// Why the command failed; `swift package` prints it and exits with an error.
struct PluginFailure: Error, CustomStringConvertible {
    let description: String
}

/// The ids of this package's own targets (the package that has `InjectionCheckCore`), which are not scanned.
func injectionTargets(_ root: Package) -> Set<Target.ID> {
    var (ids, seen, queue) = (Set<Target.ID>(), Set<Package.ID>(), [root])
    while let package = queue.popLast() {
        guard seen.insert(package.id).inserted else { continue }
        if package.targets.contains(where: { $0.name == "InjectionCheckCore" }) {
            ids.formUnion(package.targets.map(\.id))
        }
        queue += package.dependencies.map(\.package)
    }
    return ids
}
