import Foundation
@_spi(Testing) import InjectionTesting
import InjectionTesting
import Testing

// Types are named so that a person can find them: never by a runtime address. Two private types with
// the same name are told apart by the file that registers them, and a suggested fix compiles (or says
// where it can be written).

private final class Cache: Sendable {}
private protocol CacheProtocol: AnyObject, Sendable {}
extension Cache: CacheProtocol {}
private final class Unregistered: Sendable {}
/// Marks the 4,096 types of one test's chain: types no other test registers, so their names are new.
private enum NameWorkMarker {}
private final class SmallFresh: Sendable {}
private final class NeedsUnregistered: Sendable {
    init(_ dependency: Unregistered) {}
}

/// Two types that share the short name `Ledger`, told apart by the types they are nested in.
private enum Payments { final class Ledger: Sendable {} }
private enum Accounting { final class Ledger: Sendable {} }
private final class Delta: Sendable {}
/// Written `Locale` in this file, as Foundation's is everywhere else: told apart by their modules.
private struct Locale: Sendable {}

/// An internal type nested in another, as feature code often declares them (`Profile.Service`).
private enum AdvFNamespace {
    final class Service: Sendable {}
}

@Suite("Type names")
struct TypeNameTests {
    @Test("two private types with one name get readable, distinct names, with no addresses")
    func privateTypesAreToldApart() {
        let container = InjectionContainer()
        container.register(Cache.self) { Cache() }
        registerOtherFilesCache(in: container)
        let names = container.dependencyGraph().nodes.map(\.name).sorted()
        #expect(names.count == 2)
        #expect(Set(names).count == 2, "\(names)")
        for name in names {
            #expect(!name.contains("$") && !name.contains("unknown context"), "\(name)")
            #expect(name.hasPrefix("InjectionTests.Cache"), "\(name)")
        }
        #expect(names.contains { $0.contains("TypeNameTests.swift") }, "\(names)")
        #expect(names.contains { $0.contains("OtherCache.swift") }, "\(names)")
    }

