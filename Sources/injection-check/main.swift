import Foundation
import InjectionCheckCore

// `injection-check`: see `runInjectionCheck(_:print:)` and Docs/BuildTimeCheck.md.
if CommandLine.arguments.dropFirst().contains(where: { ["-h", "--help"].contains($0) }) {
    print(usage)
    exit(0)
}
exit(runInjectionCheck(Array(CommandLine.arguments.dropFirst())) { print($0) })
