import Foundation

/// A Swift file to scan: the path diagnostics print, and the module it belongs to.
public struct SourceFile: Sendable, Equatable {
    /// The path as given on the command line, joined with the file's path below it.
    public var path: String
    /// The last path component of the folder given on the command line (a file's own folder, for a file).
    public var module: String
}

/// The Swift files of `paths`: a folder is searched recursively for `.swift` files, skipping hidden folders (so
/// `.build` and `.swiftpm`) and what `exclude` matches; a folder is a module named by its last path component.
///
/// - Parameters:
///   - paths: Files and folders; a trailing `/` is ignored.
///   - exclude: Globs (`*`, `**`, `?`) matched against a path below `root` (or the whole path, outside it).
///   - root: The folder that `exclude` is relative to: the configuration file's.
///   - warn: Receives a `warning:` line for each path that does not exist.
/// - Returns: The files in the order given, each folder's sorted by path; a file given twice appears once.
public func swiftFiles(in paths: [String], exclude: [String] = [], root: String? = nil,
                       warn: (String) -> Void) -> [SourceFile] {
    var (files, seen) = ([SourceFile](), Set<String>())
    func add(_ path: String, module: String) {
        let relative = root.flatMap { path.hasPrefix($0 + "/") ? String(path.dropFirst($0.count + 1)) : nil } ?? path
        guard !exclude.contains(where: { glob($0, matches: relative) }), seen.insert(path).inserted else { return }
        files.append(SourceFile(path: path, module: module))
    }
    func walk(_ folder: String, module: String, depth: Int) {
        guard depth < 64, let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names.sorted() where !name.hasPrefix(".") {
            let path = folder + "/" + name
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { continue }
            if isFolder.boolValue { walk(path, module: module, depth: depth + 1) }
            else if name.hasSuffix(".swift") { add(path, module: module) }
        }
    }
    for given in paths {
        let path = given.count > 1 && given.hasSuffix("/") ? String(given.dropLast()) : given
        var isFolder: ObjCBool = false
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) {
            warn("\(path): warning: Injection: no such file or folder; it is not scanned")
        } else if isFolder.boolValue {
            walk(path, module: lastComponent(path), depth: 0)
        } else {
            add(path, module: lastComponent((path as NSString).deletingLastPathComponent))
        }
    }
    return files
}

/// The last component of a path (`Sources/App` is `App`; `.` is the current folder's name).
func lastComponent(_ path: String) -> String {
    let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    return ((absolute as NSString).standardizingPath as NSString).lastPathComponent
}

/// Whether a glob matches a path: `*` and `?` stay within one path component, `**` crosses them, and a pattern
/// that matches a folder matches everything in it.
public func glob(_ pattern: String, matches path: String) -> Bool {
    let (pattern, path) = (Array(pattern.utf8), Array(path.utf8))
    return globMatch(pattern[...], path[...]) || globMatch((pattern + Array("/**".utf8))[...], path[...])
}

private func globMatch(_ pattern: ArraySlice<UInt8>, _ path: ArraySlice<UInt8>) -> Bool {
    guard let first = pattern.first else { return path.isEmpty }
    if first == UInt8(ascii: "*") {
        let anyDepth = pattern.dropFirst().first == UInt8(ascii: "*")
        let rest = pattern.dropFirst(anyDepth ? 2 : 1)
        if anyDepth && rest.first == UInt8(ascii: "/") && globMatch(rest.dropFirst(), path) { return true }
        var index = path.startIndex
        while true {
            if globMatch(rest, path[index...]) { return true }
            if index == path.endIndex || (!anyDepth && path[index] == UInt8(ascii: "/")) { return false }
            index += 1
        }
    }
    guard let byte = path.first, first == UInt8(ascii: "?") ? byte != UInt8(ascii: "/") : first == byte else {
        return false
    }
    return globMatch(pattern.dropFirst(), path.dropFirst())
}

/// Reads a file's facts, or gives the `warning:` line for a file that cannot be read, decoded, or is binary.
public func readFacts(_ file: SourceFile, modules: Set<String>) -> Result<FileFacts, FileProblem> {
    guard let data = FileManager.default.contents(atPath: file.path) else {
        return .failure(FileProblem(file: file.path, reason: "cannot be read"))
    }
    let bytes = [UInt8](data)
    guard !bytes.contains(0) else {
        return .failure(FileProblem(file: file.path, reason: "is binary (it holds NUL bytes)"))
    }
    guard String(bytes: bytes, encoding: .utf8) != nil else {
        return .failure(FileProblem(file: file.path, reason: "is not valid UTF-8"))
    }
    return .success(FileFacts(tokens: tokenize(bytes), path: file.path, module: file.module, modules: modules))
}

/// A file the tool cannot use.
public struct FileProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file's path.
    public var file: String
    /// Why it cannot be used.
    public var reason: String
    /// The `warning:` line that names it.
    public var description: String { "\(file): warning: Injection: this file \(reason); it is not scanned" }
}
