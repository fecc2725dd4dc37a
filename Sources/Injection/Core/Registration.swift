/// A registered factory and its lifetime, and the container's state for it: its cached instance or
/// build in progress. A new object per `register`, so identity tells whether a build is still current.
///
/// Not generic: the factory is kept as its closure's words (its function alone when it captures nothing)
/// and called typed where the type is known (the transient fast path, and the slow path through ``valueType``), so registering a type
/// allocates one object and instantiates no metadata for it.
///
/// The `let`s are read anywhere; the `var`s belong to ``ContainerState`` and are touched only under the
/// container's lock (but ``slot``, which a thread whose cache holds the registration reads under that
/// cache's lock: see there), which is why they skip the runtime's exclusivity checks.
@usableFromInline
final class Registration: @unchecked Sendable {
    typealias Make = @Sendable () throws -> Box
    typealias MakeAsync = @Sendable () async throws -> Box

    /// Where a factory may run.
    enum Kind: UInt8 {
        /// Wherever it is resolved: the factory is a `@Sendable () throws -> Value`, kept as its words.
        /// An `implements` alias's ``Rare/held`` is a ``MakeAsync`` that `resolveAsync` runs instead.
        case plain
        /// Only on the main actor: claiming it off the main actor fails or hops first. ``Rare/held`` is a
        /// ``Make``.
        case mainActor
        /// Only in `resolveAsync` and `prepare`: its factory never runs from a thread's cache (its cached
        /// instance may be served from one). ``Rare/held`` is a
        /// ``MakeAsync``.
        case async
    }

    /// What few registrations have, held apart so the others are smaller: a main-actor or async factory,
    /// a plain factory that captures values (its closure has a context), a `postConstruction` closure,
    /// a value type other than the requested type (a key's `Value`, a builder's closure). A registration
    /// with any of them keeps this in ``factory`` (see there).
    private final class Rare: @unchecked Sendable {  // Immutable.
        /// A plain factory's closure as its two words, a function and its context (retained here; see
        /// ``typedFactory(as:)``); else `nil`s.
        let plain: (function: UnsafeRawPointer?, context: UnsafeRawPointer?)
        /// A main-actor factory's ``Make``, or an async factory's ``MakeAsync``, or an alias's async form
        /// (a ``MakeAsync``).
        let held: Any?
        let postConstruct: PostConstruct?
        /// `nil`: the requested type.
        let valueType: Any.Type?
        /// An `implements` alias's primary: the type it resolves.
        let primary: AnyType?

        init(
            _ plain: (UnsafeRawPointer?, UnsafeRawPointer?), _ held: Any?, _ postConstruct: PostConstruct?, _ valueType: Any.Type?,
            primary: AnyType? = nil
        ) {
            self.plain = plain
            self.held = held
            self.postConstruct = postConstruct
            self.valueType = valueType
            self.primary = primary
            if let context = plain.1 { _ = Unmanaged<AnyObject>.fromOpaque(context).retain() }
        }

        deinit {
            if let context = plain.context { Unmanaged<AnyObject>.fromOpaque(context).release() }
        }
    }

    // Stored properties are in an order that leaves no padding: a registration is the largest object the
    // container keeps per type, and it holds the cached instance itself. 16 bytes of object header and
    // 40 of fields (the last word holds four): 56, which glibc's malloc and Darwin's both serve from a
    // 64-byte block. At launch, when thousands are made, the pages an app touches are most of what a
    // registration costs (see Benchmarks/README.md, run 19): so the registering file is a two-byte index
    // and the disposable test's answer is kept per class, process-wide (``Instance/isDisposable(_:)``).

    /// The plain factory's function, for a closure that captures nothing (its context is `nil`), the
    /// usual `{ LiveAPI() }`; or, with ``hasRareBit`` in ``traits``, a retained ``Rare`` holding the rest.
    private let factory: UnsafeRawPointer?
    /// The requested type, and the registration's key: the registered type, or the `InjectionKey` type.
    let type: AnyType

    // MARK: The container's state (`ContainerState`'s, under the container's lock)

