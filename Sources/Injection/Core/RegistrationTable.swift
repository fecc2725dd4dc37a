/// A container's registrations by key: an ``ObjectTable`` of retained registrations. A value type: a
/// copy shares the table until one of them changes.
///
/// The bytes of a `Dictionary` of keys and registrations, but cheaper to fill at launch, when a container
/// takes thousands of registrations in a row (see ``ObjectTable``).
struct RegistrationTable {
    /// The table; `nil` while nothing was ever registered.
    private var table: ObjectTable?

    init() {}

    /// How many registrations there are.
    var count: Int { table?.count ?? 0 }

    /// The registration for `key`, if any.
    subscript(key: AnyType) -> Registration? {
        guard let table, let index = table.find(key.bits) else { return nil }
        return Self.registration(table.value(at: index))
    }

    /// Every registration, in no particular order.
    var values: [Registration] {
        guard let table else { return [] }
        var values: [Registration] = []
        values.reserveCapacity(table.count)
        table.forEachValue { values.append(Self.registration($0)) }
        return values
    }

    /// Stores `registration` under its own key; returns the one it replaced.
    @inline(__always)  // Into `ContainerState.replace`, the launch's register path.
    mutating func updateValue(_ registration: Registration) -> Registration? {
        // One reference, taken here and handed to the table: the compiler's own would come in pairs.
        let retained = UInt(bitPattern: Unmanaged.passRetained(registration).toOpaque())
        let key = registration.type.bits
        makeUnique(adding: 1)
        guard let replaced = storage._withUnsafeGuaranteedRef({ $0.insert(key, retained) }) else { return nil }
        return Self.take(replaced)
    }

    /// Removes the registration for `key`; returns it.
    mutating func removeValue(forKey key: AnyType) -> Registration? {
        guard table?.find(key.bits) != nil else { return nil }
        makeUnique(adding: 0)
        return storage._withUnsafeGuaranteedRef { $0.remove(key.bits) }.map(Self.take)
    }

    /// Removes every registration.
    mutating func removeAll() {
        table = nil
    }

    /// The table, which this value holds while it is borrowed: using it through this costs no reference
    /// count, where a call on the stored reference retains it around the call.
    @inline(__always)
    private var storage: Unmanaged<ObjectTable> { .passUnretained(table.unsafelyUnwrapped) }

    /// Makes the table this value's own (copied if shared), with room for `adding` more registrations.
    private mutating func makeUnique(adding: Int) {
        let isUnique = isKnownUniquelyReferenced(&table)  // Before binding it, which would be a second reference.
        guard let current = table else {
            table = ObjectTable.make(capacity: 8)
            return
        }
        if current.isFull(adding: adding) {
            table = current.copy(capacity: current.bucketCount * 2, moving: isUnique)
        } else if !isUnique {
            table = current.copy(capacity: current.bucketCount, moving: false)
        }
    }

    @inline(__always)
    private static func registration(_ value: UInt) -> Registration {
        ObjectTable.object(value, as: Registration.self).takeUnretainedValue()
    }

    /// The registration a value taken out of the table holds, with the table's reference.
    @inline(__always)
    private static func take(_ value: UInt) -> Registration {
        ObjectTable.object(value, as: Registration.self).takeRetainedValue()
    }
}
