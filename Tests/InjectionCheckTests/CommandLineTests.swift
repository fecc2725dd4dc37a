import Foundation
import InjectionCheckCore
import Testing

/// The command line as issue 41 fixes it: options, exit statuses, the stamp, the configuration, and bad input.
@Suite("The command line")
struct CommandLineTests {
    static let missing = Array("let clock: any Clock = Inject()\n".utf8)
    static let registers = Array("InjectionManager.register((any Clock).self) { SystemClock() }\n".utf8)

    @Test("usage and configuration errors exit 2", arguments: [
        ["--frobnicate", "."], ["--config"], [], ["generate", "."], ["generate", "--output", "x.swift"],
        ["--config", "/nonexistent/injection-check.json", "."],
    ])
    func usageErrors(_ arguments: [String]) {
        let (status, lines) = run(arguments)
        #expect(status == 2)
        #expect(lines.first?.hasPrefix("injection-check: error: ") == true)
    }

    @Test("a configuration with an unknown key or a wrong type is a usage error", arguments: [
        "{\"registeredElseWhere\": []}", "{\"severity\": \"fatal\"}", "{\"include\": \"Sources\"}", "[1]", "{",
    ])
    func badConfiguration(_ json: String) throws {
        let folder = try temporaryFolder(["injection-check.json": Array(json.utf8), "App/A.swift": Self.registers])
        #expect(run(["--config", folder + "/injection-check.json", folder + "/App"]).status == 2)
    }

    @Test("an error exits 1 and leaves no stamp; a clean run exits 0 and writes it")
    func statusAndStamp() throws {
        let folder = try temporaryFolder(["App/Model.swift": Self.missing])
        let stamp = folder + "/check.stamp.swift"
        let failed = run(["--stamp", stamp, folder + "/App"])
        #expect(failed.status == 1)
        #expect(failed.lines == ["\(folder)/App/Model.swift:1:24: error: Injection: Clock is resolved here, but no "
            + "scanned code registers it. Register it at launch: InjectionManager.register((any Clock).self) { ... }. "
            + "If it is registered where the check cannot see, add \"Clock\" to \"registeredElsewhere\" in "
            + "injection-check.json, or end this line with // injection-check: ignore"])
        #expect(!FileManager.default.fileExists(atPath: stamp))

        try Data(Self.registers).write(to: URL(fileURLWithPath: folder + "/App/Launch.swift"))
        #expect(run(["--stamp", stamp, folder + "/App"]) == (0, []))
        #expect(FileManager.default.fileExists(atPath: stamp))
    }

    @Test("--warnings, and severity warning in the configuration, print warning: lines and exit 0")
    func warnings() throws {
        let folder = try temporaryFolder(["App/Model.swift": Self.missing,
                                          "injection-check.json": Array("{\"severity\": \"warning\"}".utf8)])
        let flagged = run(["--warnings", folder + "/App"])
        #expect(flagged.status == 0)
        #expect(flagged.lines.count == 1 && flagged.lines[0].contains(":1:24: warning: Injection: Clock is resolved"))
        #expect(run(["--config", folder + "/injection-check.json", folder + "/App"]).status == 0)
    }

    @Test("the configuration's registeredElsewhere, include and exclude")
    func configuration() throws {
        let json = "{\"registeredElsewhere\": [\"Services.Clock\"], \"include\": [\"Modules/Services\"],"
            + "\"exclude\": [\"App/Generated/**\", \"**/*Mock.swift\"]}"
        let folder = try temporaryFolder([
            "injection-check.json": Array(json.utf8),
            "App/Model.swift": Array("let clock: any Clock = Inject()\nlet feed: any Feed = Inject()\n".utf8),
            "Modules/Services/Launch.swift": Array("InjectionManager.register((any Feed).self) { Feed() }\n".utf8),
            "App/Generated/Old.swift": Array("let old: Old = Inject()\n".utf8),
            "App/FeedMock.swift": Array("let mock: Mock = Inject()\n".utf8),
        ])
        #expect(run(["--config", folder + "/injection-check.json", folder + "/App"]) == (0, []))
        #expect(run([folder + "/App"]).lines.count == 4)
    }

    @Test("a file it cannot use, or a PATH that does not exist, is one warning line; every other file is checked")
    func badInput() throws {
        var big = Array(repeating: UInt8(ascii: "a"), count: 10_000_000)
        big.replaceSubrange(0..<Self.missing.count, with: Self.missing)
        let folder = try temporaryFolder([
            "App/Invalid.swift": [0x6C, 0x65, 0x74, 0xFF, 0xFE, 0x20],
            "App/Binary.swift": [0xCF, 0xFA, 0xED, 0xFE, 0x00, 0x00, 0x01],
            "App/OpenString.swift": Array("let s = \"never closed\nlet a: any A = Inject()\n".utf8),
            "App/OpenComment.swift": Array("/* never closed\nlet b: any B = Inject()\n".utf8),
            "App/OpenMultiLine.swift": Array("let s = \"\"\"\nlet c: any C = Inject()\n".utf8),
            "App/Big.swift": big,
            "App/.hidden/Skipped.swift": Self.missing,
            "App/.build/Skipped.swift": Self.missing,
        ])
        let (status, lines) = run([folder + "/App/", folder + "/Missing"])
        #expect(status == 1)
        #expect(lines.sorted() == [
            "\(folder)/App/Big.swift:1:24: error: Injection: Clock is resolved here, but no scanned code registers it. "
                + "Register it at launch: InjectionManager.register((any Clock).self) { ... }. If it is registered "
                + "where the check cannot see, add \"Clock\" to \"registeredElsewhere\" in injection-check.json, or "
                + "end this line with // injection-check: ignore",
            "\(folder)/App/Binary.swift: warning: Injection: this file is binary (it holds NUL bytes); it is not "
                + "scanned",
            "\(folder)/App/Invalid.swift: warning: Injection: this file is not valid UTF-8; it is not scanned",
            "\(folder)/App/OpenString.swift:2:16: error: Injection: A is resolved here, but no scanned code registers "
                + "it. Register it at launch: InjectionManager.register((any A).self) { ... }. If it is registered "
                + "where the check cannot see, add \"A\" to \"registeredElsewhere\" in injection-check.json, or end "
                + "this line with // injection-check: ignore",
            "\(folder)/Missing: warning: Injection: no such file or folder; it is not scanned",
        ])
    }
}
