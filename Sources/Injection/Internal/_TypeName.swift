/// Readable type names for messages.
enum _TypeName {
    /// The name a user writes in code, e.g. `API` or `(String) -> Detail`.
    static func of<T>(_ type: T.Type) -> String {
        String(describing: type)
    }

    /// `name` as an expression prefix for `.self`: function types need parentheses.
    static func literal(_ name: String) -> String {
        name.contains("->") || name.contains(" ") ? "(\(name))" : name
    }
}
