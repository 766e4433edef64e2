#!/usr/bin/env python3
"""Fails when modules of one crate import each other in a circle (part of `make lint`; docs/adr/0009).

For every crate under crates/, each source file is a module (`src/a.rs` and `src/a/mod.rs` are `a`, `src/a/b.rs`
is `a::b`; `lib.rs` and `main.rs` are the root). A module depends on another when it names it through `crate::`
(in a path or a `use crate::{…}` group) or through `super::`; a reference counts for the deepest module file it
reaches. A module's edges to its own ancestors or descendants are not circles (a parent declares its children,
and children use what the parent defines), nor are edges to the root. Any other strongly connected set of
modules is reported with the references that make it, and the exit status is 1.

Python's packages are checked by pylint's cyclic-import (the other half of the same lint step)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PATH = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
GROUP = re.compile(r"\bcrate::\{([^}]*)\}", re.S)
COMMENT = re.compile(r"//[^\n]*")


def modules(src: Path) -> dict[tuple[str, ...], Path]:
    out: dict[tuple[str, ...], Path] = {}
    for f in sorted(src.rglob("*.rs")):
        rel = f.relative_to(src).with_suffix("")
        parts = rel.parts
        if parts in (("lib",), ("main",)) or parts[0] == "bin":
            continue
        if parts[-1] == "mod":
            parts = parts[:-1]
        out[tuple(parts)] = f
    return out


def deepest(known: dict[tuple[str, ...], Path], path: tuple[str, ...]) -> tuple[str, ...] | None:
    for n in range(len(path), 0, -1):
        if path[:n] in known:
            return path[:n]
    return None


def related(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def edges(known: dict[tuple[str, ...], Path]) -> dict[tuple[str, ...], dict[tuple[str, ...], int]]:
    graph: dict[tuple[str, ...], dict[tuple[str, ...], int]] = {m: {} for m in known}
    for module, file in known.items():
        text = COMMENT.sub("", file.read_text())
        refs: list[tuple[str, ...]] = []
        for group in GROUP.finditer(text):
            for item in group[1].split(","):
                head = tuple(p for p in item.strip().split("::") if p and p.isidentifier())
                if head:
                    refs.append(head)
        for m in PATH.finditer(text):
            segments = tuple(m[2].split("::")[1:])
            if m[1] == "crate":
                refs.append(segments)
            else:  # super:: is the module's parent (`a/b.rs` and `a/b/mod.rs` alike: `a`)
                refs.append(module[:-1] + segments)
        for ref in refs:
            target = deepest(known, ref)
            if target is None or target == module or related(target, module):
                continue
            graph[module][target] = graph[module].get(target, 0) + 1
    return graph


def circles(graph: dict[tuple[str, ...], dict[tuple[str, ...], int]]) -> list[list[tuple[str, ...]]]:
    """Tarjan's strongly connected components of more than one module."""
    index: dict[tuple[str, ...], int] = {}
    low: dict[tuple[str, ...], int] = {}
    stack: list[tuple[str, ...]] = []
    on: set[tuple[str, ...]] = set()
    out: list[list[tuple[str, ...]]] = []
    sys.setrecursionlimit(10_000)

    def visit(v: tuple[str, ...]) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                out.append(sorted(scc))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT
    found = 0
    for src in sorted((root / "crates").glob("*/src")):
        known = modules(src)
        graph = edges(known)
        for scc in circles(graph):
            found += 1
            names = ["::".join(m) for m in scc]
            print(f"{src.parent.name}: modules in a circle: {', '.join(names)}")
            for a in scc:
                for b in scc:
                    if b in graph[a]:
                        print(f"  {'::'.join(a)} -> {'::'.join(b)} ({graph[a][b]} references)")
    if found:
        print(f"check-circles: {found} circle(s); move what both sides need into a module below them")
        return 1
    print("check-circles: no module of any crate imports another in a circle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
