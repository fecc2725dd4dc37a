import Foundation
import InjectionCheckCore

/// The code tokens of `source`, a literal written `<lit>`: what the checker reads.
func codeText(_ source: String) -> String {
    tokenize(Array(source.utf8)).code.map { $0.kind == .literal ? "<lit>" : $0.text }.joined(separator: " ")
}

/// The facts of one source file in module `App`, with `Services` scanned too.
func facts(_ source: String, modules: Set<String> = ["App", "Services"]) -> FileFacts {
    FileFacts(tokens: tokenize(Array(source.utf8)), path: "App/File.swift", module: "App", modules: modules)
}

/// The diagnostics of one source file checked alone.
func diagnostics(_ source: String) -> [String] {
    unregisteredResolutions(in: [facts(source)], modules: ["App", "Services"])
}

/// The package's root folder, from this file's path.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

/// This test target's fixtures (sources the tests read, never compile).
let fixtures = packageRoot + "/Tests/InjectionCheckTests/Fixtures"

/// Runs the command line; returns its exit status and the lines it printed.
func run(_ arguments: [String]) -> (status: Int32, lines: [String]) {
    var lines: [String] = []
    let status = runInjectionCheck(arguments) { lines.append($0) }
    return (status, lines)
}

/// A new empty folder under the temporary folder, holding `files` (path below it → contents).
func temporaryFolder(_ files: [String: [UInt8]] = [:]) throws -> String {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("injection-check-\(UUID().uuidString)")
    for (path, bytes) in files {
        let url = folder.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
    }
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder.path
}
