/// A hash table from a key (``AnyType``) to an element: a container's slots (``ContainerState``), and
/// each thread's cache of a container (``ThreadCache``), whose elements are tagged object words.
///
/// Open addressing with linear probing, at most three quarters full, a key hashed with one
/// multiplication (Fibonacci hashing) and compared as one word (0 marks an empty bucket). A removal
/// shifts the entries after it back, so there are no tombstones. A value type: a copy shares the storage
/// until one of them changes. (A `Dictionary` hashes with SipHash: registering at launch was 2.5x slower
/// than the seed registry it is measured against, whose target is 1.5x.)
struct HashTable<Element> {
    /// The header holds the count, the bucket count (a power of two) and the elements; the keys are the
    /// buffer's tail, where a probe reads only them.
    private final class Storage: ManagedBuffer<(count: Int, buckets: Int, elements: UnsafeMutablePointer<Element>), UInt> {
        static func make(buckets: Int) -> Storage {
            let made = create(minimumCapacity: buckets) { _ in (0, buckets, .allocate(capacity: buckets)) } as! Storage
            made.withUnsafeMutablePointerToElements { $0.initialize(repeating: 0, count: buckets) }
            return made
        }

        deinit {
            withUnsafeMutablePointers { header, keys in
                for index in 0..<header.pointee.buckets where keys[index] != 0 { (header.pointee.elements + index).deinitialize(count: 1) }
                header.pointee.elements.deallocate()
            }
        }
    }

    private var storage: Storage?

    init() {}

    /// Where `key`'s entry is, if it is here (valid until the table changes).
    func index(of key: AnyType) -> Int? {
        storage?.withUnsafeMutablePointers { header, keys in
            let (index, found) = Self.probe(key.bits, keys, header.pointee.buckets)
            return found ? index : nil
        } ?? nil
    }

    /// The element at `index` (see ``index(of:)``).
    func element(at index: Int) -> Element { storage!.withUnsafeMutablePointerToHeader { $0.pointee.elements[index] } }

    /// The element for `key`, if any.
    subscript(key: AnyType) -> Element? { index(of: key).map(element(at:)) }

    /// Calls `body` with the element at `index`, in place.
    mutating func withElement<Result>(at index: Int, _ body: (inout Element) -> Result) -> Result {
        makeUnique()
        return storage!.withUnsafeMutablePointerToHeader { body(&$0.pointee.elements[index]) }
    }

    /// Calls `body` with every element, in place, in no particular order.
    mutating func forEachElement(_ body: (inout Element) -> Void) {
        makeUnique()
        storage?.withUnsafeMutablePointers { header, keys in
            for index in 0..<header.pointee.buckets where keys[index] != 0 { body(&header.pointee.elements[index]) }
        }
    }

    /// Every key, in no particular order: the words only, no element copied.
    var keys: [AnyType] {
        storage?.withUnsafeMutablePointers { header, keys in
            (0..<header.pointee.buckets).filter { keys[$0] != 0 }.map { AnyType(bits: keys[$0]) }
        } ?? []
    }

    /// Every key and element, in no particular order.
    var entries: [(key: AnyType, element: Element)] { keys.map { ($0, self[$0]!) } }

    /// Stores `element` for `key`; returns the element it replaced.
    @discardableResult mutating func insert(_ element: Element, for key: AnyType) -> Element? {
        makeUnique(adding: 1)
        return storage!.withUnsafeMutablePointers { header, keys in
            let (index, found) = Self.probe(key.bits, keys, header.pointee.buckets)
            let slot = header.pointee.elements + index
            if found {
                let replaced = slot.move()
                slot.initialize(to: element)
                return replaced
            }
            keys[index] = key.bits
            slot.initialize(to: element)
            header.pointee.count += 1
            return nil
        }
    }

    /// Removes the entry for `key`; returns its element, or `nil` if there is none.
    @discardableResult mutating func remove(_ key: AnyType) -> Element? {
        guard index(of: key) != nil else { return nil }
        makeUnique()
        return storage!.withUnsafeMutablePointers { header, keys in
            let buckets = header.pointee.buckets, elements = header.pointee.elements, mask = buckets &- 1
            var hole = Self.probe(key.bits, keys, buckets).index
            let removed = (elements + hole).move()
            // Shift back each following entry of the run that may move into the hole (its home bucket is not
            // between the hole and it, cyclically).
            var next = (hole &+ 1) & mask
            while keys[next] != 0 {
                let home = Self.home(keys[next], buckets)
                if (hole &- home) & mask <= (next &- home) & mask {
                    keys[hole] = keys[next]
                    (elements + hole).moveInitialize(from: elements + next, count: 1)
                    hole = next
                }
                next = (next &+ 1) & mask
            }
            keys[hole] = 0
            header.pointee.count -= 1
            return removed
        }
    }

    /// The home bucket of `key`: the product's high bits, the best mixed.
    private static func home(_ key: UInt, _ buckets: Int) -> Int {
        let product = UInt64(truncatingIfNeeded: key) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: product &>> UInt64(64 - buckets.trailingZeroBitCount))
    }

    /// The bucket of `key` (`found`), else the empty bucket that ends its run.
    private static func probe(_ key: UInt, _ keys: UnsafeMutablePointer<UInt>, _ buckets: Int) -> (index: Int, found: Bool) {
        var index = home(key, buckets)
        while true {
            if keys[index] == key { return (index, true) }
            if keys[index] == 0 { return (index, false) }
            index = (index &+ 1) & (buckets &- 1)
        }
    }

    /// Makes the storage this value's own (copied if shared), with room for `adding` more entries.
    private mutating func makeUnique(adding: Int = 0) {
        let isUnique = isKnownUniquelyReferenced(&storage)  // Before binding it, which would be a second reference.
        guard let current = storage else {
            if adding > 0 { storage = .make(buckets: 8) }
            return
        }
        let (count, buckets) = current.withUnsafeMutablePointerToHeader { ($0.pointee.count, $0.pointee.buckets) }
        let grows = (count &+ adding) &* 4 > buckets &* 3
        guard grows || !isUnique else { return }
        let copy = Storage.make(buckets: grows ? buckets * 2 : buckets)
        current.withUnsafeMutablePointers { header, keys in
            copy.withUnsafeMutablePointers { newHeader, newKeys in
                let (elements, newElements) = (header.pointee.elements, newHeader.pointee.elements)
                for index in 0..<buckets where keys[index] != 0 {
                    let target = Self.probe(keys[index], newKeys, newHeader.pointee.buckets).index
                    newKeys[target] = keys[index]
                    if isUnique {
                        (newElements + target).moveInitialize(from: elements + index, count: 1)
                        keys[index] = 0  // Moved out: the old storage's deinit must not destroy it.
                    } else { (newElements + target).initialize(to: elements[index]) }
                }
                newHeader.pointee.count = count
            }
        }
        storage = copy
    }
}
