/// The dependency graph of a container: registered types and the "A needs B" edges seen so far.
///
/// Edges are recorded by the first run of each registration's factory (and by
/// ``InjectionContainer/verify()``, which runs them all), synchronous and async builds alike; verify first to see
/// the whole graph. A type registered again loses the edges its old factory recorded, until its new factory runs.
/// The edges of a captive dependency (a `.singleton` or `.weak` type that holds a `.scoped` one) are drawn red,
/// labelled `captive`.
///
/// ```swift
/// try InjectionManager.verify()
/// let graph = InjectionManager.dependencyGraph()
/// print(graph.dot)       // Graphviz: dot -Tsvg graph.dot -o graph.svg
/// print(graph.mermaid)   // paste into Markdown that renders Mermaid
/// ```
public struct InjectionGraph: Sendable, CustomStringConvertible {
    /// A type in the graph.
    public struct Node: Hashable, Sendable {
        /// The type's readable name.
        public let name: String
        /// How long its instances live, or `nil` if something needs it but it is not registered.
        public let lifetime: InjectionLifetime?

        /// Creates a node.
        public init(name: String, lifetime: InjectionLifetime?) { (self.name, self.lifetime) = (name, lifetime) }
    }

    /// "`from` needs `to`": the factory of `from` resolved `to`.
    public struct Edge: Hashable, Sendable {
        /// The type whose factory resolved ``to``.
        public let from: String
        /// The type it resolved.
        public let to: String

        /// Creates an edge: `from` needs `to`.
        public init(from: String, to: String) { (self.from, self.to) = (from, to) }
    }

    /// Every registered type, and every type something needs, sorted by name.
    public let nodes: [Node]
    /// Every edge seen, sorted.
    public let edges: [Edge]
    /// The edges on the path of a captive dependency (see ``InjectionError/Kind/captiveDependency``), sorted.
    public let captiveEdges: [Edge]

    init(
        registered: [(AnyType, InjectionLifetime)], edges seen: [AnyType: Set<AnyType>], captive: Set<Edge>,
        names: TypeNames
    ) {
        captiveEdges = captive.sorted { ($0.from, $0.to) < ($1.from, $1.to) }
        var lifetimes: [String: InjectionLifetime?] = [:]
        for (type, lifetime) in registered { lifetimes[names.nodeName(type)] = lifetime }
        let pairs = seen.flatMap { from, to in to.map { (from, $0) } }
        let edges = Set(pairs.map { Edge(from: names.nodeName($0), to: names.nodeName($1)) })
        for name in edges.flatMap({ [$0.from, $0.to] }) where lifetimes[name] == nil { lifetimes[name] = .some(nil) }
        nodes = lifetimes.map { Node(name: $0.key, lifetime: $0.value) }.sorted { $0.name < $1.name }
        self.edges = edges.sorted { ($0.from, $0.to) < ($1.from, $1.to) }
    }

    /// The graph in Graphviz's DOT language; missing types are drawn red and dashed.
    public var dot: String {
        var lines = ["digraph Injection {", "    rankdir=LR;", "    node [shape=box, style=rounded, fontname=Helvetica];"]
        for node in nodes {
            let label = "\(node.name)\\n\(node.lifetime?.description ?? "not registered")"
            let style = node.lifetime == nil ? ", color=red, fontcolor=red, style=\"rounded,dashed\"" : ""
            lines.append("    \(Self.dotQuoted(node.name)) [label=\(Self.dotQuoted(label))\(style)];")
        }
        for edge in edges {
            let style = captiveEdges.contains(edge) ? " [color=red, fontcolor=red, label=\"captive\"]" : ""
            lines.append("    \(Self.dotQuoted(edge.from)) -> \(Self.dotQuoted(edge.to))\(style);")
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The graph as a Mermaid flowchart; missing types get the class `missing`.
    public var mermaid: String {
        let ids = Dictionary(uniqueKeysWithValues: nodes.enumerated().map { ($0.element.name, "n\($0.offset)") })
        var lines = ["flowchart LR"]
        for node in nodes {
            let label = "\(Self.mermaidEscaped(node.name))<br/>\(node.lifetime?.description ?? "not registered")"
            lines.append("    \(ids[node.name]!)[\"\(label)\"]")
        }
        for edge in edges {
            lines.append("    \(ids[edge.from]!) -->\(captiveEdges.contains(edge) ? "|captive|" : "") \(ids[edge.to]!)")
        }
        let captive = edges.indices.filter { captiveEdges.contains(edges[$0]) }.map(String.init)
        if !captive.isEmpty { lines.append("    linkStyle \(captive.joined(separator: ",")) stroke:#d00,color:#d00") }
        let missing = nodes.filter { $0.lifetime == nil }.map { ids[$0.name]! }
        if !missing.isEmpty {
            lines.append("    classDef missing stroke:#d00,stroke-dasharray:4,color:#d00")
            lines.append("    class \(missing.joined(separator: ",")) missing")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// One line per edge, `A → B`, then any type nothing needs and that needs nothing.
    public var description: String {
        let connected = Set(edges.flatMap { [$0.from, $0.to] })
        let lines = edges.map { "\($0.from) → \($0.to)" } + nodes.filter { !connected.contains($0.name) }.map(\.name)
        return lines.joined(separator: "\n")
    }

    private static func dotQuoted(_ text: String) -> String { "\"" + escaped(text, ["\"": "\\\""]) + "\"" }

    /// Escapes text for a Mermaid label (the `<br/>` line breaks this type inserts are added after).
    private static func mermaidEscaped(_ text: String) -> String {
        escaped(text, ["\"": "#quot;", "<": "#lt;", ">": "#gt;"])
    }

    private static func escaped(_ text: String, _ replacements: [Character: String]) -> String {
        text.map { replacements[$0] ?? String($0) }.joined()
    }
}
