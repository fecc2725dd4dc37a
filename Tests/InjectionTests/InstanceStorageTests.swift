import Foundation
@_spi(Testing) import Injection
import Testing

// A registration holds its cached instance itself (inline in two words when it fits, else in a box), and
// other threads copy it out of there under their own cache lock. These tests try to break that: readers of
// every layout racing resets, re-registrations, unregistrations and `removeAll`; containers released while
// cached everywhere; `postConstruction` failures evicting inline values.

// MARK: - Fixtures

/// Every `Cell` made and destroyed, per test: a second destruction or one never made is recorded.
private final class Ledger: @unchecked Sendable {  // Its state: under `lock`.
    private let lock = NSCondition()
    private var next = 0
    private var live: Set<Int> = []
    private(set) var made = 0
    private(set) var destroyed = 0
    private(set) var badDestroys = 0

    func born() -> Int {
        lock.withLock {
            next += 1
            made += 1
            live.insert(next)
            return next
        }
    }

    func died(_ id: Int) {
        lock.withLock {
            destroyed += 1
            if live.remove(id) == nil { badDestroys += 1 }
            if live.isEmpty { lock.broadcast() }
        }
    }

    var liveCount: Int { lock.withLock { live.count } }
    var counts: (made: Int, destroyed: Int, bad: Int) { lock.withLock { (made, destroyed, badDestroys) } }

    /// Waits up to `seconds` for every cell to be destroyed (a thread's exit releases its cache after it
    /// signalled it was done).
    func waitUntilNoneLive(seconds: Double = waitLimit) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        return lock.withLock {
            while !live.isEmpty { if !lock.wait(until: deadline) { break } }
            return live.isEmpty
        }
    }
}

private let magic = 0x5DEE_CE66_D1CE_4E5B

/// A class instance carrying a checksum of its identity, whose deinit is counted.
private final class Cell: @unchecked Sendable {
    let id: Int
    let check: Int
    let ledger: Ledger
    init(_ ledger: Ledger) {
        self.ledger = ledger
        id = ledger.born()
        check = id &* magic
    }
    var isIntact: Bool { check == id &* magic }
    deinit { ledger.died(id) }
}

/// Class-bound: its existential is two words (the instance and a witness table), stored inline.
private protocol CellService: AnyObject, Sendable { var cell: Cell { get } }
private final class CellServiceImpl: CellService {
    let cell: Cell
    init(_ cell: Cell) { self.cell = cell }
}

/// Two words, a reference in the first: stored inline.
private struct CellPair: Sendable {
    let cell: Cell
    let check: Int
    init(_ cell: Cell) {
        self.cell = cell
        check = cell.id &* 31
    }
    var isIntact: Bool { cell.isIntact && check == cell.id &* 31 }
}

/// Too big for the slot: boxed.
private struct CellLarge: Sendable {
    let cell: Cell
    let words: (Int, Int, Int, Int, Int, Int, Int, Int)
    init(_ cell: Cell) {
        self.cell = cell
        let id: Int = cell.id
        words = (id, id &+ 1, id &+ 2, id &+ 3, id &+ 4, id &+ 5, id &+ 6, id &+ 7)
    }
    var isIntact: Bool {
        let id: Int = cell.id
        let w = words
        let first: Bool = w.0 == id && w.1 == id &+ 1 && w.2 == id &+ 2 && w.3 == id &+ 3
        let second: Bool = w.4 == id &+ 4 && w.5 == id &+ 5 && w.6 == id &+ 6 && w.7 == id &+ 7
        return cell.isIntact && first && second
    }
}

/// An enum with payloads that fits two words (a reference, or a reference and an integer).
private enum CellChoice: Sendable {
    case one(Cell)
    case two(Cell, Int)
    var isIntact: Bool {
        switch self {
        case .one(let cell): cell.isIntact
        case .two(let cell, let check): cell.isIntact && check == ~cell.id
        }
    }
}

