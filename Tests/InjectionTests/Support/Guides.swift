import Foundation

/// The guides in Docs/, read from the source tree, for tests that check a guide's samples and quotes against the
/// code that compiles them and the messages the library gives.
enum Guides {
    /// The repository's root: the directory that holds `Tests/`, found from a test file's `#filePath`.
    static func root(from file: String) -> URL {
        var url = URL(fileURLWithPath: file)
        while url.lastPathComponent != "Tests", url.path != "/" { url.deleteLastPathComponent() }
        return url.deletingLastPathComponent()
    }

    /// The text of `Docs/<name>`.
    static func text(_ name: String, file: String = #filePath) throws -> String {
        try String(contentsOf: root(from: file).appendingPathComponent("Docs").appendingPathComponent(name), encoding: .utf8)
    }

    /// The fenced blocks of `language` (```swift, ```text) in `Docs/<name>`, in order, each without its fences and
    /// ending with a newline.
    static func blocks(_ language: String, of name: String, file: String = #filePath) throws -> [String] {
        var blocks: [String] = [], current: [Substring]?
        for line in try text(name, file: file).split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```\(language)" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.map { $0 + "\n" }.joined())
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// The lines of the test file `file` between `// BEGIN name` and `// END name`, without the indentation of
    /// the `BEGIN` line's, ending with a newline: a guide's samples as the test target compiles them.
    static func region(_ name: String, of file: String) throws -> String {
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        guard let begin = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "// BEGIN \(name)" }),
              let end = lines[begin...].firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "// END \(name)" })
        else { return "" }
        let indent = lines[begin].prefix { $0 == " " }.count
        return lines[(begin + 1)..<end].map { $0.dropFirst(min(indent, $0.prefix { $0 == " " }.count)) + "\n" }.joined()
    }
}
