#!/usr/bin/env python3
"""Fails unless every public C header declares the same API on Apple platforms as on Linux.

For each header under the include directories given, clang (zig's, which carries Darwin's and Linux's
libc headers) dumps the AST for every target. The top-level declarations located in the header itself
(functions with their parameters, typedefs, records, variables; not inline bodies, whose `#if` branches
may differ) must be the same, in the same order, with the same types, on every target. A difference is
reported as `header:line: <declaration> on <target>, but <other> on <reference target>`.

    python3 .ci/compare-c-headers.py Sources/_InjectionPlatform/include [more include dirs]
"""
import pathlib
import re
import subprocess
import tempfile
import sys

TARGETS = ["aarch64-macos", "x86_64-macos", "x86_64-linux-gnu", "aarch64-linux-gnu", "x86_64-linux-musl"]
REFERENCE = TARGETS[0]

LOCATION = re.compile(r"(?:<|, |\s)(?:(?P<file>[^\s<>:,']+\.(?:h|c|def|inc|modulemap)):(?P<fline>\d+):\d+|line:(?P<line>\d+):\d+)")


def declarations(header: pathlib.Path, target: str, include_dirs):
    """The header's own top-level declarations on `target`: [(line, text)]."""
    command = [sys.executable, "-m", "ziglang", "cc", "-target", target, "-fsyntax-only", "-Xclang", "-ast-dump",
               "-fno-color-diagnostics", "-Wno-unused-command-line-argument", "-x", "c"]
    for directory in include_dirs:
        command += ["-I", str(directory)]
    # zig leaves an object (or a.out) in the working directory: run it in a scratch one.
    with tempfile.TemporaryDirectory() as scratch:
        dump = subprocess.run(command + [str(header)], capture_output=True, text=True, cwd=scratch)
    # zig always expects an object file, which -fsyntax-only never writes: that one error is expected.
    errors = [line for line in dump.stderr.splitlines() if "error:" in line and "failed to rename" not in line]
    if errors or not dump.stdout:
        sys.exit(f"{header}: does not compile for {target}:\n{dump.stderr}")
    current_file, current_line = None, 0
    found, in_own_top_level = [], False
    header_name = header.resolve()
    for raw in dump.stdout.splitlines():
        # Track the location the dump prints relative to: a path when the file changes, `line:` when the line does.
        first_location = None
        for match in LOCATION.finditer(raw):
            if match.group("file"):
                current_file, current_line = match.group("file"), int(match.group("fline"))
            else:
                current_line = int(match.group("line"))
            if first_location is None:
                first_location = (current_file, current_line)
        if first_location is None and "<col:" in raw:
            first_location = (current_file, current_line)  # Same line as the previous location.
        is_top_level = raw.startswith("|-") or raw.startswith("`-")
        if is_top_level:
            in_own_top_level = False
            if first_location is None or " implicit " in raw:
                continue
            file, line = first_location
            if file is None or pathlib.Path(file).resolve() != header_name:
                continue
            in_own_top_level = True
            found.append((line, normalized(raw)))
        elif in_own_top_level and re.match(r"^[|` ] [|`]-(ParmVarDecl|FieldDecl|EnumConstantDecl)", raw):
            found[-1] = (found[-1][0], found[-1][1] + " " + normalized(raw))
    return found


def normalized(line: str) -> str:
    """A dump line without tree marks, addresses, locations or desugared types."""
    line = re.sub(r"^[|` -]+", "", line)
    line = re.sub(r"0x[0-9a-f]+ ", "", line)
    line = re.sub(r"<[^<>]*(<[^<>]*>[^<>]*)*> ", "", line, count=1)  # The source range.
    line = re.sub(r"(?:col|line):\d+(?::\d+)? ", "", line)
    line = re.sub(r"[^\s']+\.h:\d+:\d+ ", "", line)
    line = re.sub(r"'([^']*)':'[^']*'", r"'\1'", line)  # Keep the type as written, drop what it desugars to.
    line = re.sub(r" (referenced|used)\b", "", line)
    return line.strip()


def main():
    include_dirs = [pathlib.Path(argument).resolve() for argument in sys.argv[1:]]
    if not include_dirs:
        sys.exit(__doc__)
    failures = 0
    for directory in include_dirs:
        for header in sorted(directory.glob("*.h")):
            reference = declarations(header, REFERENCE, include_dirs)
            if not reference:
                print(f"{header}:1: declares nothing on {REFERENCE}")
                failures += 1
            for target in TARGETS[1:]:
                other = declarations(header, target, include_dirs)
                for index in range(max(len(reference), len(other))):
                    mine = other[index] if index < len(other) else (reference[index][0], "(nothing)")
                    theirs = reference[index] if index < len(reference) else (other[index][0], "(nothing)")
                    if mine[1] != theirs[1]:
                        print(f"{header}:{mine[0]}: `{mine[1]}` on {target}, but `{theirs[1]}` on {REFERENCE}")
                        failures += 1
                        break
            print(f"{header}: {len(reference)} declarations, the same on {', '.join(TARGETS)}")
    if failures:
        sys.exit(f"\nerror: {failures} header(s) declare a different API on some platform (listed above)")


if __name__ == "__main__":
    main()
