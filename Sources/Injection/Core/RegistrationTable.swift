/// A container's registrations by key: one word a bucket (the registration, whose ``Registration/id``
/// is its key), open addressing with linear probing, at most three quarters full. Deletion shifts the
/// following entries back, so there are no tombstones. A value type, copied on write through its array.
///
/// Half the bytes of a `Dictionary` of keys and registrations, which matters at launch: a registration is
/// the one object a container keeps per type.
struct RegistrationTable {
    /// A power of two buckets (none while empty).
    private var buckets: [Registration?] = []
    /// How many registrations there are.
    private(set) var count = 0

    init() {}

    /// The registration for `key`, if any.
    subscript(key: TypeID) -> Registration? {
        guard let index = find(key) else { return nil }
        return buckets[index]
    }

    /// Every registration, in no particular order.
    var values: [Registration] { buckets.compactMap { $0 } }

    /// Stores `registration` under its own key; returns the one it replaced.
    mutating func updateValue(_ registration: Registration) -> Registration? {
        if let index = find(registration.id) {
            defer { buckets[index] = registration }
            return buckets[index]
        }
        if (count + 1) * 4 > buckets.count * 3 { grow() }
        buckets[emptyBucket(for: registration.id)] = registration
        count += 1
        return nil
    }

    /// Removes the registration for `key`; returns it.
    mutating func removeValue(forKey key: TypeID) -> Registration? {
        guard var hole = find(key) else { return nil }
        let removed = buckets[hole]
        let mask = buckets.count - 1
        // Shift back each following entry of the run that may move into the hole (its home bucket is
        // not between the hole and it, cyclically).
        var next = (hole + 1) & mask
        while let entry = buckets[next] {
            let home = bucket(entry.id)
            if (hole - home) & mask <= (next - home) & mask {
                buckets[hole] = entry
                hole = next
            }
            next = (next + 1) & mask
        }
        buckets[hole] = nil
        count -= 1
        return removed
    }

    /// Removes every registration.
    mutating func removeAll() {
        buckets = []
        count = 0
    }

    /// The home bucket of `key`: Fibonacci hashing, whose high bits are the best mixed.
    @inline(__always)
    private func bucket(_ key: TypeID) -> Int {
        let product = UInt64(truncatingIfNeeded: key.bits) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: product &>> UInt64(64 - buckets.count.trailingZeroBitCount))
    }

    /// The index of the registration for `key`, if there is one.
    private func find(_ key: TypeID) -> Int? {
        guard !buckets.isEmpty else { return nil }
        let mask = buckets.count - 1
        var index = bucket(key)
        while let entry = buckets[index] {
            if entry.id == key { return index }
            index = (index + 1) & mask
        }
        return nil
    }

    /// The first empty bucket of `key`'s run.
    private func emptyBucket(for key: TypeID) -> Int {
        let mask = buckets.count - 1
        var index = bucket(key)
        while buckets[index] != nil { index = (index + 1) & mask }
        return index
    }

    private mutating func grow() {
        let old = buckets
        buckets = Array(repeating: nil, count: max(old.count * 2, 8))
        for case let registration? in old { buckets[emptyBucket(for: registration.id)] = registration }
    }
}
