import Foundation
import Injection
import InjectionCheckCore
import Testing

/// The scanner knows every registration spelling the library supports: what it reads in DifferentialApp.swift is
/// what running that file's registration function registers.
@Suite("Differential: the scanner against the library")
struct DifferentialTests {
    /// Every type DifferentialApp.swift declares, and how to ask the library whether it is registered.
    static let types: [(name: String, isRegistered: @Sendable () -> Bool)] = [
        ("DiffAPI", { InjectionManager.isRegistered((any DiffAPI).self) }),
        ("DiffAuth", { InjectionManager.isRegistered((any DiffAuth).self) }),
        ("DiffStore", { InjectionManager.isRegistered((any DiffStore).self) }),
        ("DiffLiveAPI", { InjectionManager.isRegistered(DiffLiveAPI.self) }),
        ("DiffSession", { InjectionManager.isRegistered(DiffSession.self) }),
        ("DiffSQLite", { InjectionManager.isRegistered(DiffSQLite.self) }),
        ("DiffClock", { InjectionManager.isRegistered(DiffClock.self) }),
        ("DiffLogger", { InjectionManager.isRegistered(DiffLogger.self) }),
        ("DiffCache", { InjectionManager.isRegistered(DiffCache.self) }),
        ("DiffSeed", { InjectionManager.isRegistered(DiffSeed.self) }),
        ("DiffExtra", { InjectionManager.isRegistered(DiffExtra.self) }),
        ("DiffConfig", { InjectionManager.isRegistered(DiffConfig.self) }),
        ("DiffDecoy", { InjectionManager.isRegistered(DiffDecoy.self) }),
        ("DiffNever", { InjectionManager.isRegistered(DiffNever.self) }),
        ("DiffLoader", { InjectionManager.isRegistered(DiffLoader.self) }),
        ("DiffRouter", { InjectionManager.isRegistered(DiffRouter.self) }),
        ("DiffScreenBuilder", { InjectionManager.isRegistered(builder: DiffScreenBuilder.self) }),
        ("DiffBadgeBuilder", { InjectionManager.isRegistered(builder: DiffBadgeBuilder.self) }),
        ("DiffPrimary", { InjectionManager.isRegistered(DiffPrimary.self) }),
    ]

    @Test("the registered types the scanner reads are those isRegistered reports after the function runs")
    func scannerMatchesTheLibrary() throws {
        let path = packageRoot + "/Tests/InjectionCheckTests/DifferentialApp.swift"
        let source = try #require(FileManager.default.contents(atPath: path))
        let file = FileFacts(tokens: tokenize([UInt8](source)), path: path, module: "InjectionCheckTests",
                             modules: ["InjectionCheckTests"])
        let scanned = Registry(files: [file], modules: ["InjectionCheckTests"]).registered

        let container = InjectionContainer()
        let registered = InjectionManager.withContainer(container) {
            let before = Self.types.filter { $0.isRegistered() }.map(\.name)
            #expect(before.isEmpty)
            registerDifferentialApp(container)
            return Set(Self.types.filter { $0.isRegistered() }.map(\.name))
        }
        #expect(registered.count >= 15)
        #expect(scanned == registered)
    }
}
