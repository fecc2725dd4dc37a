/// A container's registrations by key: two words a bucket (a key and its retained registration), open
/// addressing with linear probing, at most three quarters full.
/// Deletion shifts the following entries back, so there are no tombstones. A value type: a copy shares
/// the buckets until one of them changes.
///
/// The bytes of a `Dictionary` of keys and registrations, but cheaper to fill at launch, when a container
/// takes thousands of registrations in a row: a key is hashed with one multiplication, not SipHash, and
/// compared as one word.
struct RegistrationTable {
    /// The buckets; `nil` while nothing was ever registered.
    private var buckets: Buckets?

    init() {}

    /// How many registrations there are.
    var count: Int { buckets?.count ?? 0 }

    /// The registration for `key`, if any.
    subscript(key: AnyType) -> Registration? {
        guard let buckets, let index = buckets.find(key) else { return nil }
        return buckets.registration(at: index)
    }

    /// Every registration, in no particular order.
    var values: [Registration] {
        guard let buckets else { return [] }
        var values: [Registration] = []
        values.reserveCapacity(buckets.count)
        buckets.forEachIndex { values.append(buckets.registration(at: $0)) }
        return values
    }

    /// Stores `registration` under its own key; returns the one it replaced.
    mutating func updateValue(_ registration: Registration) -> Registration? {
        // One reference, taken here and handed to the bucket: the compiler's own would come in pairs.
        let retained = Unmanaged.passRetained(registration)
        makeUnique(adding: 1)
        return storage._withUnsafeGuaranteedRef { $0.insert(retained) }
    }

    /// Removes the registration for `key`; returns it.
    mutating func removeValue(forKey key: AnyType) -> Registration? {
        guard buckets?.find(key) != nil else { return nil }
        makeUnique(adding: 0)
        return storage._withUnsafeGuaranteedRef { $0.remove(key) }
    }

    /// Removes every registration.
    mutating func removeAll() {
        buckets = nil
    }

    /// The buckets, which the table holds while it is borrowed: using them through this costs no
    /// reference count, where a call on the stored reference retains it around the call.
    @inline(__always)
    private var storage: Unmanaged<Buckets> { .passUnretained(buckets.unsafelyUnwrapped) }

    /// Makes the buckets this table's own (copied if shared), with room for `adding` more registrations.
    private mutating func makeUnique(adding: Int) {
        let isUnique = isKnownUniquelyReferenced(&buckets)  // Before binding it, which would be a second reference.
        guard let current = buckets else {
            buckets = Buckets.make(capacity: 8)
            return
        }
        if (current.count + adding) * 4 > current.bucketCount * 3 {
            buckets = current.copy(capacity: current.bucketCount * 2, moving: isUnique)
        } else if !isUnique {
            buckets = current.copy(capacity: current.bucketCount, moving: false)
        }
    }

    /// The buckets: their count and capacity (a power of two) in the header, then every bucket's key (its
    /// ``AnyType/bits``, or 0 for an empty bucket), then, at the same index, that key's retained
    /// registration (a word written with its key, and never read before). A probe and a growth read these
    /// words, never a registration: on a table of thousands, reading each registration's key was a cache
    /// miss each, and the main cost of registering at launch. Only the keys are zeroed when a table is made.
    private final class Buckets: ManagedBuffer<(count: Int, capacity: Int), UInt> {
        static func make(capacity: Int) -> Buckets {
            let buckets = unsafeDowncast(Buckets.create(minimumCapacity: 2 * capacity) { _ in (0, capacity) }, to: Buckets.self)
            buckets.withUnsafeMutablePointerToElements { $0.initialize(repeating: 0, count: capacity) }
            return buckets
        }

        deinit {
            guard count > 0 else { return }  // Empty, or moved out (its words are left as they were).
            forEachIndex { Unmanaged<Registration>.fromOpaque(address(at: $0)).release() }
        }

        /// A copy with `capacity` buckets: holding references of its own, or, `moving`, this one's (which
        /// is left with a count of 0, and must not be used but to be released).
        func copy(capacity: Int, moving: Bool) -> Buckets {
            let copy = Buckets.make(capacity: capacity)
            let oldCount = bucketCount
            withUnsafeMutablePointerToElements { old in
                copy.withUnsafeMutablePointerToElements { new in
                    for index in 0..<oldCount where old[index] != 0 {
                        if !moving { _ = Unmanaged<Registration>.fromOpaque(Self.address(old[oldCount &+ index])).retain() }
                        let slot = copy.slot(for: old[index]).index
                        new[slot] = old[index]
                        new[capacity &+ slot] = old[oldCount &+ index]  // A trivial type's memory: assigned as it is.
                    }
                }
            }
            copy.count = count
            if moving { self.count = 0 }
            return copy
        }

