import Foundation

/// The command line, as `injection-check --help` prints it.
public let usage = """
    usage: injection-check [--warnings] [--config FILE] [--stamp FILE] PATH...
           injection-check generate [--check] --output FILE PATH...
    PATHs are Swift files and folders; each folder is a module named by its last path component.
    """

/// Runs `injection-check`: checks that every resolved type is registered somewhere, or, with `generate`, writes
/// (or, with `--check`, compares) the generated registrations.
///
/// ```swift
/// let status = runInjectionCheck(["--stamp", "check.stamp", "Sources/App", "Sources/Services"]) { print($0) }
/// ```
/// - Parameters:
///   - arguments: The arguments, without the program's name.
///   - print: Receives each line to print.
/// - Returns: The exit status: 1 if an error was printed, 2 for a usage or configuration error, 0 otherwise.
public func runInjectionCheck(_ arguments: [String], print: (String) -> Void) -> Int32 {
    do {
        return arguments.first == "generate" ? try generate(Array(arguments.dropFirst()), print: print)
            : try check(arguments, print: print)
    } catch {
        print("injection-check: error: \(error)\n\(usage)")
        return 2
    }
}

/// The options and paths of a command line; `flags` take no value, `options` take one.
private func parse(_ arguments: [String], flags: Set<String>, options: Set<String>) throws(UsageError)
    -> (set: Set<String>, values: [String: String], paths: [String]) {
    var (set, values, paths, index) = (Set<String>(), [String: String](), [String](), 0)
    while index < arguments.count {
        let argument = arguments[index]
        if flags.contains(argument) {
            set.insert(argument)
        } else if options.contains(argument) {
            guard index + 1 < arguments.count else { throw UsageError("\(argument) needs a value") }
            values[argument] = arguments[index + 1]
            index += 1
        } else if argument.hasPrefix("-") && argument.count > 1 {
            throw UsageError("unknown option \(argument)")
        } else {
            paths.append(argument)
        }
        index += 1
    }
    return (set, values, paths)
}

/// The facts of every readable file, and a warning line for each path or file that cannot be used. Files are read
/// on every core; the facts keep the files' order.
private func scan(_ paths: [String], exclude: [String] = [], root: String? = nil,
                  print: (String) -> Void) -> [FileFacts] {
    let files = swiftFiles(in: paths, exclude: exclude, root: root, warn: print)
    let modules = Set(files.map(\.module)), results = Results(files.count)
    DispatchQueue.concurrentPerform(iterations: files.count) { index in
        results.store(readFacts(files[index], modules: modules), at: index)
    }
    return results.values.compactMap { result in
        if case .failure(let problem)? = result { print(problem.description) }
        return try? result?.get()
    }
}

/// The results of reading files on several threads, each stored at its file's index under a lock.
private final class Results: @unchecked Sendable {  // `slots` is read and written only with `lock` held.
    private let lock = NSLock()
    private var slots: [Result<FileFacts, FileProblem>?]
    init(_ count: Int) { slots = Array(repeating: nil, count: count) }
    func store(_ result: Result<FileFacts, FileProblem>, at index: Int) {
        lock.lock()
        slots[index] = result
        lock.unlock()
    }
    var values: [Result<FileFacts, FileProblem>?] {
        lock.lock()
        defer { lock.unlock() }
        return slots
    }
}

private func check(_ arguments: [String], print: (String) -> Void) throws(UsageError) -> Int32 {
    let (set, values, paths) = try parse(arguments, flags: ["--warnings"], options: ["--config", "--stamp"])
    var configuration = Configuration(), root: String?
    if let path = values["--config"] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw UsageError("cannot read the configuration \(path)")
        }
        do { configuration = try Configuration(json: data) } catch { throw UsageError("\(path): \(error)") }
        root = (path as NSString).deletingLastPathComponent
    }
    let included = configuration.include.map { $0.hasPrefix("/") || root == "" ? $0 : root! + "/" + $0 }
    guard !(paths + included).isEmpty else { throw UsageError("no PATH to scan") }
    let files = scan(paths + included, exclude: configuration.exclude, root: root == "" ? nil : root, print: print)
    let severity = set.contains("--warnings") ? "warning" : configuration.severity
    let lines = unregisteredResolutions(
        in: files, registeredElsewhere: configuration.registeredElsewhere, modules: Set(files.map(\.module)),
        severity: severity)
    lines.forEach(print)
    let failed = severity == "error" && !lines.isEmpty
    if let stamp = values["--stamp"] {
        try? FileManager.default.removeItem(atPath: stamp)
        let text = "// Written by injection-check after a check with no error (\(files.count) files).\n"
        guard failed || FileManager.default.createFile(atPath: stamp, contents: Data(text.utf8)) else {
            throw UsageError("cannot write the stamp \(stamp)")
        }
    }
    return failed ? 1 : 0
}

private func generate(_ arguments: [String], print: (String) -> Void) throws(UsageError) -> Int32 {
    let (set, values, paths) = try parse(arguments, flags: ["--check"], options: ["--output"])
    guard let output = values["--output"] else { throw UsageError("generate needs --output FILE") }
    guard !paths.isEmpty else { throw UsageError("no PATH to scan") }
    let generation = generateRegistrations(
        from: scan(paths, print: print), outputModule: lastComponent((output as NSString).deletingLastPathComponent))
    generation.messages.forEach(print)
    if generation.hasErrors { return 1 }
    let current = FileManager.default.contents(atPath: output).map { String(decoding: $0, as: UTF8.self) }
    if set.contains("--check") {
        guard current == generation.source else {
            print("\(output):1:1: error: Injection: this file is not what `injection-check generate` writes now; "
                + "run `swift package --allow-writing-to-package-directory generate-registrations --target <target>`")
            return 1
        }
    } else if current != generation.source {
        let folder = (output as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: folder.isEmpty ? "." : folder,
                                                 withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: output, contents: Data(generation.source.utf8)) else {
            throw UsageError("cannot write \(output)")
        }
    }
    return 0
}