/// A heap-allocated string (longer than 15 UTF-8 bytes) carrying its own checksum.
private func checkedString(_ id: Int) -> String { "cell-\(id)-check-\(id &* 7919)-and-some-padding" }
private func isIntact(_ string: String) -> Bool {
    let parts = string.split(separator: "-")
    guard parts.count == 7, parts[0] == "cell", parts[2] == "check", let id = Int(parts[1]), let check = Int(parts[3]) else { return false }
    return check == id &* 7919 && string == checkedString(id)
}

/// A typed key whose value (a class instance) is stored inline.
private enum CellKey: InjectionKey { typealias Value = Cell }
/// A typed key whose value (two words) is stored inline, with a `postConstruction` that may fail.
private enum FlakyKey: InjectionKey { typealias Value = CellPair }

private struct Failure: Error {}

/// The layouts the readers resolve: each `register` registers one type; `check` resolves it and says
/// whether what came back is intact (`nil`: not registered right now).
private struct Layout: Sendable {
    let name: String
    let register: @Sendable (InjectionContainer, InjectionLifetime, Ledger) -> Void
    let unregister: @Sendable (InjectionContainer) -> Void
    let check: @Sendable (InjectionContainer) throws(InjectionError) -> Bool

    static func all() -> [Layout] {
        [
            Layout(name: "class",
                   register: { c, l, ledger in c.register(Cell.self, lifetime: l) { Cell(ledger) } },
                   unregister: { $0.unregister(Cell.self) },
                   check: { (c) throws(InjectionError) in try c.resolve(Cell.self).isIntact }),
            Layout(name: "existential",
                   register: { c, l, ledger in c.register((any CellService).self, lifetime: l) { CellServiceImpl(Cell(ledger)) } },
                   unregister: { $0.unregister((any CellService).self) },
                   check: { (c) throws(InjectionError) in
                       let service = try c.resolve((any CellService).self)
                       return service is CellServiceImpl && service.cell.isIntact
                   }),
            Layout(name: "string",
                   register: { c, l, ledger in c.register(String.self, lifetime: l) { checkedString(Cell(ledger).id) } },
                   unregister: { $0.unregister(String.self) },
                   check: { (c) throws(InjectionError) in isIntact(try c.resolve(String.self)) }),
            Layout(name: "pair",
                   register: { c, l, ledger in c.register(CellPair.self, lifetime: l) { CellPair(Cell(ledger)) } },
                   unregister: { $0.unregister(CellPair.self) },
                   check: { (c) throws(InjectionError) in try c.resolve(CellPair.self).isIntact }),
            Layout(name: "optional",
                   register: { c, l, ledger in c.register(Cell?.self, lifetime: l) { Cell(ledger) } },
                   unregister: { $0.unregister(Cell?.self) },
                   check: { (c) throws(InjectionError) in try c.resolve(Cell?.self)?.isIntact ?? false }),
            Layout(name: "large",
                   register: { c, l, ledger in c.register(CellLarge.self, lifetime: l) { CellLarge(Cell(ledger)) } },
                   unregister: { $0.unregister(CellLarge.self) },
                   check: { (c) throws(InjectionError) in try c.resolve(CellLarge.self).isIntact }),
            Layout(name: "enum",
                   register: { c, l, ledger in
                       c.register(CellChoice.self, lifetime: l) {
                           let cell = Cell(ledger)
                           return cell.id % 2 == 0 ? .one(cell) : .two(cell, ~cell.id)
                       }
                   },
                   unregister: { $0.unregister(CellChoice.self) },
                   check: { (c) throws(InjectionError) in try c.resolve(CellChoice.self).isIntact }),
            // Its `postConstruction` fails one time in three: the instance, seen by other threads meanwhile,
            // is evicted again (`evict(_:of:)`).
            Layout(name: "flaky",
                   register: { c, l, ledger in
                       c.register(FlakyKey.self, lifetime: l, factory: { CellPair(Cell(ledger)) }, postConstruction: { pair in
                           if pair.cell.id % 3 == 0 { throw Failure() }
                       })
                   },
                   unregister: { $0.unregister(FlakyKey.self) },
                   check: { (c) throws(InjectionError) in try c.resolve(FlakyKey.self).isIntact }),
            Layout(name: "key",
                   register: { c, l, ledger in c.register(CellKey.self, lifetime: l) { Cell(ledger) } },
                   unregister: { $0.unregister(CellKey.self) },
                   check: { (c) throws(InjectionError) in try c.resolve(CellKey.self).isIntact }),
        ]
    }
}