        /// How many registrations there are. (Through the header's pointer: a `header` access checks exclusivity.)
        var count: Int {
            get { withUnsafeMutablePointerToHeader { $0.pointee.count } }
            set { withUnsafeMutablePointerToHeader { $0.pointee.count = newValue } }
        }

        /// How many buckets there are: a power of two. (Not `capacity`, which may be more than asked for.)
        var bucketCount: Int { withUnsafeMutablePointerToHeader { $0.pointee.capacity } }

        @inline(__always)
        private var mask: Int { bucketCount &- 1 }

        /// The key bits in bucket `index`, or 0.
        @inline(__always)
        private func key(at index: Int) -> UInt { withUnsafeMutablePointerToElements { $0[index] } }

        @inline(__always)
        private func address(at index: Int) -> UnsafeRawPointer {
            Self.address(withUnsafeMutablePointerToElements { $0[bucketCount &+ index] })
        }

        @inline(__always)
        private static func address(_ word: UInt) -> UnsafeRawPointer { UnsafeRawPointer(bitPattern: word).unsafelyUnwrapped }

        func registration(at index: Int) -> Registration {
            Unmanaged<Registration>.fromOpaque(address(at: index)).takeUnretainedValue()
        }

        func forEachIndex(_ body: (Int) -> Void) {
            for index in 0..<bucketCount where key(at: index) != 0 { body(index) }
        }

        /// The home bucket of `key`: Fibonacci hashing, whose high bits are the best mixed.
        @inline(__always)
        private func home(_ key: UInt) -> Int {
            let product = UInt64(truncatingIfNeeded: key) &* 0x9E37_79B9_7F4A_7C15
            return Int(truncatingIfNeeded: product &>> UInt64(64 - bucketCount.trailingZeroBitCount))
        }

        /// The index of the registration for `key`, if there is one.
        @inline(__always)
        func find(_ key: AnyType) -> Int? {
            let (index, found) = slot(for: key.bits)
            return found ? index : nil
        }

        /// The bucket of `key`'s registration (`found`), else the empty bucket that ends its run.
        @inline(__always)
        private func slot(for key: UInt) -> (index: Int, found: Bool) {
            var index = home(key)
            while true {
                let bits = self.key(at: index)
                if bits == key { return (index, true) }
                if bits == 0 { return (index, false) }
                index = (index &+ 1) & mask
            }
        }

        /// Stores `registration` (retained for the table) under its own key, with room for it; returns the one
        /// it replaced.
        func insert(_ registration: Unmanaged<Registration>) -> Registration? {
            let key = registration._withUnsafeGuaranteedRef { $0.type }
            let (index, found) = slot(for: key.bits)
            let replaced = found ? Unmanaged<Registration>.fromOpaque(address(at: index)).takeRetainedValue() : nil
            let capacity = bucketCount
            withUnsafeMutablePointerToElements {
                $0[index] = key.bits
                $0[capacity &+ index] = UInt(bitPattern: registration.toOpaque())
            }
            if !found { count += 1 }
            return replaced
        }

        /// Removes the registration for `key`, which is here; returns it.
        func remove(_ key: AnyType) -> Registration {
            var hole = find(key).unsafelyUnwrapped
            let removed = Unmanaged<Registration>.fromOpaque(address(at: hole)).takeRetainedValue()
            let capacity = bucketCount
            withUnsafeMutablePointerToElements { elements in
                // Shift back each following entry of the run that may move into the hole (its home bucket
                // is not between the hole and it, cyclically).
                var next = (hole &+ 1) & mask
                while elements[next] != 0 {
                    let home = home(elements[next])
                    if (hole &- home) & mask <= (next &- home) & mask {
                        elements[hole] = elements[next]
                        elements[capacity &+ hole] = elements[capacity &+ next]
                        hole = next
                    }
                    next = (next &+ 1) & mask
                }
                elements[hole] = 0
            }
            count -= 1
            return removed
        }
    }
}