    @Test("each registration keeps the file that registered it, whatever files register around it, on any thread")
    func eachRegistrationKeepsItsFile() async {
        let container = InjectionContainer()
        container.register(Cache.self, file: "App/Features/First.swift") { Cache() }.postConstruction { _ in }
        // Registrations from other files in between, on several threads at once, each file new or not.
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    for index in 0..<200 {
                        let file: StaticString = switch (task + index) % 3 {
                        case 0: "App/Even.swift"
                        case 1: "App/Odd.swift"
                        default: "App/Features/First.swift"
                        }
                        container.register(Delta.self, file: file) { Delta() }
                    }
                }
            }
        }
        registerOtherFilesCache(in: container, file: "App/Features/Second.swift")
        let expected = [
            "InjectionTests.Cache (private, registered in App/Features/First.swift)",
            "InjectionTests.Cache (private, registered in App/Features/Second.swift)",
        ]
        #expect(container.dependencyGraph().nodes.map(\.name).filter { $0.contains("Cache") }.sorted() == expected)
        let copy = InjectionContainer(copying: container)
        #expect(copy.dependencyGraph().nodes.map(\.name).filter { $0.contains("Cache") }.sorted() == expected)
    }

    @Test("each type's name is worked out once per process, however often registering again invalidates the names a failing resolve needs, and however many containers need it")
    func namesAreWorkedOutOncePerType() {
        struct Tag<Wrapped>: Sendable {}
        func register(_ type: Any.Type, in container: InjectionContainer) {
            func open<Wrapped>(_: Wrapped.Type) { container.register(Tag<Wrapped>.self) { Tag<Wrapped>() } }
            _openExistential(type, do: open)
        }
        let wrapped: [Any.Type] = [Int.self, String.self, Double.self, Bool.self, [Int].self, [String].self, Int?.self, Float.self]
        let container = InjectionContainer()
        for type in wrapped { register(type, in: container) }
        for round in 0..<40 {
            register(wrapped[round % wrapped.count], in: container)  // Registering again: the names are stale.
            let error = #expect(throws: InjectionError.self) { try container.resolve(Unregistered.self) }
            #expect(error?.kind == .notRegistered)
            #expect(error?.description.contains("Unregistered is private") == true)
        }
        #expect(InjectionProbe.typeNamesWorkedOut(in: container) == wrapped.count)
        // A copy (as `.isolatedInjection` makes for each test) and another container with the same types.
        let copy = InjectionContainer(copying: container), other = InjectionContainer()
        for type in wrapped { register(type, in: other) }
        for container in [copy, other] {
            let error = #expect(throws: InjectionError.self) { try container.resolve(Unregistered.self) }
            #expect(error?.description.contains("Unregistered is private") == true)
            #expect(container.dependencyGraph().nodes.map(\.name).contains("TypeNameTests.Tag<Int>"))
            #expect(InjectionProbe.typeNamesWorkedOut(in: container) == 0)
        }
    }

    @Test("a container working out thousands of new type names holds up no other container's messages")
    func spellingManyNamesBlocksNoOne() {
        let big = InjectionContainer()
        var registrar = ChainRegistrar(container: big, levels: 4_096, lifetime: .scoped)
        registrar.visitNumbers(digits: 12, NameWorkMarker.self)
        let bigStarted = Gate(), bigDone = Gate(), bigFinished = Counter(), started = nanosecondsNow()
        let bigTook = Collector<UInt64>()
        onThread {
            bigStarted.open()
            _ = try? big.resolve(Unregistered.self)  // Its message names types: all 4,096 are worked out.
            bigTook.append(nanosecondsNow() - started)
            bigFinished.increment()
            bigDone.open()
        }
        #expect(bigStarted.wait())
        usleep(20_000)  // Into its names.
        // Meanwhile another container's failing resolves, each after a register (so its names are worked out again).
        let small = InjectionContainer()
        var messages = 0, smallTook: UInt64 = 0
        while bigFinished.value == 0 && messages < 200 {
            small.register(SmallFresh.self) { SmallFresh() }
            #expect(throws: InjectionError.self) { try small.resolve(Unregistered.self) }
            messages += 1
            smallTook = nanosecondsNow() - started
        }
        #expect(bigDone.wait())
        #expect(InjectionProbe.typeNamesWorkedOut(in: big) >= 4_000)
        // Before, the process-wide table of names stayed locked while the big container worked out its own, and
        // the small one's messages waited for all of them.
        #expect(messages == 200 && smallTook < bigTook.values[0],
                "\(messages) messages in \(smallTook / 1_000_000) ms; the big container's names took \(bigTook.values[0] / 1_000_000) ms")
    }

    @Test("a missing private type is named without an address, and the fix says where it compiles")
    func missingPrivateType() {
        let container = InjectionContainer()
        container.register(NeedsUnregistered.self) { NeedsUnregistered(try InjectionManager.resolve(Unregistered.self)) }
        let error = #expect(throws: InjectionError.self) { try container.resolve(NeedsUnregistered.self) }
        #expect(error?.chain == ["NeedsUnregistered", "Unregistered"])
        let message = error?.description ?? ""
        #expect(!message.contains("$") && !message.contains("unknown context"), "\(message)")
        #expect(message.contains("InjectionManager.register(Unregistered.self) { ... }"), "\(message)")
        #expect(message.contains("Unregistered is private"), "\(message)")
    }

    @Test("types written alike are qualified by module in messages; nested types are named with the types they are in", .isolatedInjection)
    func ambiguousNamesAreQualified() {
        InjectionManager.register(Payments.Ledger.self) { Payments.Ledger() }
        let nested = #expect(throws: InjectionError.self) { try InjectionManager.resolve(Accounting.Ledger.self) }
        #expect(nested?.typeName == "Accounting.Ledger")
        #expect(nested?.description.contains("InjectionManager.register(Accounting.Ledger.self) { ... }") == true)
        InjectionManager.register(Locale.self) { Locale() }
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve(Foundation.Locale.self) }
        // Qualified by the module that defines it: Foundation on Apple platforms, FoundationEssentials on Linux.
        #expect(error.map { $0.typeName.hasSuffix("Foundation.Locale") || $0.typeName == "FoundationEssentials.Locale" } == true)
        let unique = #expect(throws: InjectionError.self) { try InjectionManager.resolve(Delta.self) }
        #expect(unique?.typeName == "Delta")
    }

    // Diagnostics.md: "Every message starts with `Injection:`, names the type as you write it in code (`API`,
    // not `any API` or a mangled name), ... and ends with what to change." TypeNames: "A name is the one a
    // user writes". A nested type is written `AdvFNamespace.Service`; the message says `Service`, and its fix,
    // `InjectionManager.register(Service.self) { ... }`, does not compile outside `AdvFNamespace`.
    @Test("a missing nested type is named as written in code, and the suggested register line compiles")
    func nestedTypeNamedAsWritten() {
        let container = InjectionContainer()
        do throws(InjectionError) {
            _ = try container.resolve(AdvFNamespace.Service.self)
            Issue.record("resolved an unregistered type")
        } catch {
            #expect(error.typeName == "AdvFNamespace.Service")
            #expect(error.description.contains("InjectionManager.register(AdvFNamespace.Service.self) { ... }"), "\(error)")
        }
    }

    /// Each way of registering keeps the file it was given, the replaced registration's file goes with it,
    /// and a copy of the container keeps them: a private type named like another is named with its file.
    @Test("a private type's name follows the file of its current registration, whichever way it was registered")
    func privateNameFollowsRegisteringFile() throws {
        let container = InjectionContainer()
        registerOtherFilesCache(in: container, file: "App/Other/Cache.swift")
        func names(_ container: InjectionContainer) -> [String] {
            container.dependencyGraph().nodes.map(\.name).filter { $0.contains("Cache (private") }.sorted()
        }
        func expected(_ file: String) -> [String] {
            ["InjectionTests.Cache (private, registered in App/Other/Cache.swift)",
             "InjectionTests.Cache (private, registered in \(file))"].sorted()
        }
        container.register(Cache.self, file: "App/One.swift") { Cache() }
        #expect(names(container) == expected("App/One.swift"))
        container.register(Cache.self, lifetime: .weak, file: "App/Two.swift") { Cache() }.postConstruction { _ in }
        #expect(names(container) == expected("App/Two.swift"))
        _ = try container.resolve(Cache.self)
        container.register(Cache.self, instance: Cache(), file: "App/Three.swift").postConstruction { _ in }
        #expect(names(container) == expected("App/Three.swift"))
        _ = try container.resolve(Cache.self)
        container.register(Cache.self, lifetime: .singleton, file: "App/Four.swift") { Cache() }
            .implements((any CacheProtocol).self, file: "App/Alias.swift") { $0 }
        #expect(names(container) == expected("App/Four.swift"))
        let copy = InjectionContainer(copying: container)
        #expect(names(copy) == expected("App/Four.swift"))
        copy.register(Cache.self, lifetime: .transient, file: "App/Five.swift") { Cache() }
        #expect(names(copy) == expected("App/Five.swift"))
        #expect(names(container) == expected("App/Four.swift"), "registering in the copy renamed the original's")
        container.reset()
        container.unregister(Cache.self)
        // Its twin gone, the other is named as any type is.
        let left = container.dependencyGraph().nodes.map(\.name).filter { $0.contains("Cache") }.sorted()
        #expect(left == ["Cache", "CacheProtocol"], "\(left)")
    }
}
