/// Carries a value out of `MainActor.assumeIsolated`, which requires `Sendable` results: the value is
/// made and used on the main actor, so nothing crosses an isolation boundary.
struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
