import Foundation
import Injection
import Testing

// A `resetCurrentContainer { }` block is one atomic step of its container: what it registers lands
// together with the reset when it returns, nothing of it lands if it throws (however deeply nested),
// and inside it no path (not even another container's factory) resolves from the half-done container.

private struct Abort: Error {}
private final class Marker: Sendable {
    let label: String
    init(_ label: String) { self.label = label }
}
private final class Extra: Sendable {}
private final class Bridge: Sendable {
    let marker: Marker
    init(marker: Marker) { self.marker = marker }
}
private final class Registrar: Sendable {}
private final class CachedBridge: Sendable {
    let marker: Marker
    init(marker: Marker) { self.marker = marker }
}

@Suite("Reset atomicity")
struct ResetAtomicityTests {
    @Test("a nested block that throws leaves no trace when the outer block commits")
    func throwingNestedBlockLeavesNoTrace() throws {
        let container = InjectionContainer()
        container.register(Marker.self) { Marker("old") }
        container.register(Extra.self) { Extra() }
        container.resetCurrentContainer {
            container.register(Bridge.self) { Bridge(marker: Marker("outer")) }
            #expect(throws: Abort.self) {
                try container.resetCurrentContainer {
                    container.register(Marker.self) { Marker("inner") }
                    container.unregister(Extra.self)
                    throw Abort()
                }
            }
            #expect(container.isRegistered(Extra.self), "the thrown block's unregister is gone already inside the outer block")
        }
        #expect(try container.resolve(Marker.self).label == "old")
        #expect(container.isRegistered(Extra.self))
        #expect(container.isRegistered(Bridge.self))
    }

    @Test("a block that throws discards what its own nested blocks registered, however deep")
    func throwingMiddleBlockDiscardsInner() throws {
        let container = InjectionContainer()
        container.register(Marker.self) { Marker("old") }
        container.resetCurrentContainer {
            #expect(throws: Abort.self) {
                try container.resetCurrentContainer {
                    container.resetCurrentContainer {
                        container.register(Marker.self) { Marker("innermost") }
                    }
                    throw Abort()
                }
            }
            container.register(Extra.self) { Extra() }
        }
        #expect(try container.resolve(Marker.self).label == "old")
        #expect(container.isRegistered(Extra.self))
    }

    @Test("inside A's block, a factory of container B that resolves from A is refused, and its registrations on A wait for the block")
    func otherContainersFactoryCannotBypass() throws {
        let a = InjectionContainer(), b = InjectionContainer()
        a.register(Marker.self) { Marker("old") }
        b.register(Bridge.self) { [unowned a] in Bridge(marker: try a.resolve(Marker.self)) }
        b.register(Registrar.self) { [unowned a] in
            a.register(Extra.self) { Extra() }
            return Registrar()
        }
        let seenFromOtherThread = Collector<Bool>()
        a.resetCurrentContainer {
            a.register(Marker.self) { Marker("new") }
            let error = #expect(throws: InjectionError.self) { try b.resolve(Bridge.self) }
            #expect(error?.kind == .resolvedDuringReset)
            #expect(error?.chain == ["Bridge", "Marker"])
            _ = try? b.resolve(Registrar.self)
            let checked = Gate()
            onThread {
                seenFromOtherThread.append(a.isRegistered(Extra.self))
                checked.open()
            }
            #expect(checked.wait())
        }
        #expect(seenFromOtherThread.values == [false], "another thread saw the block's registration before the block ended")
        #expect(a.isRegistered(Extra.self))
        #expect(try b.resolve(Bridge.self).marker.label == "new")
    }

    @Test("inside A's block, B's transient served from the thread cache cannot resolve from A either")
    func cachedTransientOfOtherContainerCannotBypass() throws {
        let a = InjectionContainer(), b = InjectionContainer()
        a.register(Marker.self) { Marker("old") }
        b.register(CachedBridge.self, lifetime: .transient) { [unowned a] in CachedBridge(marker: try a.resolve(Marker.self)) }
        for _ in 0..<4 { _ = try b.resolve(CachedBridge.self) }  // Now served from this thread's cache.
        a.resetCurrentContainer {
            a.register(Marker.self) { Marker("new") }
            let error = #expect(throws: InjectionError.self) { try b.resolve(CachedBridge.self) }
            #expect(error?.kind == .resolvedDuringReset)
            let viaManager = #expect(throws: InjectionError.self) {
                try InjectionManager.withContainer(b) { try InjectionManager.resolve(CachedBridge.self) }
            }
            #expect(viaManager?.kind == .resolvedDuringReset)
        }
        #expect(try b.resolve(CachedBridge.self).marker.label == "new")
    }
}