/// Counts what the readers saw, across threads.
private final class Tally: @unchecked Sendable {  // Under `lock`.
    private let lock = NSLock()
    private(set) var resolves = 0
    private(set) var corrupt: [String] = []
    private(set) var unexpected: [String] = []
    private(set) var changes = 0
    func add(resolves: Int, corrupt: [String], unexpected: [String]) {
        lock.withLock {
            self.resolves += resolves
            self.corrupt += corrupt
            self.unexpected += unexpected
        }
    }
    func addChanges(_ count: Int) { lock.withLock { changes += count } }
    var snapshot: (resolves: Int, corrupt: [String], unexpected: [String], changes: Int) {
        lock.withLock { (resolves, corrupt, unexpected, changes) }
    }
}

/// Runs `readers` threads calling `read` and one thread calling `change` until `seconds` pass; returns
/// once every thread is done.
/// Runs `readers` threads calling `read` while one thread calls `change` for `seconds`, and at least 60
/// times (a starved machine must not end the race before it happened); the readers stop with the changes.
private func race(readers: Int, seconds: Double, read: @escaping @Sendable () -> Void, change: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    let changing = Counter()
    for _ in 0..<readers {
        group.enter()
        let thread = Thread {
            repeat { read() } while changing.value == 0
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    group.enter()
    Thread {
        let deadline = Date(timeIntervalSinceNow: seconds)
        var step = 0
        while Date() < deadline || step < 60 {
            change(step)
            step += 1
        }
        changing.increment()
        group.leave()
    }.start()
    group.wait()
}

// MARK: - Tests

@Suite("Cached instances kept in their registration")
struct InstanceStorageTests {
    /// Readers copy cached values out of their registrations through their thread caches while one thread
    /// resets, registers again, unregisters, and removes everything. A slot written or destroyed while a
    /// cache still leads to it shows as a corrupt value, a cell destroyed twice, or a crash (and a race
    /// under ThreadSanitizer); a value never destroyed, as a live cell at the end.
    @Test("readers of every layout see intact values while the registrations change; each instance is destroyed exactly once")
    func readersRaceChanges() {
        let ledger = Ledger()
        let tally = Tally()
        let layouts = Layout.all()
        do {
            let container = InjectionContainer()
            for layout in layouts { layout.register(container, .scoped, ledger) }
            race(readers: 3, seconds: 1.5, read: {
                var resolves = 0, corrupt: [String] = [], unexpected: [String] = []
                for _ in 0..<50 {
                    for layout in layouts {
                        do throws(InjectionError) {
                            if try !layout.check(container) { corrupt.append(layout.name) }
                            resolves += 1
                        } catch where error.kind == .notRegistered || (layout.name == "flaky" && error.kind == .factoryFailed) {
                        } catch {
                            unexpected.append("\(layout.name): \(error.kind)")
                        }
                    }
                }
                tally.add(resolves: resolves, corrupt: corrupt, unexpected: unexpected)
            }, change: { step in
                var random = SeededRandom(seed: UInt64(step) &+ 1)
                let layout = random.pick(layouts)
                let lifetime: InjectionLifetime = random.chance(0.25) ? .singleton : .scoped
                switch random.int(below: 6) {
                case 0: container.resetCurrentContainer()
                case 1: layout.register(container, lifetime, ledger)
                case 2:
                    layout.unregister(container)
                    usleep(50)
                    layout.register(container, lifetime, ledger)
                case 3: container.resetCurrentContainer { layout.register(container, lifetime, ledger) }
                case 4:
                    container.removeAll()
                    usleep(50)
                    for layout in layouts { layout.register(container, .scoped, ledger) }
                default:
                    // The slow path too: a copy of the container resolves all, then goes.
                    let copy = InjectionContainer(copying: container)
                    for layout in layouts { _ = try? layout.check(copy) }
                }
                tally.addChanges(1)
                usleep(200)  // Leaves the readers time on their fast path.
            })
            let seen = tally.snapshot
            print("InlineSlotReview readers: \(seen.resolves) resolves, \(seen.changes) changes, \(ledger.counts.made) instances")
            #expect(seen.corrupt.isEmpty, "\(seen.corrupt.count) corrupt values: \(Set(seen.corrupt).sorted())")
            #expect(seen.unexpected.isEmpty, "\(seen.unexpected.count) unexpected errors: \(Set(seen.unexpected).sorted())")
            #expect(seen.resolves > 1000 && seen.changes > 50, "too little happened: \(seen)")
            container.removeAll()
        }
        #expect(ledger.waitUntilNoneLive(), "instances never destroyed: \(ledger.liveCount) of \(ledger.counts)")
        let counts = ledger.counts
        #expect(counts.bad == 0, "instances destroyed twice (or never made): \(counts.bad)")
        #expect(counts.made == counts.destroyed, "\(counts)")
    }

    /// The same race, the container going away at the end with everything still cached: its deinit
    /// drops every thread's table, and each registration its instance, once.
    @Test("a container released while every thread caches every layout destroys each instance exactly once")
    func releasedWhileCached() {
        let ledger = Ledger()
        let layouts = Layout.all()
        for _ in 0..<20 {
            let container = InjectionContainer()
            for layout in layouts { layout.register(container, .scoped, ledger) }
            let group = DispatchGroup()
            let start = DispatchSemaphore(value: 0)
            for _ in 0..<2 {
                group.enter()
                Thread {
                    start.wait()
                    for _ in 0..<20 { for layout in layouts where layout.name != "flaky" { #expect((try? layout.check(container)) == true) } }
                    group.leave()
                }.start()
            }
            start.signal(); start.signal()
            for _ in 0..<5 { container.resetCurrentContainer(); for layout in layouts { _ = try? layout.check(container) } }
            group.wait()
            // Every thread's cache and this thread's still lead to the registrations here.
        }
        #expect(ledger.waitUntilNoneLive(), "instances never destroyed: \(ledger.liveCount) of \(ledger.counts)")
        let counts = ledger.counts
        #expect(counts.bad == 0 && counts.made == counts.destroyed, "\(counts)")
    }

    /// A `postConstruction` that throws evicts the instance it was given, whether the registration keeps
    /// it inline (layouts 0-5) or in its box (6). Then the next resolve builds again.
    @Test("a failed postConstruction evicts a value of every layout, inline or boxed, which is then destroyed once", arguments: [0, 1, 2, 3, 4, 5, 6])
    func postConstructionFailureEvictsInline(layout: Int) throws {
        let ledger = Ledger()
        let container = InjectionContainer()
        let failures = SlotCounter()
        let fails: @Sendable () throws -> Void = { if failures.increment() == 1 { throw Failure() } }
        let resolve: () throws(InjectionError) -> Bool
        switch layout {
        case 0:
            container.register(Cell.self, factory: { Cell(ledger) }, postConstruction: { _ in try fails() })
            resolve = { () throws(InjectionError) in try container.resolve(Cell.self).isIntact }
        case 1:
            container.register((any CellService).self, factory: { CellServiceImpl(Cell(ledger)) }, postConstruction: { _ in try fails() })
            resolve = { () throws(InjectionError) in try container.resolve((any CellService).self).cell.isIntact }
        case 2:
            container.register(String.self, factory: { checkedString(Cell(ledger).id) }, postConstruction: { _ in try fails() })
            resolve = { () throws(InjectionError) in isIntact(try container.resolve(String.self)) }
        case 3:
            container.register(CellPair.self, factory: { CellPair(Cell(ledger)) }, postConstruction: { _ in try fails() })
            resolve = { () throws(InjectionError) in try container.resolve(CellPair.self).isIntact }
        case 4:
            container.register(Cell?.self, factory: { Cell(ledger) }, postConstruction: { _ in try fails() })
            resolve = { () throws(InjectionError) in try container.resolve(Cell?.self)?.isIntact ?? false }
        case 5:
            container.register(CellChoice.self, factory: { let cell = Cell(ledger); return .two(cell, ~cell.id) }, postConstruction: { _ in try fails() })
            resolve = { () throws(InjectionError) in try container.resolve(CellChoice.self).isIntact }
        default:
            container.register(CellLarge.self, factory: { CellLarge(Cell(ledger)) }, postConstruction: { _ in try fails() })
            resolve = { () throws(InjectionError) in try container.resolve(CellLarge.self).isIntact }
        }
        #expect(throws: InjectionError.self) { _ = try resolve() }
        #expect(ledger.counts.destroyed == 1, "the failed instance is evicted and destroyed: \(ledger.counts)")
        #expect(try resolve())
        #expect(try resolve())  // From this thread's cache.
        #expect(ledger.counts.made == 2, "built again after the failure, then cached: \(ledger.counts)")
        container.removeAll()
        let counts = ledger.counts
        #expect(counts.bad == 0 && counts.made == 2 && counts.destroyed == 2, "\(counts)")
    }

    /// An inline enum whose case leaves the second word unused, cached where a value using it was
    /// before: the eviction's comparison must not see the old value's leftover bits.
    @Test("a failed postConstruction evicts an inline enum whose case uses fewer words than the value cached before it")
    func postConstructionFailureEvictsAfterWiderValue() throws {
        let ledger = Ledger()
        let container = InjectionContainer()
        let builds = SlotCounter()
        container.register(CellChoice.self, factory: {
            let cell = Cell(ledger)
            return builds.increment() == 1 ? .two(cell, ~cell.id) : .one(cell)
        }, postConstruction: { choice in
            if case .one = choice, builds.value == 2 { throw Failure() }
        })
        #expect(try container.resolve(CellChoice.self).isIntact)  // `.two`: both words.
        container.resetCurrentContainer()
        #expect(throws: InjectionError.self) { _ = try container.resolve(CellChoice.self) }  // `.one`, evicted.
        #expect(try container.resolve(CellChoice.self).isIntact)
        #expect(builds.value == 3, "the failed instance stayed cached: the factory ran \(builds.value) times")
        container.removeAll()
        let counts = ledger.counts
        #expect(counts.bad == 0 && counts.made == 3 && counts.destroyed == 3, "\(counts)")
    }

    /// The same with a value holding a weak reference whose object is gone by the time the eviction
    /// compares: a copy of a weak reference to a deinitialized object is nil, so its bits differ from the
    /// slot's.
    @Test("a failed postConstruction evicts an inline struct whose weak reference died meanwhile")
    func postConstructionFailureEvictsWeakCellHolder() throws {
        let ledger = Ledger()
        let container = InjectionContainer()
        let holder = CellHolder()
        let builds = SlotCounter()
        container.register(WeakCellHolder.self, factory: {
            let cell = Cell(ledger)
            let isFirst = builds.increment() == 1
            if isFirst { holder.set(cell) }
            return WeakCellHolder(cell: cell, strong: isFirst ? nil : cell)
        }, postConstruction: { value in
            guard value.strong == nil else { return }
            holder.set(nil)  // The object dies: the cached value's weak reference now reads nil.
            throw Failure()
        })
        #expect(throws: InjectionError.self) { _ = try container.resolve(WeakCellHolder.self) }
        let second = try container.resolve(WeakCellHolder.self)
        // Review finding: telling whether the registration still holds the failed instance by comparing its
        // words with a fresh copy of the value missed it once the copy's weak reference had turned nil.
        #expect(builds.value == 2, "the failed instance stayed cached: the factory ran \(builds.value) time(s)")
        #expect(second.cell != nil, "resolved the failed (evicted) instance, whose object is gone")
    }

    /// A failed `postConstruction` evicts the instance it ran on from the registration that cached it, and
    /// nothing else: not the instance a newer registration of the same type cached meanwhile.
    @Test("a failed postConstruction leaves alone what a newer registration of its type cached meanwhile")
    func postConstructionFailureSparesANewerRegistration() throws {
        let ledger = Ledger()
        let container = InjectionContainer()
        let newer = SlotCounter()
        container.register(CellPair.self, factory: { CellPair(Cell(ledger)) }, postConstruction: { _ in
            // Re-registered while the first instance finishes, and resolved with the new registration,
            // which caches its own first instance; then the first one's postConstruction fails.
            container.register(CellPair.self) {
                _ = newer.increment()
                return CellPair(Cell(ledger))
            }
            // On another thread: a resolve of the type from this postConstruction would be a cycle.
            let done = Latch()
            onThread {
                _ = try? container.resolve(CellPair.self)
                done.open()
            }
            _ = done.wait()
            throw Failure()
        })
        #expect(throws: InjectionError.self) { _ = try container.resolve(CellPair.self) }
        #expect(newer.value == 1)
        let cached = try container.resolve(CellPair.self)
        #expect(newer.value == 1, "the newer registration's instance was evicted: its factory ran \(newer.value) times")
        #expect(cached.isIntact)
    }
}

// MARK: - More fixtures

private final class SlotCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() -> Int { lock.withLock { count += 1; return count } }
    var value: Int { lock.withLock { count } }
}

private final class CellHolder: @unchecked Sendable {
    private let lock = NSLock()
    private var cell: Cell?
    func set(_ cell: Cell?) {
        let old = lock.withLock { () -> Cell? in
            defer { self.cell = cell }
            return self.cell
        }
        _ = old  // Released outside the lock.
    }
}

/// Two words: a weak reference and a strong one (nil for the first build).
private struct WeakCellHolder: @unchecked Sendable {
    weak var cell: Cell?
    let strong: Cell?
}

// MARK: - A type whose size the compiler and the runtime disagree on

/// An error that is a class. As `any Error & AnyObject`, Swift 6.3's compiler and runtime disagree on its
/// size (16 bytes where the type is named, 8 in its metadata): a factory writes 16 bytes where generic code
/// made room for 8 (AddressSanitizer: dynamic-stack-buffer-overflow), and the runtime crashes taking its
/// dynamic type. The register refuses it with a message instead.
private final class ClassError: Error, @unchecked Sendable {}
private class ErrorBase {}
private final class DerivedError: ErrorBase, Error, @unchecked Sendable {}
private protocol AppFailure: Error, AnyObject {}
private final class AppFailureError: AppFailure, @unchecked Sendable {}

@Suite("Types whose size the compiler and the runtime disagree on")
struct UnreliableLayoutTests {
    // Found by an adversarial review of the eviction change (which then crashed evicting one), and by
    // LeakSanitizer's build (AddressSanitizer reported the overflow in the factory itself).

    @Test("registering any Error & AnyObject traps, naming the type and what to register instead")
    func classConstrainedError() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            InjectionContainer().register((any Error & AnyObject).self) { ClassError() }
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Injection: (any Error & AnyObject) cannot be registered"))
        #expect(output.contains("protocol AppFailure: Error, AnyObject"))
    }

    @Test("an instance of it, an optional of it, and an Error existential bound to a superclass are refused too")
    func otherForms() async {
        await #expect(processExitsWith: .failure) {
            InjectionContainer().register((any Error & AnyObject).self, instance: ClassError())
        }
        await #expect(processExitsWith: .failure) {
            InjectionContainer().register((any Error & AnyObject)?.self) { ClassError() }
        }
        await #expect(processExitsWith: .failure) {
            InjectionContainer().register((any Error & ErrorBase).self) { DerivedError() }
        }
    }

    @Test("the suggested protocol registers, resolves, resets and releases like any class-bound protocol")
    func suggestedProtocolWorks() throws {
        final class Watch { weak var object: AnyObject? }
        let container = InjectionContainer()
        container.register((any AppFailure).self) { AppFailureError() }
        container.register((any Error).self) { ClassError() }
        for _ in 1...3 {
            let watch = Watch()
            watch.object = try container.resolve((any AppFailure).self)
            #expect(try container.resolve((any Error).self) is ClassError)
            container.resetCurrentContainer()
            #expect(watch.object == nil)
        }
    }
}
