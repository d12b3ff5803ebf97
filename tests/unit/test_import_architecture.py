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


_VIEWS = ("widgets", "explorer")
_IMPORTERS = {"import_module", "__import__", "find_spec", "reload"}


def _names_a_view(node: ast.AST) -> bool:
    """A string (or the start of an f-string) naming a module of widgets/ or explorer/."""
    if isinstance(node, ast.JoinedStr) and node.values:
        node = node.values[0]
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.split(".")[0] in _VIEWS


def _view_imports(source: str) -> list[tuple[int, str]]:
    """(line, what) for each way ``source`` reaches widgets/ or explorer/: an import statement, an import
    function (importlib's, ``__import__``) given such a name, or a dotted name of one of their modules
    kept as a string (``"widgets.watch_widget"``) to be imported later. The model's slots name their
    provider ``"explorer"`` (a package, not a dotted path): that is how the views are reached."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names if a.name.split(".")[0] in _VIEWS]
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] in _VIEWS:
            found.append((node.lineno, f"from {node.module} import ..."))
        elif isinstance(node, ast.Call) and node.args and _names_a_view(node.args[0]):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in _IMPORTERS:
                found.append((node.lineno, f"{name}({ast.unparse(node.args[0])})"))
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and (node.value == "widgets" or node.value.startswith(tuple(f"{v}." for v in _VIEWS)))
              and node.value.replace(".", "").replace("_", "").isalnum()):
            found.append((node.lineno, f"the module name {node.value!r}"))
    return found


def test_compiler_never_imports_the_views_not_even_by_a_string():
    offenders = [f"{path.relative_to(ROOT)}:{line} {what}" for path in sorted((ROOT / "compiler").rglob("*.py"))
                 for line, what in _view_imports(path.read_text())]
    assert not offenders, offenders


def test_the_view_import_check_sees_each_way_in():
    source = ('import importlib\n'
              'w = importlib.import_module("widgets.watch_widget").WatchWidget\n'
              'e = __import__(f"explorer.{name}")\n'
              'LATER = "widgets.watch_widget"\n'
              'from explorer import progress\n'
              'slot = Action("the explorer widget", "explorer")\n'  # the slot mechanism: allowed
              'phase = "explorer"\n')
    assert sorted({line for line, _ in _view_imports(source)}) == [2, 3, 4, 5]


def test_import_linter_contracts_are_kept():
    lint = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    result = subprocess.run([lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    assert f"{len(contracts)} kept, 0 broken" in result.stdout
