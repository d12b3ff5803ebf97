"""What a Triton kernel's source says about itself: heuristics, size hints, Inductor's meta, the call.

Read with ``ast`` and ``ast.literal_eval`` per value: non-literal values (device descriptors) are skipped,
nothing is evaluated.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        if isinstance(node, ast.Dict):
            out = {}
            for key, value in zip(node.keys, node.values):
                if key is None:
                    continue
                try:
                    out[ast.literal_eval(key)] = _literal(value)
                except (ValueError, SyntaxError, TypeError):
                    continue
            return out
        return None


def decorator_meta(source: str, kernel_name: str) -> dict[str, Any]:
    """heuristic (pointwise/reduction/persistent_reduction/template...), size_hints, triton_meta, inductor_meta."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == kernel_name:
            meta: dict[str, Any] = {"arguments": [a.arg for a in node.args.args]}
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and isinstance(deco.func, ast.Attribute) and \
                        isinstance(deco.func.value, ast.Name) and deco.func.value.id == "triton_heuristics":
                    meta["heuristic"] = deco.func.attr
                    for kw in deco.keywords:
                        if kw.arg in ("size_hints", "triton_meta", "inductor_meta", "reduction_hint"):
                            meta[kw.arg] = _literal(kw.value)
            return meta
    return {}


def call_arguments(wrapper_line: str, kernel_name: str) -> list[str]:
    """The positional arguments of ``kernel.run(a, b, 1024, stream=...)`` as source text."""
    match = re.search(re.escape(kernel_name) + r"\.run\((.*)\)\s*$", wrapper_line.strip())
    if not match:
        return []
    try:
        call = ast.parse(f"f({match.group(1)})", mode="eval").body
    except SyntaxError:
        return []
    return [ast.unparse(a) for a in call.args] if isinstance(call, ast.Call) else []


def grid(arguments: list[str], values: list[str], block_sizes: dict[str, int]) -> list[int] | None:
    """Launch grid from the numel arguments and the chosen block sizes (x, y, z order)."""
    numels = dict(zip(arguments, values))
    dims = []
    for axis in ("x", "y", "z"):
        numel, block = numels.get(f"{axis}numel"), block_sizes.get(f"{axis.upper()}BLOCK")
        if numel is None:
            continue
        try:
            dims.append(math.ceil(int(numel) / int(block or 1)))
        except ValueError:
            return None
    return dims or None