    /// The instance, while ``hasInstance``: for `.scoped` and `.singleton`, the value itself when it fits
    /// two words (``storesInline``), else a retained `Box`'s address in the first word; for `.weak`, a
    /// retained `WeakReference`'s address in the first word. See ``store(_:in:)`` and ``weakInstance``.
    /// While an instance is built, the second word holds the build (see ``inFlight``).
    ///
    /// A thread whose cache holds this registration copies the value out of here under its own cache
    /// lock, not the container's. So ``takeInstance(values:isTeardown:)`` moves the value out without
    /// touching these words, and nothing writes them again before the eviction that follows it (in the
    /// same hold of the container's lock) has taken this registration out of every thread's cache.
    @exclusivity(unchecked) private var slot: (UInt, UInt) = (0, 0)

    /// The ``Kind`` (its raw value in the low bits), ``isOptional``, the ``lifetime``, whether ``factory``
    /// is a ``Rare``, ``storesInline`` and ``ownsInstances``: one byte, immutable, so it is read without
    /// the lock (a copy of the container reads it) and never shares memory with ``flags``, which resolves
    /// change under the lock.
    private let traits: UInt8
    @exclusivity(unchecked) private var flags: Flags = [.recordsEdges]
    /// The file that registered it, as ``TypeNames/fileIndex(of:)`` interned it (``TypeNames/file(at:)``).
    let fileIndex: UInt16
    /// The container's bookkeeping, in one word: the low 24 bits are one more than where the key is in
    /// ``ContainerState``'s resettable list, or 0 if it is not listed (see ``resettablePosition``); the
    /// high 8 count the instances stored (see ``stores``).
    @exclusivity(unchecked) private var bookkeeping: UInt32 = 0

    /// Counts the instances stored (wrapping): the last one's count is in its box's ``Box/stamp``, so
    /// ``holds(_:in:)`` tells the instance a box carried from a later one.
    private var stores: UInt8 {
        get { UInt8(truncatingIfNeeded: bookkeeping >> 24) }
        set { bookkeeping = bookkeeping & 0xFF_FFFF | UInt32(newValue) << 24 }
    }

    /// Where the key is in ``ContainerState``'s resettable list, or -1 if it is not listed (the container's).
    var resettablePosition: Int32 {
        get { Int32(bitPattern: bookkeeping & 0xFF_FFFF) - 1 }
        set {
            precondition(newValue < 0xFF_FFFF, """
                Injection: one container cannot cache more than 16,777,214 .scoped and .weak types at once. \
                Split the types across containers (InjectionManager.withContainer), or make the rarely used ones .transient.
                """)
            bookkeeping = bookkeeping & 0xFF00_0000 | UInt32(bitPattern: newValue + 1) & 0xFF_FFFF
        }
    }

    /// How long a built instance is kept.
    var lifetime: InjectionLifetime {
        @inline(__always) get { unsafeBitCast(traits &>> 4 & 3, to: InjectionLifetime.self) }
    }

    private struct Flags: OptionSet {
        let rawValue: UInt8
        static let recordsEdges = Flags(rawValue: 1)
        static let isInThreadCaches = Flags(rawValue: 2)
        /// ``inFlight`` is a `Build` (someone waits), not the owning `Resolution`.
        static let waited = Flags(rawValue: 4)
        /// The registration is its container's current one for its key.
        static let isRegistered = Flags(rawValue: 8)
        /// ``slot`` holds the instance.
        static let hasInstance = Flags(rawValue: 16)
        /// ``slotHoldsObject`` is known: set at the first eviction of an instance kept in ``slot``.
        static let slotLayoutKnown = Flags(rawValue: 32)
        /// The first word of ``slot`` is the instance's class instance, and its one reference.
        static let slotHoldsObject = Flags(rawValue: 64)
        /// An instance is being built: ``inFlight`` is in ``slot``'s second word.
        static let building = Flags(rawValue: 128)
    }

    private subscript(flag: Flags) -> Bool {
        get { flags.contains(flag) }
        set { if newValue { flags.insert(flag) } else { flags.remove(flag) } }
    }

    /// Whether an instance is cached (`.scoped`, `.singleton`), or held weakly (`.weak`).
    var hasInstance: Bool { self[.hasInstance] }

