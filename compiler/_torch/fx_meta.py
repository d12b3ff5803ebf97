"""What FX node ``meta`` says: value shape/dtype, the user's stack, and where a node came from.

The meta keys (``val``/``example_value``, ``stack_trace``, ``from_node``) are set by Dynamo, AOT
autograd and Inductor's passes; their layout moves between releases, so everything is read defensively.
"""

from __future__ import annotations

import re
from typing import Any

import torch
import torch.fx

from .fx_print import frames_of



def value_info(node: torch.fx.Node) -> tuple[list[Any] | None, str | None]:
    """(shape, dtype) of the node's output; symbolic sizes become strings."""
    value = node.meta.get("val", node.meta.get("example_value"))
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], torch.Tensor):
        value = value[0]
    if isinstance(value, torch.Tensor):
        shape = [int(s) if isinstance(s, int) else str(s) for s in value.shape]
        return shape, str(value.dtype)
    if isinstance(value, (int, float, bool, torch.SymInt, torch.SymFloat)):
        return [], type(value).__name__
    return None, None


def user_frames(node: torch.fx.Node) -> list[tuple[str, int, str]]:
    """The (filename, lineno, function) frames of the user's code that produced ``node``."""
    return frames_of(node.meta.get("stack_trace") or "")


_ROOT = re.compile(r"^L\[['\"][^'\"]+['\"]\]\.?")
_INDEX = re.compile(r"\[['\"]?([^\]'\"]+)['\"]?\]")


def module_path(node: torch.fx.Node) -> str | None:
    """The dotted path of the innermost nn.Module the node was traced in (``layers.3.attn``; ``""`` for the
    root module), from Dynamo's ``nn_module_stack``; None when it was traced outside any module. A backward
    node has the stack of the forward node it differentiates (``fwd_nn_module_stack``, AOT autograd's copy)."""
    stack = node.meta.get("nn_module_stack") or node.meta.get("fwd_nn_module_stack") or {}
    if not stack:
        return None
    innermost = list(stack.values())[-1]
    source = innermost[0] if isinstance(innermost, (list, tuple)) and innermost else str(innermost)
    path = _INDEX.sub(r".\1", _ROOT.sub("", str(source))).strip(".")
    return ".".join(part for part in path.split(".") if part != "_modules")


def origin_sources(node: torch.fx.Node) -> list[tuple[str, int | None]]:
    """(name, id of the fx.Graph it lived in) of every ancestor recorded in ``meta['from_node']``,
    nearest first. The graph id tells a node of a subgraph from a same-named node of its parent."""
    found: list[tuple[str, int | None]] = []
    stack = list(node.meta.get("from_node") or [])
    while stack:
        source = stack.pop(0)
        name = getattr(source, "name", None)
        graph_id = getattr(source, "graph_id", None)
        key = (name, graph_id if isinstance(graph_id, int) else None)
        if isinstance(name, str) and key not in found:
            found.append(key)
        stack.extend(getattr(source, "from_node", None) or [])
    return found


def target_name(node: torch.fx.Node) -> str:
    target = node.target
    if isinstance(target, str):
        return target
    if isinstance(target, torch._ops.OpOverload):
        return f"aten.{target.__name__}" if target.namespace == "aten" else str(target)
    module = getattr(target, "__module__", None) or ""
    qual = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or repr(target)
    module = {"_operator": "operator", "torch._C._nn": "torch.nn.functional"}.get(module, module)
    return f"{module}.{qual}" if module else qual


def op_overload(node: torch.fx.Node) -> str | None:
    """The callable path of the node's ATen op overload (``torch.ops.aten.mm.default``); None for anything
    else (a Python function, a higher-order op)."""
    return f"torch.ops.{node.target}" if isinstance(node.target, torch._ops.OpOverload) else None
