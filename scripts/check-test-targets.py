#!/usr/bin/env python3
"""Fails when a Rust test sits where `make test-rust` would not run it (part of `make lint`).

`make test-rust` skips targets with no tests, to save their builds: a library or binary marked `test = false`
in its crate's Cargo.toml, and the crates the Makefile's `cargo test` excludes (`--exclude NAME`). A test
(`#[test]`, `#[cfg(test)]`, or a crate's `tests/` folder for an excluded crate) added to one of them would
compile and never run; this check names it, so that the marking goes when the first test comes."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
TEST = re.compile(r"#\[(?:test|cfg\(test\)|tokio::test)\]")


def tests_in(paths: list[Path]) -> list[str]:
    found = []
    for path in paths:
        files = sorted(path.rglob("*.rs")) if path.is_dir() else [path]
        for f in files:
            for n, line in enumerate(f.read_text().splitlines(), 1):
                if TEST.search(line):
                    found.append(f"{f.relative_to(ROOT)}:{n}")
    return found


def excluded() -> set[str]:
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\ntest-rust:", 1)[1].split("\n\n", 1)[0]
    return set(re.findall(r"--exclude\s+(\S+)", recipe))


def main() -> int:
    problems = []
    skipped_crates = excluded()
    for manifest in sorted((ROOT / "crates").glob("*/Cargo.toml")):
        crate = manifest.parent
        doc = tomllib.loads(manifest.read_text())
        name = doc["package"]["name"]
        if name in skipped_crates:
            where = [crate / "src"] + ([crate / "tests"] if (crate / "tests").is_dir() else [])
            for hit in tests_in(where):
                problems.append(f"{hit}: a test in {name}, which `make test-rust` excludes")
            if (crate / "tests").is_dir():
                rel = crate.relative_to(ROOT)
                problems.append(f"{rel}/tests: tests of {name}, which `make test-rust` excludes")
            continue
        lib = doc.get("lib", {})
        if lib.get("test") is False:
            # the library's own files: everything under src/ but the binaries
            src = crate / "src"
            files = [f for f in sorted(src.rglob("*.rs")) if "bin" not in f.relative_to(src).parts]
            files = [f for f in files if f != src / "main.rs"]
            for hit in tests_in(files):
                problems.append(f"{hit}: a unit test in {name}'s library, marked `test = false`")
        for binary in doc.get("bin", []):
            if binary.get("test") is False:
                for hit in tests_in([crate / binary.get("path", f"src/bin/{binary['name']}.rs")]):
                    problems.append(f"{hit}: a unit test in binary {binary['name']}, marked `test = false`")
    for p in problems:
        print(f"check-test-targets: {p}", file=sys.stderr)
    if problems:
        return 1
    print("check-test-targets: every test is in a target `make test-rust` runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