    /// Whether an instance is cached, or held weakly and still alive: what instances built with this
    /// registration may hold. Under the container's lock. Reading a weak reference takes a strong one,
    /// which may turn out to be the last: a live weak instance is appended to `keptAlive`, to be released
    /// after unlocking, so its `deinit` never runs under the lock.
    func hasLiveInstance(keepingAliveIn keptAlive: inout [AnyObject]) -> Bool {
        guard lifetime == .weak else { return hasInstance }
        guard let object = weakInstance?.object else { return false }
        keptAlive.append(object)
        return true
    }

    /// Whether the value type is an `Optional` (whose `nil` is never cached).
    var isOptional: Bool { traits & Self.isOptionalBit != 0 }

    /// Whether the cached value lives in ``slot`` itself rather than in a box.
    @inline(__always) private var storesInline: Bool { traits & Self.storesInlineBit != 0 }

    /// Calls `body` with the address of ``slot``, to write it: under the container's lock, when no
    /// thread's cache can lead to it (see there).
    @inline(__always)
    private func withSlot<Result>(_ body: (UnsafeMutableRawPointer) -> Result) -> Result {
        withUnsafeMutablePointer(to: &slot) { body(UnsafeMutableRawPointer($0)) }
    }

    /// Calls `body` with a copy of ``slot``'s words: reading the value from there copies the value itself
    /// (its references are the slot's). Only reads the slot, which threads may do at once.
    @inline(__always)
    private func withSlotWords<Result>(_ body: (UnsafeMutableRawPointer) -> Result) -> Result {
        var words = slot
        return withUnsafeMutablePointer(to: &words) { body(UnsafeMutableRawPointer($0)) }
    }

    /// The box in ``slot`` of a value that does not fit it.
    @inline(__always)
    private var slotBox: Unmanaged<Box> { .fromOpaque(UnsafeRawPointer(bitPattern: slot.0).unsafelyUnwrapped) }

