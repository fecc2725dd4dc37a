/// The registration's one refusal: a type no container can store.
extension Registration {
    /// Traps if `Value` is a type no container can store (see ``hasUnreliableLayout(_:)``).
    static func refuseUnreliableLayout<Value>(_: Value.Type) {
        guard hasUnreliableLayout(Value.self) else { return }
        let name = TypeNames.literal(Value.self, named: TypeNames.written(Value.self))
        preconditionFailure("""
            Injection: \(name) cannot be registered: it is an Error existential constrained to a class, whose size \
            Swift 6.3's compiler and runtime disagree on, so no container can store it safely. Register a protocol \
            of your own instead (protocol AppFailure: Error, AnyObject {}, then register((any AppFailure).self) \
            { ... }), or the class itself.
            """)
    }

    /// Whether `type` is an `Error` existential constrained to a class (`any Error & AnyObject`,
    /// `any Error & SomeClass`), or an optional of one: Swift 6.3's compiler and runtime disagree on its
    /// size (code that names the type may lay it out in 16 bytes where the metadata generic code reads says
    /// 8), so generic code cannot store, copy or box one safely: the register refuses it. Read from the
    /// type's metadata (its kind and existential flags, part of Swift's stable ABI).
    private static func hasUnreliableLayout(_ type: Any.Type) -> Bool {
        // The metadata's address.
        let metadata = UnsafeRawPointer(bitPattern: UInt(bitPattern: ObjectIdentifier(type)))!
        switch metadata.load(as: UInt.self) {  // The metadata's kind.
        // An existential: class-constrained (bit 31 clear) with `Error` as its special protocol (1 in bits 24-29).
        case 0x303:
            return metadata.load(fromByteOffset: MemoryLayout<UInt>.size, as: UInt32.self) & 0xBF00_0000 == 0x0100_0000
        case 0x202:  // An `Optional`: its wrapped type decides.
            return (type as? any OptionalType.Type).map { hasUnreliableLayout($0.wrappedType) } ?? false
        default: return false
        }
    }
}
