import Foundation
import InjectionCheckCore
import Testing

/// The exact lines the tool prints, against the golden files in Fixtures/ (other tools script them).
@Suite("Golden files")
struct GoldenDiagnosticsTests {
    func golden(_ name: String) throws -> String {
        try String(contentsOfFile: fixtures + "/\(name).expected", encoding: .utf8)
    }

    @Test("the check prints PATH:LINE:COLUMN: error: for each unregistered resolution, and exits 1")
    func check() throws {
        let (status, lines) = run([fixtures + "/Check/App", fixtures + "/Check/Services/"])
        let printed = lines.map { $0.replacingOccurrences(of: fixtures + "/Check/", with: "") }
        #expect((printed + ["exit status \(status)", ""]).joined(separator: "\n") == (try golden("Check")))
    }

    @Test("generate writes each pair it can confirm, sorted, and a note for each it skips")
    func generate() throws {
        let output = try temporaryFolder() + "/App/InjectionRegistrations.generated.swift"
        let folders = ["App", "Features", "Services"].map { fixtures + "/Generate/" + $0 }
        let (status, lines) = run(["generate", "--output", output] + folders)
        let written = try String(contentsOfFile: output, encoding: .utf8)
        let printed = lines.map { $0.replacingOccurrences(of: fixtures + "/Generate/", with: "") }
        #expect((printed + ["exit status \(status)", written]).joined(separator: "\n") == (try golden("Generate")))

        #expect(run(["generate", "--check", "--output", output] + folders).status == 0)
        try Data((written + "// edited\n").utf8).write(to: URL(fileURLWithPath: output))
        let stale = run(["generate", "--check", "--output", output] + folders)
        #expect(stale.status == 1)
        #expect(stale.lines.last?.hasPrefix("\(output):1:1: error: Injection: this file is not what") == true)
        #expect(run(["generate", "--output", output] + folders).status == 0)
        #expect(try String(contentsOfFile: output, encoding: .utf8) == written)
    }

    @Test("a protocol with two implementations is an error, and no file is written")
    func duplicate() throws {
        let output = try temporaryFolder() + "/App/Generated.swift"
        let (status, lines) = run(["generate", "--output", output, fixtures + "/Duplicate/App"])
        #expect(status == 1)
        #expect(lines == ["\(fixtures)/Duplicate/App/Caches.swift:3:7: error: Injection: Cache has more than one "
            + "implementation: CacheImpl and MemoryCache (\(fixtures)/Duplicate/App/Caches.swift:8); keep one, or "
            + "register it by hand"])
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test("the checker finds nothing in the package's own Examples/")
    func examplesAreClean() {
        let (status, lines) = run([packageRoot + "/Examples"])
        #expect(lines == [])
        #expect(status == 0)
    }
}