    /// The cached instance. `Value` must be ``valueType``, and ``hasInstance`` true when the caller took
    /// its lock: the container's, or that of a thread's cache holding this registration.
    ///
    /// Read through ``slotOffset``, with no closure: the fast path runs unspecialized, where a closure
    /// returning `Value`, or a generic standard-library helper, costs a call and a metadata lookup.
    @inline(__always)
    func instance<Value>(as _: Value.Type) -> Value {
        if storesInline {
            let slot = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()) + Self.slotOffset
            return slot.assumingMemoryBound(to: Value.self).pointee
        }
        return slotBox._withUnsafeGuaranteedRef { $0.value(as: Value.self) }
    }

    /// Where ``slot`` is in a registration, from its start: measured once, on a registration made for it
    /// (a stored property of a final class has a fixed place; an `inout` access to it on a live
    /// registration would count as a write for the runtime's exclusivity and race checks).
    private static let slotOffset: Int = {
        let probe = Registration(AnyType(Void.self), 0, traits: 0, function: nil)
        let start = UnsafeRawPointer(Unmanaged.passUnretained(probe).toOpaque())
        return withUnsafeMutablePointer(to: &probe.slot) { UnsafeRawPointer($0) - start }
    }()

    /// Caches the instance `box` holds (`.scoped`, `.singleton`), which must be of ``valueType``. Under
    /// the container's lock, with nothing cached.
    func store(_ box: Box, in epoch: UInt64) {
        assert(!self[.building], "Injection: an instance stored while it is being built")
        if storesInline {
            func copy<Value>(_: Value.Type) { withSlot { _ = $0.initializeMemory(as: Value.self, to: box.value(as: Value.self)) } }
            _openExistential(valueType, do: copy)
        } else {
            slot.0 = UInt(bitPattern: Unmanaged.passRetained(box).toOpaque())
        }
        stores &+= 1
        box.stamp = Self.stamp(stores, epoch)
        flags.insert(.hasInstance)
    }

    /// The ``Box/stamp`` of the box that carried store number `count` (wrapping) in `epoch`, the container's:
    /// the epoch's low 55 bits, a bit that says "stored", and the count.
    @inline(__always)
    private static func stamp(_ count: UInt8, _ epoch: UInt64) -> UInt {
        UInt(truncatingIfNeeded: epoch) &<< 9 | 0x100 | UInt(count)
    }

    /// The cached instance in a box of its own (a copy, unless it is stored in one). Under the
    /// container's lock, while ``hasInstance``.
    func instanceBox() -> Box {
        guard storesInline else { return slotBox.takeUnretainedValue() }
        func box<Value>(_: Value.Type) -> Box { Box.make(instance(as: Value.self)) }
        return _openExistential(valueType, do: box)
    }

    /// Takes the cached instance out: its class instance if it has one, the box it was in, if any, to
    /// release once the container's lock is dropped, and whether the instance is to be told it is evicted
    /// (see ``isDisposable(_:)``); a value kept inline that is more than its class instance alone is
    /// appended to `values`, to release then too. Under that lock, while ``hasInstance``. The words of
    /// ``slot`` stay as they are (see there). `isTeardown`: the registration is being deinitialized, so
    /// such a value is released at once. (It still asks whether the instance is disposable, though nobody
    /// will tell it: skipping the question made reset + first resolves of the launch benchmark slower, side
    /// by side, for a reason callgrind does not show; see Benchmarks/README.md, run 16.)
    ///
    /// No `Any?` is returned: copying and destroying one goes through its type's witnesses, which a reset
    /// would pay for every instance it evicts.
    func takeInstance(values: inout [Any], isTeardown: Bool = false) -> (object: AnyObject?, box: Box?, isDisposable: Bool) {
        flags.remove(.hasInstance)
        guard storesInline else {
            let box = slotBox.takeRetainedValue()  // The slot's reference, which keeps the value.
            func object<Value>(_: Value.Type) -> AnyObject? { Instance.object(box.value(as: Value.self)) }
            let object = _openExistential(valueType, do: object)
            return (object, box, isDisposable(object.map { Swift.type(of: $0) }))
        }
        if self[.slotHoldsObject] {
            // The first word is the instance's one reference (a class existential's others are witness
            // tables): moved out as it is, with no copy of the value and no look-up of its type.
            let object = Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: slot.0).unsafelyUnwrapped)
            let type: AnyClass = object._withUnsafeGuaranteedRef { Swift.type(of: $0) }  // No reference count.
            return (object.takeRetainedValue(), nil, isDisposable(type))
        }
        // Moved out of a copy of the words: the slot itself is only read.
        func take<Value>(_: Value.Type) -> AnyObject? {
            let value = withSlotWords { $0.assumingMemoryBound(to: Value.self).move() }
            if !isTeardown { values.append(value) }
            return Instance.object(value)
        }
        let object = _openExistential(valueType, do: take)
        if !self[.slotLayoutKnown] {
            // Once per registration: a value of at most two words whose dynamic type is a class, with
            // that object's address in its first word, is a class instance or a class existential, but
            // for an optional, and an `any Error`, which holds some classes in a box of its own.
            self[.slotLayoutKnown] = true
            self[.slotHoldsObject] = !isOptional && valueType != (any Error).self
                && object.map { UInt(bitPattern: ObjectIdentifier($0)) == slot.0 } ?? false
        }
        return (object, nil, isDisposable(object.map { Swift.type(of: $0) }))
    }

    /// Whether the cached instance is the one `box` carried here, inline or in the box itself; `epoch` is
    /// the container's now. Under the container's lock.
    ///
    /// By the stamp of the store, not by comparing values: a copy of a value need not have its bits (a weak
    /// reference whose object died copies as `nil`). The count of stores repeats after 256, so the epoch of
    /// the store decides too: a scope stores a scoped registration's instance again only after a failed
    /// `postConstruction` evicted it, and so does any scope a singleton's, which outlives resets (its
    /// epoch does not count). A box whose instance that eviction took has its stamp cleared
    /// (``ContainerState/evict(_:from:)``), so it never matches again, however many stores later: the
    /// resolution that built it asks twice (after its failed step, and in its undo), and other threads may
    /// store and evict 256 instances in between.
    func holds(_ box: Box, in epoch: UInt64) -> Bool {
        guard hasInstance, lifetime != .weak else { return false }
        let stored = Self.stamp(stores, epoch)
        return lifetime == .singleton ? box.stamp & 0x1FF == stored & 0x1FF : box.stamp == stored
    }

    /// The shared instance for `.weak`, while anyone holds it. Under the container's lock.
    var weakInstance: WeakReference? {
        @inline(__always)
        get {
            guard lifetime == .weak, hasInstance else { return nil }
            return Unmanaged<WeakReference>.fromOpaque(UnsafeRawPointer(bitPattern: slot.0).unsafelyUnwrapped).takeUnretainedValue()
        }
        set {
            precondition(lifetime == .weak, "Injection: a weak instance for a registration that is not .weak")
            if hasInstance { Unmanaged<WeakReference>.fromOpaque(UnsafeRawPointer(bitPattern: slot.0).unsafelyUnwrapped).release() }
            slot.0 = newValue.map { UInt(bitPattern: Unmanaged.passRetained($0).toOpaque()) } ?? 0
            self[.hasInstance] = newValue != nil
        }
    }

    /// The build in progress, if any: the `Resolution` that owns it, or (`.waited`) the `Build` its first
    /// waiter made, which names that owner. See ``builder`` and ``waitable``.
    ///
    /// Kept, retained, in ``slot``'s second word, which no instance uses while one is built: a value
    /// kept inline is stored only after its build ended (``store(_:in:)``), and boxes and weak references
    /// use the first word alone. Read only while ``Flags/building``: after an eviction the words may
    /// still hold the evicted value's bits, and until that eviction reaches every thread's cache they
    /// are not written (see ``slot``), which a claim, in a later hold of the lock, no longer needs.
    private var inFlight: AnyObject? {
        @inline(__always)
        get {
            guard self[.building] else { return nil }
            return Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: slot.1).unsafelyUnwrapped).takeUnretainedValue()
        }
        @inline(__always)
        set {
            let wasBuilding = self[.building], old = wasBuilding ? slot.1 : 0
            if let newValue {
                assert(!(storesInline && hasInstance), "Injection: a build while the instance is cached")
                slot.1 = UInt(bitPattern: Unmanaged.passRetained(newValue).toOpaque())
                flags.insert(.building)
            } else if wasBuilding {
                flags.remove(.building)
            }
            if wasBuilding { Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: old).unsafelyUnwrapped).release() }
        }
    }

    /// The resolution building the instance now, if any. Setting it ends the build in progress, if any.
    var builder: Resolution? {
        @inline(__always)
        get {
            guard let inFlight else { return nil }
            return self[.waited] ? unsafeDowncast(inFlight, to: Build.self).owner : unsafeDowncast(inFlight, to: Resolution.self)
        }
        @inline(__always)
        set {
            inFlight = newValue
            self[.waited] = false
        }
    }

    /// The build in progress as its waiters see it: made by the first one (an uncontended build has none).
    var waitable: Build? {
        @inline(__always) get { self[.waited] ? inFlight.map { unsafeDowncast($0, to: Build.self) } : nil }
    }

    /// The handle of the build in progress, made for the first waiter if need be.
    func waitableBuild(in container: ObjectIdentifier) -> Build? {
        guard let inFlight else { return nil }
        if self[.waited] { return unsafeDowncast(inFlight, to: Build.self) }
        let build = Build(owner: unsafeDowncast(inFlight, to: Resolution.self), container: container, registration: self)
        self.inFlight = build
        self[.waited] = true
        return build
    }

    /// Whether the next run of the factory records what it resolves, for the graph. Edges are recorded
    /// once per registration (and by `verify()`), so a factory that runs again costs nothing extra.
    var recordsEdges: Bool {
        get { self[.recordsEdges] }
        set { self[.recordsEdges] = newValue }
    }

    /// Whether this is its container's current registration for its key: what a completing build checks,
    /// without a lookup. Set and cleared by ``ContainerState`` as it adds and removes the registration.
    var isRegistered: Bool {
        get { self[.isRegistered] }
        set { self[.isRegistered] = newValue }
    }

    /// Whether some thread's cache may hold an entry for this key, which a change must evict.
    var isInThreadCaches: Bool {
        get { self[.isInThreadCaches] }
        set { self[.isInThreadCaches] = newValue }
    }

    private static let kindMask: UInt8 = 0x3
    /// ``factory`` is a ``Rare``.
    private static let hasRareBit: UInt8 = 0x8
    private static let ownsInstancesBit: UInt8 = 0x80
    private static let storesInlineBit: UInt8 = 0x40
    /// The value type is an `Optional`.
    private static let isOptionalBit: UInt8 = 0x4

    /// Where the factory may run.
    @inline(__always)
    var kind: Kind { Kind(rawValue: traits & Self.kindMask).unsafelyUnwrapped }

    /// Whether the instances are the container's to dispose and to track after eviction: not an instance
    /// the caller supplied (`register(_:instance:)`), nor a builder's closure.
    @inline(__always) var ownsInstances: Bool { traits & Self.ownsInstancesBit != 0 }

    /// The rare parts, if any.
    private var rare: Rare? { rareReference?.takeUnretainedValue() }

    /// The ``Rare`` that ``factory`` holds (retained), when ``hasRareBit`` says it is one.
    @inline(__always)
    private var rareReference: Unmanaged<Rare>? {
        traits & Self.hasRareBit != 0 ? .fromOpaque(factory.unsafelyUnwrapped) : nil
    }

    /// The plain factory's words, wherever they are kept.
    @inline(__always)
    private var plainWords: (function: UnsafeRawPointer?, context: UnsafeRawPointer?) {
        traits & Self.hasRareBit == 0 ? (factory, nil) : rare.unsafelyUnwrapped.plain
    }

    /// The `postConstruction` closure, run on a built value's box.
    var postConstruct: PostConstruct? { rare?.postConstruct }

    /// The type of the values made: `Value` of the generic initializer.
    var valueType: Any.Type { rare?.valueType ?? type.type }

    typealias PostConstruct = @Sendable (Box) throws -> Void

    /// A registration whose plain factory is the context-free closure `function` (`nil`: none).
    private init(_ type: AnyType, _ fileIndex: UInt16, traits: UInt8, function: UnsafeRawPointer?) {
        self.type = type
        self.fileIndex = fileIndex
        self.traits = traits & ~Self.hasRareBit
        factory = function
    }

    /// The value type a ``Rare`` keeps for `type`: `nil` when it is the requested type itself.
    private static func valueType<Value>(_: Value.Type, for type: AnyType) -> Any.Type? {
        Value.self == type.type ? nil : Value.self
    }

    /// A registration with the parts `rare` holds.
    private init(_ type: AnyType, _ fileIndex: UInt16, traits: UInt8, rare: Rare) {
        self.type = type
        self.fileIndex = fileIndex
        self.traits = traits | Self.hasRareBit
        factory = UnsafeRawPointer(Unmanaged.passRetained(rare).toOpaque())
    }

    /// The ``traits`` byte of a registration of `kind` and `lifetime` whose values are `Value`s.
    @inline(__always)
    private static func traits<Value>(_ kind: Kind, _ lifetime: InjectionLifetime, _: Value.Type, ownsInstances: Bool) -> UInt8 {
        if Instance.hasUnreliableLayout(Value.self) { refuse(Value.self) }
        // A small value (two words or fewer, aligned to a word at most: a class instance, a class-bound
        // protocol's, a `String`) fits ``slot``.
        let storesInline = Box.isSmall(Value.self) && (lifetime == .scoped || lifetime == .singleton)
        // The enum's own byte, which ``lifetime`` casts back: its four cases are 0 to 3.
        let lifetimeBits = unsafeBitCast(lifetime, to: UInt8.self) &<< 4
        assert(lifetimeBits & ~0x30 == 0, "Injection: a lifetime that does not fit its two bits of the traits")
        return kind.rawValue | lifetimeBits | (ownsInstances ? ownsInstancesBit : 0) | (storesInline ? storesInlineBit : 0)
            | (_isOptional(Value.self) ? isOptionalBit : 0)
    }

    /// Traps: `type` cannot be registered (see ``Instance/hasUnreliableLayout(_:)``).
    @inline(never)
    private static func refuse(_ type: Any.Type) -> Never {
        let name = TypeNames.literal(type, named: TypeNames.written(type))
        preconditionFailure("""
            Injection: \(name) cannot be registered: it is an Error existential constrained to a class, whose size \
            Swift 6.3's compiler and runtime disagree on, so no container can store it safely. Register a protocol \
            of your own instead (protocol AppFailure: Error, AnyObject {}, then register((any AppFailure).self) \
            { ... }), or the class itself.
            """)
    }

    deinit {
        // The instance first: taking it out reads ``valueType``, which the rare parts may hold.
        if lifetime == .weak {
            weakInstance = nil
        } else if hasInstance {
            // Nothing reads the slot any more: the value goes at once, with no array to carry it.
            var values: [Any] = []
            _ = takeInstance(values: &values, isTeardown: true)
        }
        inFlight = nil
        rareReference?.release()
    }

    /// A synchronous factory that runs wherever it is resolved.
    ///
    /// Never specialized: the closure's words must have the same (generic) representation here as where
    /// ``typedFactory(as:)`` reads them.
    @_semantics("optimize.sil.specialize.generic.never")
    convenience init<Value>(
        _ type: AnyType, lifetime: InjectionLifetime, file: StaticString, factory: @escaping @Sendable () throws -> Value,
        postConstruction: (@Sendable (Value) throws -> Void)?, ownsInstances: Bool = true
    ) {
        let words = unsafeBitCast(factory, to: (UnsafeRawPointer?, UnsafeRawPointer?).self)
        let traits = Self.traits(.plain, lifetime, Value.self, ownsInstances: ownsInstances)
        if words.1 == nil && postConstruction == nil && Value.self == type.type {
            self.init(type, TypeNames.fileIndex(of: file), traits: traits, function: words.0)
        } else {
            self.init(type, TypeNames.fileIndex(of: file), traits: traits,
                      rare: Rare(words, nil, Self.postConstruct(postConstruction), Self.valueType(Value.self, for: type)))
        }
    }

    /// An `implements` alias of `primary`: a transient whose `factory` resolves `primary` (whatever is
    /// registered for it when it runs) and upcasts, and whose `asyncForm` does the same with `resolveAsync`,
    /// which runs it instead. Either way the alias follows its primary's rules.
    @_semantics("optimize.sil.specialize.generic.never")
    convenience init<Value>(
        alias type: AnyType, of primary: AnyType, file: StaticString, factory: @escaping @Sendable () throws -> Value,
        asyncForm: @escaping @Sendable () async throws -> Value
    ) {
        let words = unsafeBitCast(factory, to: (UnsafeRawPointer?, UnsafeRawPointer?).self)
        let makeAsync: MakeAsync = { Box.make(try await asyncForm()) }
        self.init(type, TypeNames.fileIndex(of: file), traits: Self.traits(.plain, .transient, Value.self, ownsInstances: true),
                  rare: Rare(words, makeAsync, nil, Self.valueType(Value.self, for: type), primary: primary))
    }

    /// A synchronous factory isolated to the main actor: runs right away on the main thread, refuses
    /// other threads with a clear error, and `resolveAsync` hops to the main actor for it.
    convenience init<Value>(
        _ type: AnyType, lifetime: InjectionLifetime, file: StaticString,
        mainActorFactory: @escaping @MainActor @Sendable () throws -> Value, postConstruction: (@Sendable (Value) throws -> Void)?
    ) {
        // Runs only after a claim saw a main-actor caller; the value stays on the main actor here.
        let make: Make = { Box.make(try MainActor.assumeIsolated { Unchecked(try mainActorFactory()) }.value) }
        self.init(type, TypeNames.fileIndex(of: file), traits: Self.traits(.mainActor, lifetime, Value.self, ownsInstances: true),
                  rare: Rare((nil, nil), make, Self.postConstruct(postConstruction), Self.valueType(Value.self, for: type)))
    }

    /// An async factory: only `resolveAsync` and `prepare` run it.
    convenience init<Value>(
        _ type: AnyType, lifetime: InjectionLifetime, file: StaticString, asyncFactory: @escaping @Sendable () async throws -> Value
    ) {
        let make: MakeAsync = { Box.make(try await asyncFactory()) }
        self.init(type, TypeNames.fileIndex(of: file), traits: Self.traits(.async, lifetime, Value.self, ownsInstances: true),
                  rare: Rare((nil, nil), make, nil, Self.valueType(Value.self, for: type)))
    }

    /// The same registration for another container (`InjectionContainer(copying:)`), with nothing built.
    func copy() -> Registration {
        guard let rare else { return Registration(type, fileIndex, traits: traits, function: factory) }
        // Immutable: the copies share it. A supplied instance's `postConstruction` steps run once for
        // the instance, whichever container runs them first (see `once`).
        return Registration(type, fileIndex, traits: traits, rare: rare)
    }

    /// The same registration with `postConstruction` run after the ones it has, with nothing built.
    func adding<Value>(postConstruction: @escaping @Sendable (Value) throws -> Void) -> Registration {
        let step = Self.postConstruct(postConstruction)!
        let added = ownsInstances ? step : Self.once(step)
        let chained: PostConstruct
        if let earlier = postConstruct {
            chained = { box in
                try earlier(box)
                try added(box)
            }
        } else {
            chained = added
        }
        return Registration(type, fileIndex, traits: traits, rare: Rare(plainWords, rare?.held, chained, rare?.valueType, primary: rare?.primary))
    }

    /// `step`, for a supplied instance (`register(_:instance:)`): one object, which the container it was
    /// registered in and every copy of it hand out. So it runs once for the instance, in whichever
    /// container resolves it first, and again only if it failed. A resolve that finds it running in
    /// another container goes on without waiting, as one on another thread of the same container would
    /// (`postConstruction` is not exclusive). The step runs outside the lock.
    private static func once(_ step: @escaping PostConstruct) -> PostConstruct {
        enum Progress { case notRun, running, done }
        let progress = LockedState(Progress.notRun)
        return { box in
            let runsHere = progress.withLock { progress in
                guard progress == .notRun else { return false }
                progress = .running
                return true
            }
            guard runsHere else { return }
            do {
                try step(box)
                progress.withLock { $0 = .done }
            } catch {
                progress.withLock { $0 = .notRun }
                throw error
            }
        }
    }

    @inline(__always)
    private static func postConstruct<Value>(_ closure: (@Sendable (Value) throws -> Void)?) -> PostConstruct? {
        guard let closure else { return nil }
        return { box in try closure(box.value(as: Value.self)) }
    }

    /// The plain factory's closure. `Value` must be ``valueType`` and the factory ``Kind/plain``.
    /// Call only where `Value` is generic, never specialized (as where the closure was stored).
    @inline(__always)
    func typedFactory<Value>(as _: Value.Type) -> @Sendable () throws -> Value {
        unsafeBitCast(plainWords, to: (@Sendable () throws -> Value).self)
    }

    @inline(__always) var isMainActor: Bool { kind == .mainActor }
    @inline(__always) var isAsync: Bool { kind == .async }

    /// Whether `resolveAsync` runs ``makeBoxAsync()``: an async factory, or an alias's async form.
    var hasAsyncForm: Bool { kind == .async || primary != nil }

    /// The type an `implements` alias resolves, or `nil` if this is no alias.
    var primary: AnyType? { rare?.primary }

    /// Runs a synchronous factory (a main-actor one only on the main actor) and boxes its value, in
    /// `thread`'s spare box if it has one when the factory returns (one that nested builds left).
    func makeBox(on thread: ThreadState) throws -> Box {
        switch kind {
        case .plain:
            func make<Value>(_: Value.Type) throws -> Box { Box.make(try typedFactory(as: Value.self)(), in: Box.isSmall(Value.self) ? thread.spareBox.take() : nil) }
            return try _openExistential(valueType, do: make)
        case .mainActor:
            return try (rare?.held as! Make)()
        case .async: preconditionFailure("Injection: an async factory was claimed by a synchronous resolve")
        }
    }

    /// Runs the async factory (or async form) and boxes its value.
    func makeBoxAsync() async throws -> Box {
        precondition(hasAsyncForm, "Injection: not an async factory")
        return try await (rare?.held as! MakeAsync)()
    }

    /// Whether the class instance of a value just taken out of this registration, of class `type`, should
    /// be told it is evicted: an instance the container built that is ``InjectionDisposable``. Asked by
    /// class, so that no reference to the instance is taken for it.
    @inline(__always)
    private func isDisposable(_ type: AnyClass?) -> Bool {
        guard ownsInstances, let type else { return false }
        return Instance.isDisposable(type)
    }
}

/// A weak reference to an instance, for `.weak` registrations and stale-instance tracking.
final class WeakReference: @unchecked Sendable {  // `object` is a weak reference: the runtime synchronises it.
    weak var object: AnyObject?
    let type: AnyType
    init(_ object: AnyObject, type: AnyType) {
        self.object = object
        self.type = type
    }
}

/// Carries a value out of `MainActor.assumeIsolated`, which requires `Sendable` results: the value is
/// made and used on the main actor, so nothing crosses an isolation boundary.
struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
