"""Turn a notebook cell into one function that torch.compile can trace as a single region.

The cell body becomes the body of ``def <name>(<tensor inputs>)``. Names the cell reads but does not
assign come from the notebook: tensors become parameters (so they are graph inputs, not constants
baked into guards), everything else (``torch``, modules, ints) is read through the function's globals, a snapshot
of the notebook namespace. Names the cell assigns are returned in a dict and written
back only after the compiled call succeeded, so a failing cell leaves the namespace as it was.

The function is built from the cell's own AST, so every statement keeps its line number in the cell,
and the cell text is registered with ``linecache`` under a synthetic filename: the user-line
provenance of FX nodes and kernels then points at lines of the cell.
"""

from __future__ import annotations

import ast
import builtins
import linecache
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

_RESULT = "__explorer_cell_result__"


class CellError(Exception):
    """The cell cannot be turned into a function (syntax error, undefined name)."""

    def __init__(self, stage: str, message: str) -> None:
        super().__init__(message)
        self.stage = stage


@dataclass
class CellFunction:
    name: str
    source: str
    filename: str
    fn: Callable[..., dict[str, Any]]
    params: list[str]                       # free names that are tensors, in order of first use
    assigned: list[str]                     # names the cell binds, written back after a run
    reads: list[str] = field(default_factory=list)  # every free name the cell reads

    def inputs(self, namespace: Mapping[str, Any]) -> tuple[Any, ...]:
        return tuple(namespace[p] for p in self.params)


class _Names(ast.NodeVisitor):
    """Names bound and names read at the cell's top scope (nested defs/lambdas/comprehensions are their own scopes)."""

    def __init__(self) -> None:
        self.assigned: list[str] = []
        self.loaded: list[str] = []

    def _bind(self, name: str) -> None:
        if name not in self.assigned:
            self.assigned.append(name)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self._bind(node.id)
        elif node.id not in self.loaded:
            self.loaded.append(node.id)

    def _scope(self, node: ast.AST, name: str | None) -> None:
        if name:
            self._bind(name)
        # decorators, defaults and base classes run in the cell's scope; read their names
        for part in getattr(node, "decorator_list", []) + getattr(node, "bases", []):
            self.visit(part)
        args = getattr(node, "args", None)
        if isinstance(args, ast.arguments):
            for default in args.defaults + [d for d in args.kw_defaults if d is not None]:
                self.visit(default)
        # free names of the nested scope are read from the cell too (conservative: all its loads)
        inner = _Names()
        for child in ast.iter_child_nodes(node):
            inner.visit(child)
        bound = set(inner.assigned)
        if isinstance(args, ast.arguments):
            every = args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]
            bound.update(a.arg for a in every)
        for loaded in inner.loaded:
            if loaded not in bound and loaded not in self.loaded:
                self.loaded.append(loaded)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._scope(node, node.name)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._scope(node, node.name)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._scope(node, None)

    def _comprehension(self, node: ast.AST) -> None:
        self._scope(node, None)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension  # type: ignore[assignment]

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._bind((alias.asname or alias.name).split(".")[0])

    visit_ImportFrom = visit_Import  # type: ignore[assignment]

    def visit_Global(self, node: ast.Global) -> None:
        raise CellError("parse", "`global` is not supported in a %%compile cell: assign the name instead, "
                                 "it is written back to the notebook")

    visit_Nonlocal = visit_Global  # type: ignore[assignment]


def _is_tensor(value: Any) -> bool:
    import torch

    return isinstance(value, torch.Tensor)


def build(source: str, namespace: Mapping[str, Any], name: str, filename: str) -> CellFunction:
    """Parse ``source`` and build the cell function; CellError('parse' | 'names', ...) if it cannot be."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as error:
        where = f"line {error.lineno}" if error.lineno else "the cell"
        raise CellError("parse", f"SyntaxError at {where}: {error.msg}") from None
    if not tree.body:
        raise CellError("parse", "the cell is empty: nothing to compile")
    names = _Names()
    for statement in tree.body:
        names.visit(statement)
    free = [n for n in names.loaded if n not in names.assigned]
    missing = [n for n in free if n not in namespace and not hasattr(builtins, n)]
    if missing:
        raise CellError("names", f"NameError: name {missing[0]!r} is not defined in the notebook"
                        + (f" (also undefined: {', '.join(missing[1:])})" if len(missing) > 1 else ""))
    params = [n for n in free if n in namespace and _is_tensor(namespace[n])]
    assigned = [n for n in names.assigned if not n.startswith("__explorer")]

    result = ast.Return(value=ast.Dict(keys=[ast.Constant(n) for n in assigned],
                                       values=[ast.Name(id=n, ctx=ast.Load()) for n in assigned]))
    last = tree.body[-1].end_lineno or 1
    for node in ast.walk(result):
        node.lineno = node.end_lineno = last  # type: ignore[attr-defined]
        node.col_offset = node.end_col_offset = 0  # type: ignore[attr-defined]
    func = ast.FunctionDef(
        name=name,
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in params], vararg=None, kwonlyargs=[],
                           kw_defaults=[], kwarg=None, defaults=[]),
        body=tree.body + [result], decorator_list=[], returns=None, type_params=[],
        lineno=1, col_offset=0, end_lineno=last, end_col_offset=0,
    )
    module = ast.fix_missing_locations(ast.Module(body=[func], type_ignores=[]))
    code = compile(module, filename, "exec")
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    scope: dict[str, Any] = {}
    # A snapshot of the namespace as globals: Dynamo stores its own entries (__compiled_fn_*) in a
    # compiled function's globals, and those must not appear in the notebook. Recompiles for other
    # toggles then also read the values the cell first saw.
    exec(code, dict(namespace), scope)  # noqa: S102 - the user's own cell
    fn = scope[name]
    fn.__qualname__ = name
    return CellFunction(name=name, source=source, filename=filename, fn=fn, params=params, assigned=assigned,
                        reads=free)
