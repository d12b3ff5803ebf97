"""The architecture contracts of ARCHITECTURE.md, checked on the source.

import-linter (``lint-imports``, contracts in pyproject.toml) checks the layers of compiler/ and what the
model and widgets may not import. The ast walk below sees every import statement, also those written
inside functions, and fails on any import circle in compiler/ or explorer/ and on private names taken
from another explorer module.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.paths import ROOT


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> list[tuple[str, list[str], int]]:
    """(module imported, names taken from it, line) for every import statement in the file."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(alias.name, [], node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            names = [alias.name for alias in node.names]
            submodules = [f"{base}.{n}" for n in names if f"{base}.{n}" in modules]
            if submodules:
                found += [(m, [], node.lineno) for m in submodules]
            rest = [n for n in names if f"{base}.{n}" not in modules]
            if rest:
                found.append((base, rest, node.lineno))
    return found


def _graph(packages: tuple[str, ...]) -> dict[str, dict[str, int]]:
    """module -> {module of the same packages it imports: line}, every import statement counted."""
    files = [p for package in packages for p in (ROOT / package).rglob("*.py")]
    modules = {_module_name(p) for p in files}
    graph: dict[str, dict[str, int]] = {}
    for path in files:
        edges = graph.setdefault(_module_name(path), {})
        for target, _, line in _imports(path, modules):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != _module_name(path) and not _is_parent(target, _module_name(path)):
                edges.setdefault(target, line)
    return graph


def _is_parent(package: str, module: str) -> bool:
    """A module importing its own package's __init__ (``from . import x`` resolved to the package)."""
    return module.startswith(package + ".")


def _circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return circles


@pytest.mark.parametrize("package", ["compiler", "explorer"])
def test_no_import_circle(package):
    graph = _graph((package,))
    circles = _circles(graph)
    described = ["; ".join(f"{m} -> {t} (line {graph[m][t]})" for m in circle for t in graph[m] if t in circle)
                 for circle in circles]
    assert not circles, f"import circles in {package}/: {described}"


def test_the_circle_finder_sees_an_import_inside_a_function():
    graph = {"a": {"b": 1}, "b": {"c": 3}, "c": {"a": 9}, "d": {"a": 2}}
    assert _circles(graph) == [["a", "b", "c"]]
    files_graph = _graph(("compiler",))
    # compiler/model/stages.py's slot calls are the only way the model reaches the runs: no edge upwards
    assert not [t for t in files_graph["compiler.model.stages"] if not t.startswith("compiler.model")]


def test_the_model_imports_only_the_standard_library_and_sympy():
    allowed = set(sys.stdlib_module_names) | {"sympy", "compiler"}
    modules = {_module_name(p) for p in (ROOT / "compiler").rglob("*.py")}
    offenders = []
    for path in (ROOT / "compiler" / "model").glob("*.py"):
        for target, _, line in _imports(path, modules):
            top = target.split(".")[0]
            if top not in allowed or (top == "compiler" and not target.startswith("compiler.model")):
                offenders.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not offenders, offenders


def test_explorer_modules_take_no_private_names_from_each_other():
    files = list((ROOT / "explorer").glob("*.py"))
    modules = {_module_name(p) for p in files} | {_module_name(p) for p in (ROOT / "compiler").rglob("*.py")}
    taken = [f"{path.name}:{line} takes {name} from {target}" for path in files
             for target, names, line in _imports(path, modules)
             for name in names if name.startswith("_") and name != "__future__" and target != "__future__"]
    assert not taken, taken


def test_import_linter_contracts_are_kept():
    lint = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    result = subprocess.run([lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    assert f"{len(contracts)} kept, 0 broken" in result.stdout
