"""The stubs in _native.pyi list exactly what the native module has."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import votum
import votum._native as native

STUB = Path(votum.__file__).with_name("_native.pyi")


def _stub_members() -> tuple[set[str], dict[str, set[str]]]:
    tree = ast.parse(STUB.read_text())
    top: set[str] = set()
    classes: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            top.add(node.name)
            classes[node.name] = {
                n.name for n in node.body if isinstance(n, ast.FunctionDef) and n.name != "__new__"
            }
        elif isinstance(node, ast.FunctionDef):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            top.add(node.target.id)
    return top, classes


def test_stub_matches_runtime() -> None:
    top, classes = _stub_members()
    runtime_top = {n for n in dir(native) if not n.startswith("__") or n == "__version__"}
    assert top == runtime_top
    for cls_name, methods in classes.items():
        cls = getattr(native, cls_name)
        own = {n for n, _ in inspect.getmembers(cls) if n in cls.__dict__}
        public_runtime = {n for n in own if not n.startswith("_")} | {
            n for n in own if n.startswith("__") and n in methods
        }
        missing = methods - own
        assert not missing, f"{cls_name}: stubbed but absent at runtime: {missing}"
        undocumented = {n for n in public_runtime if not n.startswith("_")} - methods
        assert not undocumented, f"{cls_name}: present at runtime but not stubbed: {undocumented}"


def test_package_reexports_everything_public() -> None:
    top, _ = _stub_members()
    public = {n for n in top if not n.startswith("_")} | {"__version__"}
    assert public <= set(votum.__all__)
