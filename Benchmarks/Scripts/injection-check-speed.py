#!/usr/bin/env python3
"""Times `injection-check` over a generated tree of Swift files, beside `grep -rc Inject` over the same tree.

    swift build -c release --product injection-check --scratch-path .build-release
    Benchmarks/Scripts/injection-check-speed.py --tool .build-release/release/injection-check

The tree: 20 modules of 100 files, 100 lines each (2,000 files, 200,000 lines). Every file declares a protocol, its
implementation and a model that resolves two services at its defaults, and registers its own service in an
extension of InjectionManager; comments, doc comments, strings, interpolations and a multi-line string hide
resolutions the check must not see. The check must find nothing (exit 0): the benchmark checks its answer too.

Prints the best of --runs wall times of each; exits 1 if the check's best exceeds --limit seconds (issue 41: 1.0 s
in a release build on the project's 2-core Linux x86_64 machine), or if it prints anything.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HEADER = '''import Foundation
import Injection

/// Service {m}.{i}: a protocol, its implementation, and a model that injects it.
public protocol Service{m}x{i}: Sendable {{
    func value() -> Int
    func describe(_ prefix: String) -> String
}}

public final class Service{m}x{i}Impl: Service{m}x{i} {{
    private let label = "Inject(NotAType.self) \\(1 + 2) and more"
    public init() {{}}
    public func value() -> Int {{ {i} }}
    public func describe(_ prefix: String) -> String {{ "\\(prefix): \\(value())" }}
}}

/* A block comment /* nested */ with Inject(Nothing.self) inside. */
public final class Model{m}x{i} {{
    let service: any Service{m}x{i} = Inject()
    let other: any Service{m}x{j}
    /// Built with its dependencies at the defaults: `let m = Model{m}x{i}()`.
    public init(
        other: any Service{m}x{j} = Inject()
    ) {{
        self.other = other
    }}
'''

BODY = '''
    // Work {k}: let unused: Unused = Inject() in a comment.
    func work{k}(_ values: [Int]) -> Int {{
        let sum = values.reduce(0, +) / max(1, values.count)
        let text = "total \\(sum) of \\(values.count) for \\(service.describe("w{k}"))"
        return text.count + other.value()
    }}
'''

FOOTER = '''}}

extension InjectionManager {{
    static func registerService{m}x{i}() {{
        register((any Service{m}x{i}).self) {{ Service{m}x{i}Impl() }}
    }}
}}

let note{m}x{i} = """
    Inject(Hidden.self) in a multi-line string
    """
'''


def source(module, index, files, lines):
    """One file of exactly `lines` lines."""
    text = HEADER.format(m=module, i=index, j=(index + 1) % files)
    footer = FOOTER.format(m=module, i=index)
    k = 0
    while text.count('\n') + BODY.count('\n') + footer.count('\n') <= lines:
        text += BODY.format(k=k)
        k += 1
    text += footer
    padding = lines - text.count('\n')
    return text + '// padding\n' * padding


def best(command, runs):
    """The best wall time of `runs` runs, and the last run's output."""
    times, output = [], b''
    for _ in range(runs):
        start = time.perf_counter()
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        times.append(time.perf_counter() - start)
        output = result.stdout
    return min(times), times, output, result.returncode


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--tool', required=True, help='the injection-check binary (a release build)')
    parser.add_argument('--modules', type=int, default=20)
    parser.add_argument('--files', type=int, default=100, help='files per module')
    parser.add_argument('--lines', type=int, default=100, help='lines per file')
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--limit', type=float, default=1.0, help='seconds the check may take (best run)')
    args = parser.parse_args()

    tree = tempfile.mkdtemp(prefix='injection-check-speed-')
    try:
        for module in range(args.modules):
            folder = os.path.join(tree, f'Module{module}')
            os.makedirs(folder)
            for index in range(args.files):
                with open(os.path.join(folder, f'File{index}.swift'), 'w') as file:
                    file.write(source(module, index, args.files, args.lines))
        folders = [os.path.join(tree, f'Module{m}') for m in range(args.modules)]
        count = args.modules * args.files
        total = sum(open(os.path.join(f, name)).read().count('\n') for f in folders for name in os.listdir(f))

        check, check_times, output, status = best([args.tool] + folders, args.runs)
        grep, grep_times, _, _ = best(['grep', '-rc', 'Inject', tree], args.runs)
        print(f'tree: {count:,} files, {total:,} lines')
        print(f'injection-check: best {check:.3f} s  (runs: {", ".join(f"{t:.3f}" for t in check_times)})')
        print(f'grep -rc Inject: best {grep:.3f} s  (runs: {", ".join(f"{t:.3f}" for t in grep_times)})')
        print(f'ratio: {check / grep:.1f}x grep')
        if status != 0 or output:
            print(f'FAIL: the check printed something or exited {status} on a tree that registers every type:')
            print(output.decode(errors='replace')[:2000])
            return 1
        if check > args.limit:
            print(f'FAIL: the check took {check:.3f} s, over the {args.limit} s target')
            return 1
        print(f'PASS: {check:.3f} s <= {args.limit} s')
        return 0
    finally:
        shutil.rmtree(tree, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
