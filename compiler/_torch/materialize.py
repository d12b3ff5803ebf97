"""Chosen values stored to buffers of their own while lowering (``c.what_if(materialize=...)``).

Inductor lowers a pointwise op as a function of its inputs' loaders and leaves it unrealized: its users call
that function inside their own loop, so a chain of pointwise lines (and the pointwise work a reduction reads)
becomes one scheduler node before the scheduler fuses anything. A value is stored (``StorageBox.realize``)
only where a heuristic asks: several users of a heavy op, too many reads, an output, an extern user.

The block wraps ``GraphLowering.run_node``: right after a post-grad node ``realize`` names is lowered, its value
is realized as Inductor's own heuristics would realize it, under that node's context (``set_current_node``), so
the new operation is recorded as that node's (compiler/_torch/lowering_nodes.py). Its users, lowered later, read
the buffer instead of inlining the computation. Each node's fate is kept in the ``Outcome``: stored, or why not
(a view names its input's memory at other indices and computes nothing; a value stored already). Keeping the
stored value out of its users' kernel is the scheduler's part (compiler/_torch/fusion_edits.py).

``view_nodes`` says which post-grad nodes are views, from their ops' schemas (an op whose result aliases an
input it does not write). Feature-probed: ``available()`` is False where ``GraphLowering.run_node`` is missing.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

import torch
from torch._inductor import ir as _ir
from torch._inductor.graph import GraphLowering
from torch._inductor.virtualized import V

from . import guard, method_patch
from .fusion_edits import GraphNames

# (post-grad node names of the graph being lowered, the node just lowered) -> store its value
Realize = Callable[[frozenset[str], str], bool]

# the unrealized values StorageBox.realize can store
_LOOPS = tuple(getattr(_ir, name) for name in ("Pointwise", "Reduction", "Scan", "Sort") if hasattr(_ir, name))


def available() -> bool:
    return hasattr(GraphLowering, "run_node") and hasattr(_ir, "StorageBox") and hasattr(_ir.StorageBox, "realize")


@dataclass
class Outcome:
    """What the lowering did with each node asked, read by the caller after the compile."""

    stored: list[str] = field(default_factory=list)  # nodes whose value got a buffer of its own
    kept: dict[str, str] = field(default_factory=dict)  # node -> why its value was not stored


def _why_not_stored(result: Any) -> str | None:
    """None when ``result`` (a lowered value) is an unrealized loop that can be stored; else why not."""
    if not isinstance(result, _ir.TensorBox):
        return "its lowering made no tensor value (a tuple, a symbol or nothing)"
    box = result.data
    if not isinstance(box, _ir.StorageBox):
        return "Inductor lowered it as a view: it reads its input's memory at other indices and computes nothing"
    if not isinstance(box.data, _LOOPS):
        return "its value is stored already (Inductor realized it itself)"
    return None


def _node_context(graph: Any, node: Any) -> contextlib.ExitStack:
    """The lowering's context of ``node`` (``current_node`` on the graph and on ``V``), where this torch has it."""
    stack = contextlib.ExitStack()
    for owner in (graph, V):
        enter = getattr(owner, "set_current_node", None)
        if enter is not None:
            stack.enter_context(enter(node))
    return stack


@contextlib.contextmanager
def nodes_realized(realize: Realize) -> Iterator[Outcome]:
    """Inside the block, the value of every post-grad node ``realize`` names is stored to a buffer of its own
    right after it is lowered; the ``Outcome`` says which were and why the others were not."""
    if not available():
        raise RuntimeError("the installed torch's Inductor has no GraphLowering.run_node to store a value with")
    original = GraphLowering.run_node
    graph_names = GraphNames()
    outcome = Outcome()

    def run_node(self: Any, node: Any) -> Any:
        result = original(self, node)
        with guard.never_breaking(__name__):
            if realize(graph_names(), node.name):
                why = _why_not_stored(result)
                if why is None:
                    with _node_context(self, node):
                        result.realize()
                    outcome.stored.append(node.name)
                else:
                    outcome.kept[node.name] = why
        return result

    with method_patch.replaced(GraphLowering, "run_node", run_node):
        yield outcome


def _is_view(target: Any) -> bool:
    """Whether an op's result aliases an input it does not write (``OpOverload.is_view``, or its schema)."""
    flag = getattr(target, "is_view", None)
    if isinstance(flag, bool):
        return flag
    returns = getattr(getattr(target, "_schema", None), "returns", None) or ()
    alias = getattr(returns[0], "alias_info", None) if returns else None
    return alias is not None and not getattr(alias, "is_write", False)


def _op(name: str) -> Any:
    """The op a post-grad node's target names (``aten.permute.default``), or None."""
    namespace, _, rest = name.partition(".")
    found: Any = getattr(torch.ops, namespace, None) if namespace and rest else None
    for part in rest.split("."):
        found = getattr(found, part, None) if found is not None else None
    return found


def view_nodes(targets: Mapping[str, str]) -> frozenset[str]:
    """The post-grad nodes (name -> target, as the captured stage spells it) whose op is a view. Read from the
    ops' schemas, not from a GraphModule: a warm capture's module is traced again only when first read."""
    found = set()
    with guard.never_breaking(__name__, "view check", "views are refused when the recompile meets them"):
        found = {name for name, target in targets.items() if (op := _op(target)) is not None and _is_view(op)}
    return frozenset(found)
