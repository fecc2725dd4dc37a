import Foundation
import PackagePlugin

/// Checks, on every build that changes a scanned file, that each type the app resolves is registered somewhere.
///
/// Apply it to the composition root, the target that registers at launch. It returns one build command that runs
/// `injection-check` over the target's Swift files and those of every source module it depends on, recursively,
/// except this package's own, plus the folders `injection-check.json` includes. The command's inputs are those
/// files and the configuration, and its output a stamp in the plugin's work folder, so it runs again only when
/// one of them changes. The plugin prints nothing itself; the tool prints `PATH:LINE:COLUMN: error:` lines.
@main
struct InjectionCheck: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let ours = injectionTargets(context.package)
        let modules = [target] + target.recursiveTargetDependencies.compactMap { $0 as? SourceModuleTarget }
            .filter { !ours.contains($0.id) }
        let files = modules.flatMap { $0.sourceFiles(withSuffix: "swift").map(\.url) }
        return [try command(files: files, folders: modules.map(\.directoryURL.path), name: target.name,
                            root: context.package.directoryURL, tool: context.tool(named: "injection-check").url,
                            work: context.pluginWorkDirectoryURL)]
    }
}

/// The build command: `injection-check [--config FILE] --stamp FILE PATH...`, its inputs sorted.
func command(files: [URL], folders: [String], name: String, root: URL, tool: URL, work: URL) -> Command {
    let config = root.appendingPathComponent("injection-check.json")
    let hasConfig = FileManager.default.fileExists(atPath: config.path)
    let stamp = work.appendingPathComponent("InjectionCheck.stamp.swift")
    let inputs = files + (hasConfig ? [config] + includedFiles(config) : [])
    return .buildCommand(
        displayName: "injection-check: checking that \(name) registers every type it resolves",
        executable: tool,
        arguments: (hasConfig ? ["--config", config.path] : []) + ["--stamp", stamp.path] + folders,
        inputFiles: inputs.sorted { $0.path < $1.path },
        outputFiles: [stamp])
}

/// The Swift files of the folders the configuration's `include` lists, which the check scans too.
func includedFiles(_ config: URL) -> [URL] {
    let json = (try? Data(contentsOf: config)).flatMap { try? JSONSerialization.jsonObject(with: $0) }
    let folders = ((json as? [String: Any])?["include"] as? [String]) ?? []
    return folders.flatMap { folder -> [URL] in
        let base = folder.hasPrefix("/") ? URL(fileURLWithPath: folder)
            : config.deletingLastPathComponent().appendingPathComponent(folder)
        let found = FileManager.default.enumerator(
            at: base, includingPropertiesForKeys: nil, options: .skipsHiddenFiles)
        return (found?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "swift" }
    }
}

/// The ids of this package's own targets (the package that has `InjectionCheckCore`), which the check skips.
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

#if canImport(XcodeProjectPlugin)
import XcodeProjectPlugin

extension InjectionCheck: XcodeBuildToolPlugin {
    /// In an Xcode project, a target sees only its own files: `include` in `injection-check.json` (beside the
    /// project) lists the folders of the modules it depends on.
    func createBuildCommands(context: XcodePluginContext, target: XcodeTarget) throws -> [Command] {
        let files = target.inputFiles.map(\.url).filter { $0.pathExtension == "swift" }
        return [try command(files: files, folders: files.map(\.path), name: target.displayName,
                            root: context.xcodeProject.directoryURL, tool: context.tool(named: "injection-check").url,
                            work: context.pluginWorkDirectoryURL)]
    }
}
#endif
