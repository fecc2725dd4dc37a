// Injection side by side with Swinject, swift-dependencies and hand-written baselines; checks issue 39's
// speed floors.
//
//   swift run -c release --package-path Benchmarks InjectionBenchmarks [--runs N] [--filter NAME] [--json PATH]
//   swift run --package-path Benchmarks InjectionBenchmarks --smoke     # CI: one short pass, any build
import Foundation

// A child process of scenario 8: `--child MODE` measures one fresh-process figure and exits.
if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "--child" {
    LaunchScenarios.runChild(CommandLine.arguments[2])
}

// `--profile MODE [N]`: runs one launch scenario N times and nothing else, for `perf record` or
// `valgrind --tool=callgrind` (modes: register, first, steady, reset, each with a `-seed` twin; and cached,
// cached-b, graph, graph-direct, in-factory: N thousand resolves or graphs of scenarios 1, 2 and 4;
// reset-none, reset-singletons: N reset + resolves of scenario 10; chain-100, chain-5000: N resolves of
// scenario 11, on a 64 MiB thread).
if CommandLine.arguments.count >= 3, CommandLine.arguments[1] == "--profile" {
    LaunchScenarios.profile(CommandLine.arguments[2], iterations: CommandLine.arguments.count > 3 ? Int(CommandLine.arguments[3])! : 20)
}

let options = Options.parse(CommandLine.arguments)
let environment = Environment.current(options: options)
#if DEBUG
if !options.smoke {
    FileHandle.standardError.write(Data("warning: debug build; use `swift run -c release ...` for real numbers\n".utf8))
}
#endif

var suite = Suite(options: options)
suite.run()

let targets = suite.report.targets()
suite.report.printTable(options: options, environment: environment)
suite.report.printTargets(targets, smoke: options.smoke)
if let path = options.jsonPath {
    do {
        try suite.report.writeJSON(to: path, options: options, environment: environment, targets: targets)
        print("\nwrote \(path)")
    } catch {
        FileHandle.standardError.write(Data("error: could not write \(path): \(error)\n".utf8))
        exit(1)
    }
}
// The sum of every checksum: printing it keeps all measured work observable.
print("\n(checksum \(sinkValue()))")
