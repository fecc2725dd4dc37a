/// A hash table from a nonzero word (a key's ``AnyType/bits``) to a retained object: each thread's cache
/// of a container (``ThreadCache``).
///
/// Open addressing with linear probing, at most three quarters full, a key hashed with one
/// multiplication (Fibonacci hashing) and compared as one word. Deletion shifts the following entries
/// back, so there are no tombstones. The buckets' count and capacity (a power of two) are in the header,
/// then the buckets, two words each: a key (0: empty) and its value, a retained object's address, whose
/// bit 0 (always clear in an address) the owner may use as a tag. A key beside its value: a lookup
/// touches one cache line for both.
final class ObjectTable: ManagedBuffer<(count: Int, capacity: Int), UInt> {
    /// The bit of a value the owner may set: an object's address is at least word-aligned.
    static let tag: UInt = 1

    /// An empty table with `capacity` buckets, a power of two.
    static func make(capacity: Int) -> ObjectTable {
        let table = ObjectTable.create(minimumCapacity: 2 * capacity) { _ in (0, capacity) } as! ObjectTable
        table.withUnsafeMutablePointerToElements { words in
            for index in 0..<capacity { (words + 2 &* index).initialize(to: 0) }  // The keys: a value is written with its key.
        }
        return table
    }

    deinit {
        guard count > 0 else { return }  // Empty, or emptied by `grown()` or `takeAll(_:)`.
        forEachEntry { Self.object($1).release() }
    }

    /// The retained object a value holds, its tag cleared.
    static func object<Object: AnyObject>(_ value: UInt, as _: Object.Type = AnyObject.self) -> Unmanaged<Object> {
        .fromOpaque(UnsafeRawPointer(bitPattern: value & ~tag)!)
    }

    /// A table with twice the buckets holding this one's entries, and their references: this one is left
    /// with a count of 0, to be released.
    func grown() -> ObjectTable {
        let copy = ObjectTable.make(capacity: bucketCount * 2)
        forEachEntry { key, value in _ = copy.insert(key, value) }
        count = 0
        return copy
    }

    /// How many entries there are. (Through the header's pointer: a `header` access checks exclusivity.)
    private(set) var count: Int {
        get { withUnsafeMutablePointerToHeader { $0.pointee.count } }
        set { withUnsafeMutablePointerToHeader { $0.pointee.count = newValue } }
    }

    /// How many buckets there are: a power of two. (Not `capacity`, which may be more than asked for.)
    var bucketCount: Int { withUnsafeMutablePointerToHeader { $0.pointee.capacity } }

    /// Whether `adding` more entries would make it more than three quarters full: grow it first.
    func isFull(adding: Int) -> Bool { (count &+ adding) &* 4 > bucketCount &* 3 }

    private var mask: Int { bucketCount &- 1 }

    /// The key in bucket `index`, or 0.
    private func key(at index: Int) -> UInt { withUnsafeMutablePointerToElements { $0[2 &* index] } }

    /// The value in bucket `index`, which holds a key.
    func value(at index: Int) -> UInt { withUnsafeMutablePointerToElements { $0[2 &* index &+ 1] } }

    /// Calls `body` with each key and its value.
    func forEachEntry(_ body: (UInt, UInt) -> Void) {
        for index in 0..<bucketCount where key(at: index) != 0 { body(key(at: index), value(at: index)) }
    }

    /// Hands each value's reference to `body`, leaving the table with a count of 0, only to be released.
    func takeAll(_ body: (UInt) -> Void) {
        forEachEntry { body($1) }
        count = 0
    }

    /// The home bucket of `key`: the product's high bits, the best mixed.
    private func home(_ key: UInt) -> Int {
        let product = UInt64(truncatingIfNeeded: key) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: product &>> UInt64(64 - bucketCount.trailingZeroBitCount))
    }

    /// The bucket of `key`, if it is here.
    func find(_ key: UInt) -> Int? {
        let (index, found) = slot(for: key)
        return found ? index : nil
    }

    /// The bucket of `key` (`found`), else the empty bucket that ends its run.
    private func slot(for key: UInt) -> (index: Int, found: Bool) {
        var index = home(key)
        while true {
            let bits = self.key(at: index)
            if bits == key { return (index, true) }
            if bits == 0 { return (index, false) }
            index = (index &+ 1) & mask
        }
    }

    /// Stores `value` (its reference handed to the table) for `key`, in a table with room for it (see
    /// ``isFull(adding:)``); returns the value it replaced, with its reference.
    func insert(_ key: UInt, _ value: UInt) -> UInt? {
        let (index, found) = slot(for: key)
        let replaced = found ? self.value(at: index) : nil
        withUnsafeMutablePointerToElements {
            $0[2 &* index] = key
            $0[2 &* index &+ 1] = value
        }
        if !found { count += 1 }
        return replaced
    }

    /// Removes the entry for `key`; returns its value, with its reference, or `nil` if there is none.
    func remove(_ key: UInt) -> UInt? {
        guard var hole = find(key) else { return nil }
        let removed = value(at: hole)
        withUnsafeMutablePointerToElements { elements in
            // Shift back each following entry of the run that may move into the hole (its home bucket
            // is not between the hole and it, cyclically).
            var next = (hole &+ 1) & mask
            while elements[2 &* next] != 0 {
                let home = home(elements[2 &* next])
                if (hole &- home) & mask <= (next &- home) & mask {
                    elements[2 &* hole] = elements[2 &* next]
                    elements[2 &* hole &+ 1] = elements[2 &* next &+ 1]
                    hole = next
                }
                next = (next &+ 1) & mask
            }
            elements[2 &* hole] = 0
        }
        count -= 1
        return removed
    }
}
