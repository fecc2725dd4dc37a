@_exported import Injection
import Foundation

extension InjectionGraph {
    /// Writes the graph to `path`: Mermaid for `.mmd` or `.mermaid` files, Graphviz DOT otherwise.
    ///
    /// ```swift
    /// @Test func writeGraph() throws {
    ///     registerLiveServices()
    ///     try InjectionManager.verify()
    ///     try InjectionManager.dependencyGraph().write(toFile: "build/graph.dot")
    /// }
    /// ```
    /// Render a DOT file with Graphviz: `dot -Tsvg build/graph.dot -o graph.svg`.
    ///
    /// - Throws: The error Foundation throws when the file cannot be written.
    public func write(toFile path: String) throws {
        let isMermaid = path.hasSuffix(".mmd") || path.hasSuffix(".mermaid")
        try (isMermaid ? mermaid : dot).write(toFile: path, atomically: true, encoding: .utf8)
    }
}
