"""Sympy expressions to strings and back, without ``eval``.

``sympy.sympify`` evaluates Python, and a trace file may come from anyone: loading one must run no
code. Strings are parsed with ``ast`` and only arithmetic, names, numbers and calls of plain names are
turned into sympy objects; Inductor's own index functions (FloorDiv, ModularIndexing, ...) come back
as undefined sympy functions of the same name, which print and compare as before.
"""

from __future__ import annotations

import ast
import functools
import operator
from collections.abc import Mapping
from typing import Any, Iterator

import sympy
from sympy.printing.precedence import PRECEDENCE

from .expression_text import ExpressionError, check_text


class FloorDiv(sympy.Function):
    """``a // b``, kept unevaluated and printed as Inductor prints its own FloorDiv, so a loaded index
    expression reads (and saves again) exactly as it was captured."""

    nargs = (2,)
    precedence = 35  # below Add, as Inductor's: products print it in parentheses
    is_integer = True

    def _sympystr(self, printer: Any) -> str:
        base, divisor = (printer.parenthesize(arg, PRECEDENCE["Atom"] - 0.5) for arg in self.args)
        return f"({base}//{divisor})"


_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
    ast.FloorDiv: FloorDiv,
    ast.Mod: sympy.Mod,
}
_KNOWN_FUNCTIONS = {"Min": sympy.Min, "Max": sympy.Max, "floor": sympy.floor, "ceiling": sympy.ceiling,
                    "Abs": sympy.Abs, "Mod": sympy.Mod}


def to_text(expr: Any) -> str:
    """``str(expr)``, remembered: sympy prints each time it is asked (0.07 ms an expression), and a deep
    model repeats the same index expressions in every layer (8k of them in a 24-block training step)."""
    try:
        return _printed(expr)
    except TypeError:  # unhashable
        return str(expr)


@functools.lru_cache(maxsize=1 << 16, typed=True)  # typed: 1 and True print differently
def _printed(expr: Any) -> str:
    return str(expr)


def _parse(text: str) -> ast.AST:
    try:
        return ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ExpressionError(f"not an index expression: {text!r}") from exc


def from_text(text: str) -> sympy.Expr:
    return _convert(_parse(text), text)


class ExpressionMap(Mapping):
    """Name (or symbol) -> sympy expression, built from a trace's strings on first use.

    Loading a trace with tens of thousands of loop-IR nodes checks every string (nothing in a trace is
    ever evaluated) but builds sympy objects only for the nodes someone looks at.
    """

    def __init__(self, texts: dict[str, str], symbol_keys: bool) -> None:
        for key, value in texts.items():
            if symbol_keys:
                check_text(key)
            check_text(value)
        self.texts = texts
        self._symbol_keys = symbol_keys
        self._built: dict[Any, Any] | None = None

    def _exprs(self) -> dict[Any, Any]:
        if self._built is None:
            self._built = {(from_text(k) if self._symbol_keys else k): from_text(v) for k, v in self.texts.items()}
        return self._built

    def __getitem__(self, key: Any) -> Any:
        return self._exprs()[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._exprs())

    def __len__(self) -> int:
        return len(self.texts)

    def __repr__(self) -> str:
        return repr(self._exprs())


def _convert(node: ast.AST, text: str) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return sympy.Integer(node.value) if isinstance(node.value, int) else sympy.Float(node.value)
    if isinstance(node, ast.Name):
        if node.id in ("oo", "inf"):
            return sympy.oo
        return sympy.Symbol(node.id, integer=True)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _convert(node.operand, text)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_convert(node.left, text), _convert(node.right, text))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        args = [_convert(a, text) for a in node.args]
        known = _KNOWN_FUNCTIONS.get(node.func.id)
        return known(*args) if known else sympy.Function(node.func.id)(*args)
    raise ExpressionError(f"unsupported syntax in index expression {text!r}")
